extension SavePlanner {
    /// The save's changes as history records them, once ``plan(_:)`` has run: each object the
    /// save inserts, updates (a stored value changed) or deletes, once, in this order — the
    /// request's inserts, its updates, its deletes (each in request order), then the objects
    /// deleted by cascade, then the other objects the save changed (inverses, references a
    /// delete rule nullified, upserts reached otherwise), each group by identifier.
    func historyChanges(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> [HistoryRecord.Change] {
        var seen: Set<PersistentIdentifier> = []
        var changes: [HistoryRecord.Change] = []
        func consider(_ id: PersistentIdentifier) throws {
            guard seen.insert(id).inserted, let pk = RecordMapper.primaryKey(of: id) else { return }
            if deleted.contains(id) {
                guard let old = try stored(id) else { return }
                changes.append(HistoryRecord.Change(kind: .delete, entity: id.entityName, primaryKey: pk, tombstone: tombstone(of: old)))
            } else if inserted.contains(id) {
                if state[id] != nil { changes.append(HistoryRecord.Change(kind: .insert, entity: id.entityName, primaryKey: pk)) }
            } else if var old = try stored(id) {
                var names = Set(linkedRelationships(of: id))
                if let new = state[id] {
                    for r in relationships(of: id.entityName) where r.isToMany && new.values[r.name] != nil {
                        old.values[r.name] = .toMany(try storedTargets(id, r))
                    }
                    names.formUnion(changedProperties(old, new))
                }
                if !names.isEmpty {
                    changes.append(HistoryRecord.Change(kind: .update, entity: id.entityName, primaryKey: pk, updated: names.sorted()))
                }
            }
        }
        for s in request.inserted { if let id = remapped[s.persistentIdentifier] { try consider(id) } }
        for s in request.updated { try consider(s.persistentIdentifier) }
        for s in request.deleted { try consider(s.persistentIdentifier) }
        for id in deleted.filter({ !seen.contains($0) }).sorted() { try consider(id) }
        for id in Set(state.keys).union(linkChanges.keys).filter({ !seen.contains($0) }).sorted() { try consider(id) }
        return changes
    }

    /// The to-many relationships of `id` that gain or lose links without being read whole.
    private func linkedRelationships(of id: PersistentIdentifier) -> [String] {
        (linkChanges[id] ?? [:]).compactMap { name, change in change.isEmpty || state[id]?.values[name] != nil ? nil : name }
    }

    /// The names of the properties whose stored value differs, sorted: attributes (ephemeral
    /// ones are never stored, so never compared), to-one targets, and to-many sets of targets
    /// (of the arrays both states hold).
    private func changedProperties(_ old: ObjectState, _ new: ObjectState) -> [String] {
        var names: [String] = []
        for property in schema.allProperties(of: new.persistentIdentifier.entityName) {
            let name = property.name
            let a = old.values[name] ?? .null, b = new.values[name] ?? .null
            switch property {
            case .attribute(let attribute):
                if !attribute.options.contains(.ephemeral) && a != b { names.append(name) }
            case .relationship(let r) where r.isToMany:
                guard old.values[name] != nil, new.values[name] != nil else { continue }
                let x = a.referencedIdentifiers, y = b.referencedIdentifiers
                if x != y && (x.count != y.count || Set(x) != Set(y)) { names.append(name) }
            case .relationship:
                if a.referencedIdentifiers.first != b.referencedIdentifiers.first { names.append(name) }
            }
        }
        return names.sorted()
    }

    /// The deleted object's attributes marked to be preserved, with their last stored values.
    private func tombstone(of old: ObjectState) -> [HistoryRecord.TombstoneField] {
        var fields: [HistoryRecord.TombstoneField] = []
        for property in schema.allProperties(of: old.persistentIdentifier.entityName) {
            guard case .attribute(let a) = property, a.options.contains(.preserveValueOnDeletion) else { continue }
            fields.append(HistoryRecord.TombstoneField(name: a.name, value: old.values[a.name] ?? .null))
        }
        return fields.sorted { $0.name < $1.name }
    }
}
