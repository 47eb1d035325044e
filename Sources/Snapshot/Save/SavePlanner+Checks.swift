extension SavePlanner {
    /// The final state of every object the save touches: non-optional values present,
    /// relationship counts within bounds, no two objects sharing a unique value.
    func checkFinalState() throws {
        do {
            try checkFinalState(in: Array(attempt.state.keys))
        } catch {
            // The error names the first object in identifier order, whatever the dictionary's.
            try checkFinalState(in: attempt.state.keys.sorted())
            throw error
        }
    }

    /// ``checkFinalState()``, visiting the objects in `order`; each object's properties by
    /// slot, in property order, as its entity's encoder resolved them.
    private func checkFinalState(in order: [PersistentIdentifier]) throws {
        var claimed: [[UInt8]: (id: PersistentIdentifier, constraint: [String])] = [:]
        for id in order where !attempt.deleted.contains(id) {
            let s = attempt.state[id]!
            let encoder = layout.encoder(of: id.entityName)
            for i in encoder.propertyOrder {
                let rule = encoder.slotRules[i]
                let held = s.slot(i)
                let value = held ?? rule.absent
                switch rule.kind {
                case .attribute(let a) where !a.isOptional && !a.options.contains(.ephemeral) && value.isNull:
                    throw DataStoreError(
                        .missingValue, "\(id.entityName).\(a.name) of \(reported(id)) is not optional and has no value; give it one.",
                        entityName: id.entityName, propertyName: a.name, identifier: reported(id))
                case .toOne(let r) where !r.isOptional && value.isNull:
                    throw DataStoreError(
                        .missingValue,
                        "\(id.entityName).\(r.name) of \(reported(id)) is not optional and has no target (after this save's delete rules); set one.",
                        entityName: id.entityName, propertyName: r.name, identifier: reported(id))
                case .toMany(let r):
                    // An array not materialized is unchanged or changed link by link (below);
                    // a new object's is its links alone.
                    if held != nil {
                        try checkCount(value.referencedIdentifiers.count, of: r, id)
                    } else if r.minimumCount != nil || r.maximumCount != nil, attempt.inserted.contains(id) {
                        try checkCount(try targets(id, r).count, of: r, id)
                    }
                default:
                    break
                }
            }
            var shared: [(other: PersistentIdentifier, constraint: [String])] = []
            for (key, properties) in encoder.uniqueKeys(of: s) {
                if let other = claimed[key], other.id != id { shared.append((reported(other.id), properties)) }
                claimed[key] = (id, properties)
            }
            if !shared.isEmpty {
                throw uniquenessError(
                    reported(id), shared,
                    "would share " + shared.map { "its unique \($0.constraint.joined(separator: ", ")) with \($0.other)" }.joined(separator: " and ")
                        + "; change the values")
            }
        }
        // Bounded to-many relationships changed link by link: counted whole.
        for id in attempt.linkChanges.keys.sorted() where !attempt.deleted.contains(id) {
            for (name, change) in attempt.linkChanges[id]!
            where !change.isEmpty && attempt.state[id]?.values[name] == nil && !attempt.inserted.contains(id) {
                guard case .relationship(let r)? = schema.property(named: name, in: id.entityName), r.minimumCount != nil || r.maximumCount != nil
                else { continue }
                try checkCount(try targets(id, r).count, of: r, id)
            }
        }
        var collisions: [(id: PersistentIdentifier, owner: PersistentIdentifier, constraint: [String])] = []
        for (key, claim) in claimed.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            guard let owner = try uniqueOwner(key), owner != claim.id, !attempt.deleted.contains(owner), attempt.state[owner] == nil else { continue }
            let state = attempt.state[claim.id]
            try requireSameUniqueValues(key, claim.constraint, of: claim.id, { state?[$0] }, heldBy: owner)
            collisions.append((claim.id, owner, claim.constraint))
        }
        if let first = collisions.first { throw storedCollisionError(of: first.id, collisions.filter { $0.id == first.id }, claimed: claimed) }
    }

    /// The refusal of an object whose unique values stored objects hold: every rule it
    /// collides on and every object it collides with, the upsert that merged an insert into the
    /// object first when there was one (the insert is then named, and the object it was merged
    /// into is the first of ``DataStoreError/relatedIdentifiers``).
    private func storedCollisionError(
        of id: PersistentIdentifier, _ collisions: [(id: PersistentIdentifier, owner: PersistentIdentifier, constraint: [String])],
        claimed: [[UInt8]: (id: PersistentIdentifier, constraint: [String])]
    ) -> DataStoreError {
        var shared = collisions.map { (other: $0.owner, constraint: $0.constraint) }
        var phrases = shared.map { "its unique \($0.constraint.joined(separator: ", ")) with the stored \($0.other)" }
        var named = reported(id)
        if attempt.upserted.contains(id), let merged = attempt.upsertConstraints[id],
            let insert = attempt.remapped.filter({ $0.value == id }).keys.min()
        {
            let rules = Set(claimed.values.filter { $0.id == id && merged.isSuperset(of: $0.constraint) }.map(\.constraint)).sorted {
                $0.lexicographicallyPrecedes($1)
            }
            named = insert
            shared = rules.map { (id, $0) } + shared
            phrases =
                rules.map { "its unique \($0.joined(separator: ", ")) with the stored \(id), into which it would be saved as an upsert" } + phrases
        }
        return uniquenessError(
            named, shared,
            "would share " + phrases.joined(separator: " and ")
                + "; change the values, or delete or update the other objects in the same save")
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
        uniquenessError(id, [(other, constraint)], phrase)
    }

    /// A uniqueness refusal of `id` colliding with several objects, each on a rule: every rule in
    /// ``DataStoreError/constraints`` (the first is ``DataStoreError/constraint``), every object
    /// once in ``DataStoreError/relatedIdentifiers``.
    func uniquenessError(
        _ id: PersistentIdentifier, _ shared: [(other: PersistentIdentifier, constraint: [String])], _ phrase: String
    ) -> DataStoreError {
        let constraint = shared.first?.constraint ?? []
        let attribute = constraint.count == 1 && schema.attribute(named: constraint[0], in: id.entityName)?.options.contains(.unique) == true
        var related: [PersistentIdentifier] = []
        for (other, _) in shared where !related.contains(other) { related.append(other) }
        return DataStoreError(
            .uniqueness, "The \(id.entityName) \(id) \(phrase).",
            entityName: id.entityName, propertyName: attribute ? constraint[0] : nil, identifier: id, constraints: shared.map(\.constraint),
            relatedIdentifiers: related)
    }
}
