extension Schema {
    /// What the lookups answer, per entity, computed once from a consistent list of entities:
    /// stores ask for properties, chains and roots for every object they read or write.
    ///
    /// Immutable after `init`, so sharing it between threads is safe.
    final class LookupTables: Sendable {
        struct PerEntity: Sendable {
            /// The entity, then its superentities, the root last.
            let chain: [Entity]
            /// Every property, inherited ones first (the root's first).
            let allProperties: [Property]
            /// Property name → property, declared or inherited (the nearest declaration).
            let properties: [String: Property]
            /// Every entity inheriting from this one, in schema order.
            let subentities: [Entity]
            /// Names of the entity and its superentities.
            let ancestry: Set<String>
        }

        let perEntity: [String: PerEntity]

        init(_ entities: [Entity]) {
            var byName: [String: Entity] = [:]
            for entity in entities where byName[entity.name] == nil { byName[entity.name] = entity }
            var chains: [String: [Entity]] = [:]
            for entity in entities {
                var chain: [Entity] = []
                var next: Entity? = entity
                // A consistent schema has no cycles; the bound only keeps a bad list finite.
                while let e = next, chain.count <= entities.count {
                    chain.append(e)
                    next = e.superentityName.flatMap { byName[$0] }
                }
                chains[entity.name] = chain
            }
            var perEntity: [String: PerEntity] = [:]
            for entity in entities where perEntity[entity.name] == nil {
                let chain = chains[entity.name] ?? []
                var properties: [String: Property] = [:]
                for ancestor in chain.reversed() {
                    for property in ancestor.declaredProperties { properties[property.name] = property }
                }
                perEntity[entity.name] = PerEntity(
                    chain: chain,
                    allProperties: chain.reversed().flatMap(\.declaredProperties),
                    properties: properties,
                    subentities: entities.filter { other in
                        other.name != entity.name && (chains[other.name] ?? []).contains { $0.name == entity.name }
                    },
                    ancestry: Set(chain.map(\.name)))
            }
            self.perEntity = perEntity
        }
    }
}
