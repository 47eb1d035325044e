extension SavePlanner {
    func relationships(of entity: String) -> [Schema.Relationship] {
        if let found = relationshipsByEntity[entity] { return found }
        let found = schema.allProperties(of: entity).compactMap { if case .relationship(let r) = $0 { r } else { nil } }
        relationshipsByEntity[entity] = found
        return found
    }

    func inverse(of r: Schema.Relationship) -> Schema.Relationship? {
        r.inverse.flatMap { schema.relationship(named: $0, in: r.destination) }
    }

    private static func target(_ value: PropertyValue?) -> PersistentIdentifier? {
        if case .toOne(let id?)? = value { return id }
        return nil
    }

    /// Inverses, from what the request stated compared with what is stored (see
    /// ``WALDataStore``, "Both sides of a relationship").
    func applyRelationshipChanges() throws {
        // One-to-one: each side's change moves the other side, in request order.
        for (id, _) in statements where !deleted.contains(id) {
            for r in relationships(of: id.entityName) where !r.isToMany && stated[id]?.contains(r.name) == true {
                guard let inv = inverse(of: r), !inv.isToMany else { continue }
                let old = Self.target(try stored(id)?.values[r.name])
                let new = Self.target(state[id]?.values[r.name])
                if old == new { continue }
                // An upsert target this moves off the value its insert matched is no match.
                for t in [old, new].compactMap({ $0 }) where upsertConstraints[t]?.contains(inv.name) == true { movedAway.insert(t) }
                if let old { try modify(old) { if Self.target($0.values[inv.name]) == id { $0.values[inv.name] = .toOne(nil) } } }
                if let new {
                    if let partner = Self.target(try current(new)?.values[inv.name]), partner != id {
                        try modify(partner) { if Self.target($0.values[r.name]) == new { $0.values[r.name] = .toOne(nil) } }
                    }
                    try modify(new) { $0.values[inv.name] = .toOne(id) }
                }
            }
        }
        // To-many statements: their changes against the stored targets. The stating object's
        // array is read whole; the other ends change link by link.
        for (id, r, targets, addsOnly) in intents where !deleted.contains(id) {
            let old = Set(try storedTargets(id, r))
            let new = addsOnly ? old.union(targets) : Set(targets)
            try materialize(id, r)
            let inv = inverse(of: r)
            if let inv, !inv.isToMany {
                // One-to-many: move the targets that do not state their own to-one.
                // An upsert target this moves off the value its insert matched is no match.
                for t in new.symmetricDifference(old) where upsertConstraints[t]?.contains(inv.name) == true && t != id { movedAway.insert(t) }
                for t in new.subtracting(old).sorted() where stated[t]?.contains(inv.name) != true {
                    try modify(t) { $0.values[inv.name] = .toOne(id) }
                }
                for t in old.subtracting(new).sorted() where stated[t]?.contains(inv.name) != true {
                    try modify(t) { if Self.target($0.values[inv.name]) == id { $0.values[inv.name] = .toOne(nil) } }
                }
            } else {
                for t in new.subtracting(old).sorted() {
                    addLink(id, r, t)
                    if let inv { addLink(t, inv, id) }
                }
                for t in old.subtracting(new).sorted() {
                    removeLink(id, r, t)
                    if let inv { removeLink(t, inv, id) }
                }
            }
        }
        // One-to-many arrays follow the final to-one values (in any order: links are sets).
        for id in Array(state.keys) where !deleted.contains(id) {
            for r in relationships(of: id.entityName) where !r.isToMany {
                guard let inv = inverse(of: r), inv.isToMany else { continue }
                let old = Self.target(try stored(id)?.values[r.name])
                let new = Self.target(state[id]?.values[r.name])
                if old == new { continue }
                if let old { removeLink(old, inv, id) }
                if let new { addLink(new, inv, id) }
            }
        }
        for id in Array(state.keys) { Self.makeCanonical(&state[id]!) }
    }

    /// Puts the to-many arrays of `snapshot` in canonical order (changing only those out of order).
    static func makeCanonical(_ snapshot: inout ObjectState) {
        for (name, value) in snapshot.values {
            guard case .toMany(let ids) = value, ids.count > 1 else { continue }
            let sorted = ids.sorted(by: RecordMapper.canonicalOrder)
            if sorted != ids { snapshot.values[name] = .toMany(sorted) }
        }
    }

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
            guard !deleted.contains(d), try stored(d) != nil else { continue }
            if let by = cascadedBy[d], updated.contains(d) {
                throw DataStoreError(
                    .conflictingChanges,
                    "\(d) is deleted by the cascade rule of \(by.owner).\(by.relationship), and the same save updates it: two statements about one object. Detach it from \(by.owner) to keep it, or drop the update.",
                    entityName: d.entityName, identifier: d, relatedIdentifiers: [by.owner])
            }
            for r in relationships(of: d.entityName) where r.deleteRule == .cascade || r.deleteRule == .deny {
                left[d, default: [:]][r.name] = try leftTargets(d, r)
            }
            deleted.insert(d)
            state[d] = nil
            linkChanges[d] = nil
            for r in relationships(of: d.entityName) where r.deleteRule == .cascade {
                for t in left[d]?[r.name] ?? [] where cascadedBy[t] == nil && !deleted.contains(t) { cascadedBy[t] = (d, r.name) }
                queue.append(contentsOf: (left[d]?[r.name] ?? []).reversed())
            }
        }
        for d in deleted.sorted() {
            for r in relationships(of: d.entityName) where r.deleteRule == .deny {
                // An inserted target refers to `d` itself, which checkReferencesToDeleted refuses.
                if let kept = try (left[d]?[r.name] ?? []).first(where: { try !deleted.contains($0) && stored($0) != nil }) {
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
    /// included): such a save says both that the object goes and that it is referred to.
    func checkReferencesToDeleted() throws {
        guard !deleted.isEmpty else { return }
        for (id, statement) in statements {
            for (name, value) in statement.values.sorted(by: { $0.key < $1.key }) {
                guard let gone = value.referencedIdentifiers.first(where: deleted.contains) else { continue }
                let referrer = reported(id)
                throw DataStoreError(
                    .danglingReference,
                    "\(id.entityName).\(name) of \(referrer) refers to \(gone), which the same save deletes (directly or by a cascade rule); remove the reference, or keep the object.",
                    entityName: id.entityName, propertyName: name, identifier: referrer, relatedIdentifiers: [gone])
            }
        }
    }

    /// Every remaining object that refers to a deleted one loses the reference: to-many arrays
    /// always (their join records and back references go with the deleted object, or link by
    /// link), to-one references unless the deleted side's rule is noAction (then the reference
    /// dangles).
    func sweepReferencesToDeleted() throws {
        guard !deleted.isEmpty else { return }
        for d in deleted.sorted() {
            let snapshot = try storedWhole(d)!
            // The other ends of the deleted object's own relationships.
            for r in relationships(of: d.entityName) {
                guard let inv = inverse(of: r) else { continue }
                for t in snapshot.values[r.name]?.referencedIdentifiers ?? [] where !deleted.contains(t) {
                    // A to-one end is nullified (or left dangling) by the rules below.
                    if inv.isToMany { removeLink(t, inv, d) } else { try modify(t) { _ in } }
                }
            }
            // To-one references without an inverse, and to-many ones without an inverse.
            for (_, source) in try mapper.incomingReferences(to: d) where !deleted.contains(source) { try modify(source) { _ in } }
            for (relationship, source) in try mapper.incomingJoinSources(to: d) where !deleted.contains(source) {
                if let r = schema.relationship(named: relationship, in: source.entityName) { removeLink(source, r, d) }
            }
        }
        for id in state.keys.sorted() where !deleted.contains(id) {
            var s = state[id]!
            for r in relationships(of: id.entityName) {
                guard let value = s.values[r.name] else { continue }
                if r.isToMany {
                    let ids = value.referencedIdentifiers
                    if ids.contains(where: deleted.contains) { s.values[r.name] = .toMany(ids.filter { !deleted.contains($0) }) }
                } else if let t = Self.target(value), deleted.contains(t) {
                    let rule = r.inverse.flatMap { schema.relationship(named: $0, in: t.entityName) }?.deleteRule ?? .nullify
                    if rule != .noAction { s.values[r.name] = .toOne(nil) }
                }
            }
            state[id] = s
        }
        // Links to deleted objects added earlier in the save are void.
        for (id, changes) in linkChanges {
            for (name, change) in changes where change.added.contains(where: deleted.contains) {
                linkChanges[id]?[name]?.added = change.added.filter { !deleted.contains($0) }
            }
        }
    }
}
