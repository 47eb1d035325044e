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
    ///   rule (`entityName`), its properties (`constraint`; `propertyName` for a `unique`
    ///   attribute), the later insert (`identifier`) and the earlier one (`relatedIdentifiers`).
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
            for rule in rules[entityName] ?? [] {
                let values = rule.properties.map { snapshot.values[$0] ?? .null }
                if values.contains(where: { $0.isNull || $0.referencedIdentifiers.contains(where: \.isTemporary) }) { continue }
                let claim = Claim(entity: rule.entity.name, properties: rule.properties, values: values)
                if let earlier = claimed[claim] {
                    let shown = zip(rule.properties, values).map { "\($0) = \($1)" }.joined(separator: ", ")
                    throw DataStoreError(
                        .uniqueness,
                        "Two new \(rule.entity.name) objects, \(earlier) and \(id), share \(shown), which must be unique; change or delete one of them before saving. Nothing was saved and every change is still pending.",
                        entityName: rule.entity.name, propertyName: rule.isAttribute ? rule.properties[0] : nil, identifier: id,
                        constraint: rule.properties, relatedIdentifiers: [earlier])
                }
                claimed[claim] = id
            }
        }
    }
}
