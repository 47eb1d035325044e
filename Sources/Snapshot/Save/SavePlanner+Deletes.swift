import Foundation

extension SavePlanner {
    /// The deleted objects and, through cascade rules, theirs; refused by a deny rule whose
    /// relationship still has a stored target that stays. Both read each relationship as the
    /// request leaves it (call after ``applyRelationshipChanges()``): a child the request
    /// detached or moved to another owner is neither cascaded nor counted.
    /// An object in `updated` that a cascade reaches is refused (`conflictingChanges`).
    func applyDeletes(_ ids: [PersistentIdentifier], updated: Set<PersistentIdentifier> = []) throws {
        var left: [PersistentIdentifier: [String: [PersistentIdentifier]]] = [:]
        var cascadedBy: [PersistentIdentifier: (owner: PersistentIdentifier, relationship: String)] = [:]
        var queue: [PersistentIdentifier] = ids.reversed()
        while let d = queue.popLast() {
            guard !attempt.deleted.contains(d), try stored(d) != nil else { continue }
            if let by = cascadedBy[d], updated.contains(d) {
                throw DataStoreError(
                    .conflictingChanges,
                    "\(d) is deleted by the cascade rule of \(by.owner).\(by.relationship), and the same save updates it: two statements about one object. Detach it from \(by.owner) to keep it, or drop the update.",
                    entityName: d.entityName, identifier: d, relatedIdentifiers: [by.owner])
            }
            for r in relationships(of: d.entityName) where r.deleteRule == .cascade || r.deleteRule == .deny {
                left[d, default: [:]][r.name] = try leftTargets(d, r)
            }
            attempt.deleted.insert(d)
            attempt.state[d] = nil
            attempt.linkChanges[d] = nil
            for r in relationships(of: d.entityName) where r.deleteRule == .cascade {
                for t in left[d]?[r.name] ?? [] where cascadedBy[t] == nil && !attempt.deleted.contains(t) { cascadedBy[t] = (d, r.name) }
                queue.append(contentsOf: (left[d]?[r.name] ?? []).reversed())
            }
        }
        for d in attempt.deleted.sorted() {
            for r in relationships(of: d.entityName) where r.deleteRule == .deny {
                // An inserted target refers to `d` itself, which checkReferencesToDeleted refuses.
                if let kept = try (left[d]?[r.name] ?? []).first(where: { try !attempt.deleted.contains($0) && stored($0) != nil }) {
                    throw DataStoreError(
                        .deleteDenied, "\(d) cannot be deleted: its \(r.name) still holds \(kept) and the rule is deny; delete or detach that first.",
                        entityName: d.entityName, propertyName: r.name, identifier: d, relatedIdentifiers: [kept])
                }
            }
        }
    }

    /// The targets of `relationship` of `id` as the save leaves them so far.
    private func leftTargets(_ id: PersistentIdentifier, _ relationship: Schema.Relationship) throws -> [PersistentIdentifier] {
        if relationship.isToMany { return try targets(id, relationship) }
        return Self.target(try current(id)?.values[relationship.name]).map { [$0] } ?? []
    }

    /// No insert or update refers to an object the save deletes (a delete rule's cascade
    /// included): such a save says both that the object goes and that it is referred to. The
    /// error names the first such property in name order.
    func checkReferencesToDeleted() throws {
        guard !attempt.deleted.isEmpty else { return }
        for statement in attempt.statements {
            var first: (name: String, gone: PersistentIdentifier)?
            for (i, said) in statement.said.enumerated() {
                // A new object (named by its temporary identifier) a cascade deletes loses the
                // reference in the sweep instead.
                guard let said, let gone = said.referencedIdentifiers.first(where: { attempt.deleted.contains($0) && !attempt.inserted.contains($0) })
                else { continue }
                let name = statement.rules[i].name
                if first == nil || name < first!.name { first = (name, gone) }
            }
            guard let (name, gone) = first else { continue }
            let id = statement.id
            let referrer = reported(id)
            throw DataStoreError(
                .danglingReference,
                "\(id.entityName).\(name) of \(referrer) refers to \(gone), which the same save deletes (directly or by a cascade rule); remove the reference, or keep the object.",
                entityName: id.entityName, propertyName: name, identifier: referrer, relatedIdentifiers: [gone])
        }
    }

    /// Every remaining object that refers to a deleted one loses the reference: to-many arrays
    /// always (their join records and back references go with the deleted object, or link by
    /// link), to-one references unless the deleted side's rule is noAction (then the reference
    /// dangles).
    func sweepReferencesToDeleted() throws {
        guard !attempt.deleted.isEmpty else { return }
        for d in attempt.deleted.sorted() {
            let snapshot = try storedWhole(d)!
            // The other ends of the deleted object's own relationships.
            for r in relationships(of: d.entityName) {
                guard let inv = inverse(of: r) else { continue }
                for t in snapshot.values[r.name]?.referencedIdentifiers ?? [] where !attempt.deleted.contains(t) {
                    // A to-one end is nullified (or left dangling) by the rules below.
                    if inv.isToMany { removeLink(t, inv, d) } else { try modify(t) { _ in } }
                }
            }
            // To-one references without an inverse, and to-many ones without an inverse.
            for (_, source) in try mapper.incomingReferences(to: d) where !attempt.deleted.contains(source) { try modify(source) { _ in } }
            for (relationship, source) in try mapper.incomingJoinSources(to: d) where !attempt.deleted.contains(source) {
                if let r = schema.relationship(named: relationship, in: source.entityName) { removeLink(source, r, d) }
            }
        }
        for id in attempt.state.keys.sorted() where !attempt.deleted.contains(id) {
            var s = attempt.state[id]!
            for r in relationships(of: id.entityName) {
                guard let value = s.values[r.name] else { continue }
                if r.isToMany {
                    let ids = value.referencedIdentifiers
                    if ids.contains(where: attempt.deleted.contains) { s.values[r.name] = .toMany(ids.filter { !attempt.deleted.contains($0) }) }
                } else if let t = Self.target(value), attempt.deleted.contains(t) {
                    let rule = r.inverse.flatMap { schema.relationship(named: $0, in: t.entityName) }?.deleteRule ?? .nullify
                    if rule != .noAction { s.values[r.name] = .toOne(nil) }
                }
            }
            attempt.state[id] = s
        }
        // Links to deleted objects added earlier in the save are void.
        for (id, changes) in attempt.linkChanges {
            for (name, change) in changes where change.added.contains(where: attempt.deleted.contains) {
                attempt.linkChanges[id]?[name]?.added = change.added.filter { !attempt.deleted.contains($0) }
            }
        }
    }
}
