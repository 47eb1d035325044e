extension SavePlanner {
    /// How the save changes the number of objects of each concrete entity: +1 per new object
    /// (an upsert is an update, not counted), −1 per stored object it deletes (cascades
    /// included). Call once ``plan(_:)`` has returned.
    func countChanges() -> [String: Int] {
        var changes: [String: Int] = [:]
        for id in attempt.inserted where !attempt.deleted.contains(id) { changes[id.entityName, default: 0] += 1 }
        for id in attempt.deleted { changes[id.entityName, default: 0] -= 1 }
        return changes
    }

    /// The objects the save changed that the request did not hold as they now are, whole: an
    /// object no statement names (the other side of a relationship, one a delete rule changed),
    /// an upserted object, and a stated object whose saved state differs from its statement
    /// (a new object given defaults for what it left out, a null stored as a default, a
    /// relationship another statement moved; an update, unless it stated every property).
    /// Objects whose only change is a link gained or lost at the other end of a to-many
    /// relationship (a tag a saved post now lists) are not among them.
    ///
    /// A statement is compared with its object's state slot by slot (its values as the request
    /// said them, read once by ``applyStatements(_:)``): nothing by name is built for an object
    /// the request holds as it now is, and the result is empty when the save altered nothing
    /// the request sent.
    func snapshotsToReregister() throws -> [PersistentIdentifier: DefaultSnapshot] {
        var result: [PersistentIdentifier: DefaultSnapshot] = [:]
        let checksDeleted = !attempt.deleted.isEmpty, checksUpserted = !attempt.upserted.isEmpty
        for (id, state) in attempt.state {
            if checksDeleted && attempt.deleted.contains(id) { continue }
            if let entry = attempt.stated[id], !(checksUpserted && attempt.upserted.contains(id)),
                try !differs(attempt.statements[entry.statement], state)
            {
                continue
            }
            result[id] = snapshot(of: try returned(id, state))
        }
        return result
    }

    /// Whether the saved `state` of a stated object differs from `statement`, as the object is
    /// returned whole (``returned(_:_:)``): to-many arrays compared as sets, every other value
    /// as it is.
    private func differs(_ statement: Statement, _ state: ObjectState) throws -> Bool {
        for (i, rule) in statement.rules.enumerated() {
            let held = state.slot(i)
            guard let said = statement.said[i] else {
                // Returned though not said: a value held, a to-many's links, a new object's default.
                if held != nil || rule.whole == nil || statement.isNew { return true }
                continue
            }
            if case .toMany(let x) = said, let r = rule.relationship {
                let y = try held?.referencedIdentifiers ?? targets(statement.id, r)
                if !Self.holdSameTargets(x, y) { return true }
            } else if said != (held ?? (statement.isNew ? rule.whole : nil)) {
                return true
            }
        }
        return false
    }

    /// The object `id` (of saved `state`) as it is returned: a new object whole (its defaults
    /// and links), another with every to-many array.
    private func returned(_ id: PersistentIdentifier, _ state: ObjectState) throws -> ObjectState {
        if attempt.inserted.contains(id) { return try wholeState(id) ?? state }
        var whole = state
        for link in layout.encoder(of: id.entityName).relationshipSlots where link.relationship.isToMany && whole.slot(link.slot) == nil {
            whole.values.slots[link.slot] = .toMany(try targets(id, link.relationship).sorted(by: RecordMapper.canonicalOrder))
        }
        return whole
    }

    /// Whether `x` and `y` list the same targets as many times each, in any order (a few
    /// compared in place, more sorted).
    static func holdSameTargets(_ x: [PersistentIdentifier], _ y: [PersistentIdentifier]) -> Bool {
        guard x.count == y.count else { return false }
        if x == y { return true }
        guard x.count <= 16 else { return x.sorted(by: RecordMapper.canonicalOrder) == y.sorted(by: RecordMapper.canonicalOrder) }
        for target in x {
            var (inX, inY) = (0, 0)
            for t in x where t == target { inX += 1 }
            for t in y where t == target { inY += 1 }
            if inX != inY { return false }
        }
        return true
    }
}
