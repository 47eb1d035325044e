import Snapshot

extension StoreContainer {
    /// Which configuration holds each entity, and each configuration's part of the schema:
    /// worked out, and checked, before any store is opened.
    struct Layout: Sendable {
        /// Root entity name → index of the configuration holding its tree.
        let configurationOfRoot: [String: Int]
        /// Each configuration's entities, as a schema of their own.
        let schemas: [Schema]

        /// The index of the configuration holding `entityName`, or `nil` for an unknown entity.
        func configurationIndex(of entityName: String, in schema: Schema) -> Int? {
            schema.rootEntity(of: entityName).flatMap { configurationOfRoot[$0.name] }
        }
    }

    static func layout(schema: Schema, configurations: [Configuration]) throws -> Layout {
        guard !configurations.isEmpty else {
            throw ContainerError(.noConfigurations, "A container needs at least one configuration; pass one per store.")
        }
        var names: Set<String> = [], paths: [String: String] = [:]
        var catchAll: Int?
        for (i, c) in configurations.enumerated() {
            guard names.insert(c.name).inserted else {
                throw ContainerError(
                    .duplicateConfiguration, "Two configurations are named \(c.name); give each store its own name.", configurationNames: [c.name])
            }
            if !c.isStoredInMemoryOnly {
                let path = standardized(c.path)
                if let other = paths[path] {
                    throw ContainerError(
                        .duplicateConfiguration, "The configurations \(other) and \(c.name) share the directory \(c.path); give each store its own.",
                        configurationNames: [other, c.name])
                }
                paths[path] = c.name
            }
            if c.entityNames == nil {
                if let catchAll {
                    throw ContainerError(
                        .entityInSeveralConfigurations,
                        "The configurations \(configurations[catchAll].name) and \(c.name) both hold every other entity (no entity list); list the entities of one of them.",
                        configurationNames: [configurations[catchAll].name, c.name])
                }
                catchAll = i
            }
        }
        var owner: [String: Int] = [:]
        for (i, c) in configurations.enumerated() {
            for name in c.entityNames ?? [] {
                guard let root = schema.rootEntity(of: name) else {
                    throw ContainerError(
                        .unknownEntity, "The configuration \(c.name) names \(name), which the schema does not declare; use a declared entity name.",
                        entityName: name, configurationNames: [c.name])
                }
                if let other = owner[root.name], other != i {
                    throw ContainerError(
                        .entityInSeveralConfigurations,
                        "\(name) (whose root entity is \(root.name)) is named by the configurations \(configurations[other].name) and \(c.name); an entity's tree belongs to one store, so name it in one of them.",
                        entityName: name, configurationNames: [configurations[other].name, c.name])
                }
                owner[root.name] = i
            }
        }
        for entity in schema.entities where entity.superentityName == nil && owner[entity.name] == nil {
            guard let catchAll else {
                throw ContainerError(
                    .entityInNoConfiguration,
                    "No configuration holds \(entity.name); name it in one of them (or leave one configuration's entity list nil).",
                    entityName: entity.name, configurationNames: configurations.map(\.name))
            }
            owner[entity.name] = catchAll
        }
        let layout = Layout(configurationOfRoot: owner, schemas: [])
        try checkRelationships(schema, layout, configurations)
        var schemas: [Schema] = []
        for i in configurations.indices {
            let entities = schema.entities.filter { layout.configurationIndex(of: $0.name, in: schema) == i }
            do {
                schemas.append(try Schema(entities))
            } catch {
                throw ContainerError(
                    .crossStoreRelationship, "The entities of \(configurations[i].name) do not form a schema of their own: \(error)",
                    configurationNames: [configurations[i].name], underlying: error as? DataStoreError)
            }
        }
        return Layout(configurationOfRoot: owner, schemas: schemas)
    }

    /// Every relationship's two ends in one configuration.
    private static func checkRelationships(_ schema: Schema, _ layout: Layout, _ configurations: [Configuration]) throws {
        for entity in schema.entities {
            guard let from = layout.configurationIndex(of: entity.name, in: schema) else { continue }
            for r in entity.relationships {
                guard let to = layout.configurationIndex(of: r.destination, in: schema), to != from else { continue }
                let ends = [
                    ContainerError.RelationshipEnd(entityName: entity.name, relationshipName: r.name, configurationName: configurations[from].name),
                    ContainerError.RelationshipEnd(
                        entityName: r.destination, relationshipName: r.inverse, configurationName: configurations[to].name),
                ]
                throw ContainerError(
                    .crossStoreRelationship,
                    "The relationship \(ends[0]) reaches \(ends[1]): a relationship cannot cross stores. Put both entities in one configuration, or replace the relationship with a stored identifier.",
                    entityName: entity.name, configurationNames: [configurations[from].name, configurations[to].name], relationshipEnds: ends)
            }
        }
    }

    /// `path` without a trailing `/`, `.` components or doubled separators, for comparing.
    private static func standardized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) where part != "." { parts.append(part) }
        return (path.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")
    }
}
