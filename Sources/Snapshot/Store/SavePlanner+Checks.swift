extension SavePlanner {
    /// The final state of every object the save touches: non-optional values present,
    /// relationship counts within bounds, no two objects sharing a unique value.
    func checkFinalState() throws {
        do {
            try checkFinalState(in: Array(state.keys))
        } catch {
            // The error names the first object in identifier order, whatever the dictionary's.
            try checkFinalState(in: state.keys.sorted())
            throw error
        }
    }

    /// ``checkFinalState()``, visiting the objects in `order`.
    private func checkFinalState(in order: [PersistentIdentifier]) throws {
        var claimed: [[UInt8]: (id: PersistentIdentifier, constraint: [String])] = [:]
        for id in order where !deleted.contains(id) {
            let s = state[id]!
            for property in schema.allProperties(of: id.entityName) {
                let value = value(property.name, of: s)
                switch property {
                case .attribute(let a) where !a.isOptional && !a.options.contains(.ephemeral) && value.isNull:
                    throw DataStoreError(
                        .missingValue, "\(id.entityName).\(a.name) of \(reported(id)) is not optional and has no value; give it one.",
                        entityName: id.entityName, propertyName: a.name, identifier: reported(id))
                case .relationship(let r) where !r.isToMany && !r.isOptional && value.isNull:
                    throw DataStoreError(
                        .missingValue, "\(id.entityName).\(r.name) of \(reported(id)) is not optional and has no target (after this save's delete rules); set one.",
                        entityName: id.entityName, propertyName: r.name, identifier: reported(id))
                case .relationship(let r) where r.isToMany:
                    // An array not materialized is unchanged or changed link by link (below);
                    // a new object's is its links alone.
                    if s.values[r.name] != nil {
                        try checkCount(value.referencedIdentifiers.count, of: r, id)
                    } else if inserted.contains(id), r.minimumCount != nil || r.maximumCount != nil {
                        try checkCount(try targets(id, r).count, of: r, id)
                    }
                default:
                    break
                }
            }
            for (key, properties) in mapper.uniqueKeys(of: s, fallback: { self.value($0, of: s) }) {
                if let other = claimed[key], other.id != id {
                    throw uniquenessError(reported(id), reported(other.id), properties, "would share its unique \(properties.joined(separator: ", ")) with \(reported(other.id)); change one of them")
                }
                claimed[key] = (id, properties)
            }
        }
        // Bounded to-many relationships changed link by link: counted whole.
        for id in linkChanges.keys.sorted() where !deleted.contains(id) {
            for (name, change) in linkChanges[id]! where !change.isEmpty && state[id]?.values[name] == nil && !inserted.contains(id) {
                guard case .relationship(let r)? = schema.property(named: name, in: id.entityName), r.minimumCount != nil || r.maximumCount != nil else { continue }
                try checkCount(try targets(id, r).count, of: r, id)
            }
        }
        for (key, claim) in claimed.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            guard let owner = try uniqueOwner(key), owner != claim.id, !deleted.contains(owner), state[owner] == nil else { continue }
            throw uniquenessError(
                reported(claim.id), owner, claim.constraint,
                "would share its unique \(claim.constraint.joined(separator: ", ")) with the stored \(owner); change one of them, or delete or update that object in the same save")
        }
    }

    private func checkCount(_ count: Int, of r: Schema.Relationship, _ id: PersistentIdentifier) throws {
        guard count < (r.minimumCount ?? 0) || count > (r.maximumCount ?? Int.max) else { return }
        throw DataStoreError(
            .cardinality,
            "\(id.entityName).\(r.name) of \(reported(id)) would hold \(count) objects, outside \(r.minimumCount ?? 0)...\(r.maximumCount.map(String.init) ?? "∞"); add or remove targets to fit.",
            entityName: id.entityName, propertyName: r.name, identifier: reported(id))
    }

    /// A uniqueness refusal: `id` (``DataStoreError/identifier``) and `other`
    /// (``DataStoreError/relatedIdentifiers``) would share the values of `constraint`; a
    /// `unique` attribute's name is also ``DataStoreError/propertyName``. `phrase` follows the
    /// object's name in the message.
    func uniquenessError(_ id: PersistentIdentifier, _ other: PersistentIdentifier, _ constraint: [String], _ phrase: String) -> DataStoreError {
        let attribute = constraint.count == 1 && schema.attribute(named: constraint[0], in: id.entityName)?.options.contains(.unique) == true
        return DataStoreError(
            .uniqueness, "The \(id.entityName) \(id) \(phrase).",
            entityName: id.entityName, propertyName: attribute ? constraint[0] : nil, identifier: id, constraint: constraint,
            relatedIdentifiers: [other])
    }
}
