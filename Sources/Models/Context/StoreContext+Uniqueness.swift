import Snapshot

extension StoreContext {
    /// Refuses a save whose pending inserts share the values of a uniqueness rule (a `unique`
    /// attribute or a compound constraint, inherited ones included) among themselves: which of
    /// two new objects an upsert should keep is not the context's to guess, so the save is
    /// refused before anything reaches a store, and every change stays pending (fix or delete
    /// one of the two, then save again). A rule's values that hold a null or a reference to an
    /// object not yet saved are not compared, as the stores do not compare them.
    ///
    /// Costs one pass over the pending inserts of entities with uniqueness rules.
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/uniqueness`` naming the entity that declares the
    ///   first rule (`entityName`), its properties (`constraint`; `propertyName` for a `unique`
    ///   attribute), every rule the later insert (`identifier`) shares (`constraints`) and every
    ///   earlier insert it shares them with (`relatedIdentifiers`).
    func checkInsertsShareNoUniqueValues() throws {
        struct Claim: Hashable {
            var entity: String
            var properties: [String]
            var values: [PropertyValue]
        }
        var claimed: [Claim: PersistentIdentifier] = [:]
        var rules: [String: [(entity: Schema.Entity, properties: [String], isAttribute: Bool)]] = [:]
        for id in insertOrder {
            guard let snapshot = inserts[id] else { continue }
            let entityName = id.entityName
            if rules[entityName] == nil {
                var found: [(entity: Schema.Entity, properties: [String], isAttribute: Bool)] = []
                for entity in schema.inheritanceChain(of: entityName).reversed() {
                    for attribute in entity.attributes where attribute.options.contains(.unique) {
                        found.append((entity, [attribute.name], true))
                    }
                    for constraint in entity.uniquenessConstraints { found.append((entity, constraint.properties, false)) }
                }
                rules[entityName] = found
            }
            var shared: [(rule: (entity: Schema.Entity, properties: [String], isAttribute: Bool), earlier: PersistentIdentifier, shown: String)] = []
            for rule in rules[entityName] ?? [] {
                let values = rule.properties.map { snapshot.values[$0] ?? .null }
                if values.contains(where: { $0.isNull || $0.referencedIdentifiers.contains(where: \.isTemporary) }) { continue }
                let claim = Claim(entity: rule.entity.name, properties: rule.properties, values: values)
                if let earlier = claimed[claim] {
                    shared.append((rule, earlier, zip(rule.properties, values).map { "\($0) = \($1)" }.joined(separator: ", ")))
                }
                claimed[claim] = id
            }
            if let first = shared.first {
                var related: [PersistentIdentifier] = []
                for s in shared where !related.contains(s.earlier) { related.append(s.earlier) }
                let what = shared.map { "\($0.shown) with \($0.earlier)" }.joined(separator: " and ")
                throw DataStoreError(
                    .uniqueness,
                    "The new \(first.rule.entity.name) \(id) shares \(what), which must be unique; change or delete one of them before saving. Nothing was saved and every change is still pending.",
                    entityName: first.rule.entity.name, propertyName: first.rule.isAttribute ? first.rule.properties[0] : nil, identifier: id,
                    constraints: shared.map(\.rule.properties), relatedIdentifiers: related)
            }
        }
    }
}
