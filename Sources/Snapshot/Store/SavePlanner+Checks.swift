extension SavePlanner {
    /// The final state of every object the save touches: non-optional values present,
    /// relationship counts within bounds, no two objects sharing a unique value.
    func checkFinalState() throws {
        var claimed: [[UInt8]: PersistentIdentifier] = [:]
        for id in state.keys.sorted() where !deleted.contains(id) {
            let s = state[id]!
            for property in schema.allProperties(of: id.entityName) {
                let value = s.values[property.name] ?? .null
                switch property {
                case .attribute(let a) where !a.isOptional && !a.options.contains(.ephemeral) && value.isNull:
                    throw DataStoreError(
                        .missingValue, "\(id.entityName).\(a.name) is not optional and has no value; give it one.",
                        entityName: id.entityName, propertyName: a.name, identifier: id)
                case .relationship(let r) where !r.isToMany && !r.isOptional && value.isNull:
                    throw DataStoreError(
                        .missingValue, "\(id.entityName).\(r.name) is not optional and has no target (after this save's delete rules); set one.",
                        entityName: id.entityName, propertyName: r.name, identifier: id)
                case .relationship(let r) where r.isToMany:
                    // An array not materialized is unchanged or changed link by link (below).
                    if s.values[r.name] != nil { try checkCount(value.referencedIdentifiers.count, of: r, id) }
                default:
                    break
                }
            }
            for (key, properties) in mapper.uniqueKeys(of: s) {
                if let other = claimed[key], other != id { throw uniquenessError(id, other, properties) }
                claimed[key] = id
            }
        }
        // Bounded to-many relationships changed link by link: counted whole.
        for id in linkChanges.keys.sorted() where !deleted.contains(id) {
            for (name, change) in linkChanges[id]! where !change.isEmpty && state[id]?.values[name] == nil {
                guard case .relationship(let r)? = schema.property(named: name, in: id.entityName), r.minimumCount != nil || r.maximumCount != nil else { continue }
                try checkCount(try targets(id, r).count, of: r, id)
            }
        }
        for (key, id) in claimed.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            guard let owner = try uniqueOwner(key), owner != id, !deleted.contains(owner), state[owner] == nil else { continue }
            throw uniquenessError(id, owner, [])
        }
    }

    private func checkCount(_ count: Int, of r: Schema.Relationship, _ id: PersistentIdentifier) throws {
        guard count < (r.minimumCount ?? 0) || count > (r.maximumCount ?? Int.max) else { return }
        throw DataStoreError(
            .cardinality,
            "\(id.entityName).\(r.name) would hold \(count) objects, outside \(r.minimumCount ?? 0)...\(r.maximumCount.map(String.init) ?? "∞").",
            entityName: id.entityName, propertyName: r.name, identifier: id)
    }

    private func uniquenessError(_ id: PersistentIdentifier, _ other: PersistentIdentifier, _ properties: [String]) -> DataStoreError {
        DataStoreError(
            .uniqueness, "\(id) would share its unique \(properties.isEmpty ? "values" : properties.joined(separator: ", ")) with \(other); change one of them.",
            entityName: id.entityName, propertyName: properties.first, identifier: id)
    }
}
