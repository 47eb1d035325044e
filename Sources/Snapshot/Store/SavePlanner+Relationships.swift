extension SavePlanner {
    func relationships(of entity: String) -> [Schema.Relationship] {
        schema.allProperties(of: entity).compactMap { if case .relationship(let r) = $0 { r } else { nil } }
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
                if let old { try modify(old) { if Self.target($0.values[inv.name]) == id { $0.values[inv.name] = .toOne(nil) } } }
                if let new {
                    if let partner = Self.target(try current(new)?.values[inv.name]), partner != id {
                        try modify(partner) { if Self.target($0.values[r.name]) == new { $0.values[r.name] = .toOne(nil) } }
                    }
                    try modify(new) { $0.values[inv.name] = .toOne(id) }
                }
            }
        }
        // To-many statements: their changes against the stored targets.
        for (id, r, targets) in intents where !deleted.contains(id) {
            let old = Set(try stored(id)?.values[r.name]?.referencedIdentifiers ?? [])
            let new = Set(targets)
            let inv = inverse(of: r)
            if let inv, !inv.isToMany {
                // One-to-many: move the targets that do not state their own to-one.
                for t in new.subtracting(old).sorted() where stated[t]?.contains(inv.name) != true {
                    try modify(t) { $0.values[inv.name] = .toOne(id) }
                }
                for t in old.subtracting(new).sorted() where stated[t]?.contains(inv.name) != true {
                    try modify(t) { if Self.target($0.values[inv.name]) == id { $0.values[inv.name] = .toOne(nil) } }
                }
            } else {
                for t in new.subtracting(old).sorted() { try link(id, r.name, t, inv?.name) }
                for t in old.subtracting(new).sorted() { try unlink(id, r.name, t, inv?.name) }
            }
        }
        // One-to-many arrays follow the final to-one values.
        for id in state.keys.sorted() where !deleted.contains(id) {
            for r in relationships(of: id.entityName) where !r.isToMany {
                guard let inv = inverse(of: r), inv.isToMany else { continue }
                let old = Self.target(try stored(id)?.values[r.name])
                let new = Self.target(state[id]?.values[r.name])
                if old == new { continue }
                if let old { try modify(old) { $0.values[inv.name] = .toMany(($0.values[inv.name]?.referencedIdentifiers ?? []).filter { $0 != id }) } }
                if let new { try modify(new) { Self.append(id, to: inv.name, in: &$0) } }
            }
        }
        for id in Array(state.keys) { state[id] = Self.canonical(state[id]!) }
    }

    private static func append(_ id: PersistentIdentifier, to name: String, in snapshot: inout DefaultSnapshot) {
        let ids = snapshot.values[name]?.referencedIdentifiers ?? []
        if !ids.contains(id) { snapshot.values[name] = .toMany(ids + [id]) }
    }

    private func link(_ a: PersistentIdentifier, _ r: String, _ b: PersistentIdentifier, _ inverse: String?) throws {
        try modify(a) { Self.append(b, to: r, in: &$0) }
        if let inverse { try modify(b) { Self.append(a, to: inverse, in: &$0) } }
    }

    private func unlink(_ a: PersistentIdentifier, _ r: String, _ b: PersistentIdentifier, _ inverse: String?) throws {
        try modify(a) { $0.values[r] = .toMany(($0.values[r]?.referencedIdentifiers ?? []).filter { $0 != b }) }
        if let inverse { try modify(b) { $0.values[inverse] = .toMany(($0.values[inverse]?.referencedIdentifiers ?? []).filter { $0 != a }) } }
    }

    /// `snapshot` with its to-many arrays in canonical order.
    static func canonical(_ snapshot: DefaultSnapshot) -> DefaultSnapshot {
        var s = snapshot
        for (name, value) in s.values { if case .toMany(let ids) = value { s.values[name] = .toMany(ids.sorted(by: RecordMapper.canonicalOrder)) } }
        return s
    }

    /// The deleted objects and, through cascade rules, theirs; refused by a deny rule whose
    /// relationship still has a target that stays.
    func applyDeletes(_ ids: [PersistentIdentifier]) throws {
        var queue: [PersistentIdentifier] = ids.reversed()
        while let d = queue.popLast() {
            guard !deleted.contains(d), let snapshot = try stored(d) else { continue }
            deleted.insert(d)
            state[d] = nil
            for r in relationships(of: d.entityName) where r.deleteRule == .cascade {
                queue.append(contentsOf: (snapshot.values[r.name]?.referencedIdentifiers ?? []).reversed())
            }
        }
        for d in deleted.sorted() {
            let snapshot = try stored(d)!
            for r in relationships(of: d.entityName) where r.deleteRule == .deny {
                if let kept = try (snapshot.values[r.name]?.referencedIdentifiers ?? []).first(where: { try !deleted.contains($0) && stored($0) != nil }) {
                    throw DataStoreError(
                        .deleteDenied, "\(d) cannot be deleted: its \(r.name) still holds \(kept) and the rule is deny; delete or detach that first.",
                        entityName: d.entityName, propertyName: r.name, identifier: d)
                }
            }
        }
    }

    /// Every remaining object that refers to a deleted one loses the reference: to-many arrays
    /// always (their join records and back references go with the deleted object), to-one
    /// references unless the deleted side's rule is noAction (then the reference dangles).
    func sweepReferencesToDeleted() throws {
        guard !deleted.isEmpty else { return }
        for d in deleted.sorted() {
            let snapshot = try stored(d)!
            var referrers = Set(snapshot.referencedIdentifiers)
            for (_, source) in try mapper.incomingReferences(to: d) { referrers.insert(source) }
            for source in try mapper.incomingJoinSources(to: d) { referrers.insert(source) }
            for r in referrers.sorted() where !deleted.contains(r) { try modify(r) { _ in } }
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
    }
}
