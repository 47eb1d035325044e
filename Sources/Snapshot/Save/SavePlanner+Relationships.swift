extension SavePlanner {
    func inverse(of r: Schema.Relationship) -> Schema.Relationship? {
        r.inverse.flatMap { schema.relationship(named: $0, in: r.destination) }
    }

    /// Inverses, from what the request stated compared with what is stored (see
    /// ``WALDataStore``, "Both sides of a relationship"). Each object's relationships are
    /// walked by slot, with the inverses its entity's encoder resolved.
    func applyRelationshipChanges() throws {
        // One-to-one: each side's change moves the other side, in request order.
        for statement in attempt.statements where !attempt.deleted.contains(statement.id) {
            let id = statement.id
            for link in layout.encoder(of: id.entityName).relationshipSlots where !link.relationship.isToMany {
                let (i, r) = (link.slot, link.relationship)
                guard let inv = link.inverse, !inv.isToMany, attempt.stated[id]?.slots.contains(i) == true else { continue }
                let old = Self.target(try stored(id)?.slot(i))
                let new = Self.target(attempt.state[id]?.slot(i))
                if old == new { continue }
                // An upsert target this moves off the value its insert matched is no match.
                for t in [old, new].compactMap({ $0 }) where attempt.upsertConstraints[t]?.contains(inv.name) == true { attempt.movedAway.insert(t) }
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
        for intent in attempt.intents where !attempt.deleted.contains(intent.id) {
            let (id, r, inv) = (intent.id, intent.relationship, intent.inverse)
            let stored = try storedTargets(id, r)
            // A new object's (or one without stored links): what it states, each target once.
            let added: [PersistentIdentifier], removed: [PersistentIdentifier], moved: Set<PersistentIdentifier>
            if stored.isEmpty {
                added = Self.sortedUnique(intent.targets)
                removed = []
                moved = []
            } else {
                let old = Set(stored)
                let new = intent.addsOnly ? old.union(intent.targets) : Set(intent.targets)
                added = new.subtracting(old).sorted()
                removed = old.subtracting(new).sorted()
                moved = new.symmetricDifference(old)
            }
            try materialize(id, r)
            if let inv, !inv.isToMany {
                // One-to-many: move the targets that do not state their own to-one.
                // An upsert target this moves off the value its insert matched is no match.
                if !attempt.upsertConstraints.isEmpty {
                    for t in stored.isEmpty ? Set(added) : moved where attempt.upsertConstraints[t]?.contains(inv.name) == true && t != id {
                        attempt.movedAway.insert(t)
                    }
                }
                for t in added where !isStated(t, inv.name) {
                    try modify(t) { $0.values[inv.name] = .toOne(id) }
                }
                for t in removed where !isStated(t, inv.name) {
                    try modify(t) { if Self.target($0.values[inv.name]) == id { $0.values[inv.name] = .toOne(nil) } }
                }
            } else {
                if case .toMany(let current)? = attempt.state[id]?.slot(intent.slot) {
                    // The stating object's array, materialized above: edited once.
                    attempt.state[id]!.values.slots[intent.slot] = .toMany(Self.editing(current, adding: added, removing: removed))
                } else {
                    for t in added { addLink(id, r, t) }
                    for t in removed { removeLink(id, r, t) }
                }
                if let inv {
                    for t in added { addLink(t, inv, id) }
                    for t in removed { removeLink(t, inv, id) }
                }
            }
        }
        // One-to-many arrays follow the final to-one values (in any order: links are sets);
        // every to-many array in canonical order.
        for id in Array(attempt.state.keys) where !attempt.deleted.contains(id) {
            for link in layout.encoder(of: id.entityName).relationshipSlots where !link.relationship.isToMany {
                guard let inv = link.inverse, inv.isToMany else { continue }
                let new = Self.target(attempt.state[id]?.slot(link.slot))
                let old = attempt.inserted.contains(id) ? nil : Self.target(try stored(id)?.slot(link.slot))
                if old == new { continue }
                if let old { removeLink(old, inv, id) }
                if let new { addLink(new, inv, id) }
            }
        }
        for id in Array(attempt.state.keys) { Self.makeCanonical(&attempt.state[id]!) }
    }

    /// `ids` without `removed`, then the targets of `added` it does not list yet, in order.
    static func editing(
        _ ids: [PersistentIdentifier], adding added: [PersistentIdentifier], removing removed: [PersistentIdentifier]
    ) -> [PersistentIdentifier] {
        var result = ids
        if !removed.isEmpty {
            let gone = Set(removed)
            result.removeAll(where: gone.contains)
        }
        guard !added.isEmpty else { return result }
        if result.isEmpty { return added }
        let present = Set(result)
        result += added.filter { !present.contains($0) }
        return result
    }

    /// `ids` sorted, each once.
    static func sortedUnique(_ ids: [PersistentIdentifier]) -> [PersistentIdentifier] {
        guard ids.count > 1 else { return ids }
        var sorted = sorting(ids, by: <)
        var kept = 1
        for i in 1..<sorted.count where sorted[i] != sorted[kept - 1] {
            sorted[kept] = sorted[i]
            kept += 1
        }
        sorted.removeLast(sorted.count - kept)
        return sorted
    }

    /// Puts the to-many arrays of `state` in canonical order (changing only those out of order).
    static func makeCanonical(_ state: inout ObjectState) {
        for i in state.values.slots.indices {
            guard case .toMany(let ids)? = state.values.slots[i], ids.count > 1 else { continue }
            let sorted = sorting(ids, by: RecordMapper.canonicalOrder)
            if sorted != ids { state.values.slots[i] = .toMany(sorted) }
        }
    }

    /// `ids` sorted by `less`: the few targets of one object's relationship by insertion, in
    /// place (already sorted: one comparison each), more by the standard library.
    static func sorting(_ ids: [PersistentIdentifier], by less: (PersistentIdentifier, PersistentIdentifier) -> Bool) -> [PersistentIdentifier] {
        guard ids.count <= 16 else { return ids.sorted(by: less) }
        var sorted = ids
        for i in sorted.indices.dropFirst() {
            var j = i
            while j > 0, less(sorted[j], sorted[j - 1]) {
                sorted.swapAt(j, j - 1)
                j -= 1
            }
        }
        return sorted
    }
}
