import Snapshot

/// The tables, columns and indexes Core Data's SQLite store makes for a ``Schema``: one table
/// `Z<ENTITY>` per root entity (`Z_PK`, `Z_ENT`, `Z_OPT`, a `Z<ATTRIBUTE>` column per attribute
/// and a `Z<RELATIONSHIP>` column per to-one), a join table `Z_<n><RELATIONSHIP>` per
/// many-to-many, the default index on every foreign key and join table, one index per declared
/// index and per uniqueness rule (which each save checks once all its statements have run), and
/// the metadata tables `Z_PRIMARYKEY`, `Z_METADATA` and `Z_MODELCACHE`.
///
/// Entities are numbered (`Z_ENT`) from 1 in alphabetical order, as in the stores Core Data
/// made that were examined. A sub-entity's objects are rows of its root's table, as Core Data
/// keeps them: the table has the columns of every entity of the tree, `Z_ENT` names each row's
/// entity, and the tree shares one `Z_PK` sequence (the root's `Z_PRIMARYKEY` row). One-to-one
/// relationships with an inverse are not implemented: the layout refuses them with
/// ``DataStoreError/Code/unsupportedFeature``.
struct CoreDataLayout: Sendable {
    /// One attribute's column.
    struct Column: Sendable {
        /// The attribute.
        var attribute: Schema.Attribute
        /// `Z<NAME>`.
        var name: String
        /// The declared SQL type, as Core Data writes it (`INTEGER`, `TIMESTAMP`, `FLOAT`,
        /// `VARCHAR`, `BLOB`).
        var sqlType: String
        /// Whether large values go to files under `_EXTERNAL_DATA` (a `.externalStorage`
        /// data attribute).
        var isExternal: Bool
    }

    /// Where a relationship's links are kept.
    enum Storage: Sendable {
        /// A to-one: a column of this entity's table holding the target's `Z_PK`.
        case foreignKey(column: String)
        /// A to-many whose inverse is a to-one: the targets' table's foreign-key column.
        case inverseForeignKey(table: String, column: String)
        /// A many-to-many (or a to-many without inverse): a join table; `own` holds this
        /// object's `Z_PK`, `other` the target's.
        case join(table: String, own: String, other: String)
    }

    /// One relationship and where it is kept.
    struct Link: Sendable {
        var relationship: Schema.Relationship
        var storage: Storage
        /// The destination's table.
        var destinationTable: String
    }

    /// One entity's view of its root's table: the columns and links of its properties,
    /// inherited ones included.
    struct Table: Sendable {
        var entity: Schema.Entity
        /// `Z_ENT`.
        var number: Int
        /// `Z_ENT` of the root entity, whose `Z_PRIMARYKEY` row numbers the tree's rows.
        var rootNumber: Int
        /// `Z_ENT` of the entity and of every entity that inherits from it.
        var kinds: [Int]
        /// Whether the table holds objects of more than one entity (a tree with sub-entities).
        var isShared: Bool
        /// `Z<ROOT ENTITY>`.
        var name: String
        var columns: [Column]
        var links: [Link]
        /// Column of the attribute `name`.
        var columnsByAttribute: [String: Column]
        var linksByName: [String: Link]
        /// Attribute names of each uniqueness rule (unique attributes first).
        var uniqueness: [[String]]
    }

    /// The tables by entity name.
    let tables: [String: Table]
    /// Entity names by `Z_ENT`.
    let entityNames: [Int: String]
    /// Every `CREATE TABLE` and `CREATE INDEX`, in order.
    let statements: [String]

    /// The layout of `schema`.
    ///
    /// - Throws: ``DataStoreError/Code/unsupportedFeature`` for a one-to-one relationship with
    ///   an inverse.
    init(schema: Schema) throws {
        let sorted = schema.entities.sorted { $0.name < $1.name }
        var numbers: [String: Int] = [:]
        for (i, entity) in sorted.enumerated() { numbers[entity.name] = i + 1 }
        func tableName(_ entity: String) -> String { "Z" + (schema.rootEntity(of: entity)?.name ?? entity).uppercased() }

        var tables: [String: Table] = [:]
        var statements: [String] = []
        var joinTables: [String: (table: String, own: String, other: String)] = [:]  // by "Entity.relationship"

        // Join tables first, so both sides of a many-to-many see the same names.
        for entity in sorted {
            for relationship in entity.relationships where relationship.isToMany {
                let inverse = relationship.inverse.flatMap { schema.relationship(named: $0, in: relationship.destination) }
                if let inverse, !inverse.isToMany { continue }
                if relationship.inverse == relationship.name && relationship.destination == entity.name {
                    throw DataStoreError(
                        .unsupportedFeature, "A many-to-many relationship that is its own inverse is not implemented by the Core Data-shaped SQLite store.",
                        entityName: entity.name, propertyName: relationship.name)
                }
                let key = "\(entity.name).\(relationship.name)"
                if joinTables[key] != nil { continue }
                let a = numbers[entity.name]!, b = numbers[relationship.destination]!
                // The side with the lower Z_ENT names the table (as in every store examined).
                let ownerIsSelf = inverse == nil || a < b || (a == b && relationship.name < (relationship.inverse ?? ""))
                let (ownerEntity, ownerRel, ownerNumber, otherNumber, otherRel) = ownerIsSelf
                    ? (entity.name, relationship.name, a, b, relationship.inverse)
                    : (relationship.destination, relationship.inverse!, b, a, Optional(relationship.name))
                let table = "Z_\(ownerNumber)\(ownerRel.uppercased())"
                // Column holding the owner's Z_PK: named after the relationship pointing at the
                // owner (the inverse); `<REL>INVERSE` when there is none (chosen: unconfirmed).
                let first = "Z_\(ownerNumber)" + (otherRel?.uppercased() ?? ownerRel.uppercased() + "INVERSE")
                let second = "Z_\(otherNumber)\(ownerRel.uppercased())"
                joinTables["\(ownerEntity).\(ownerRel)"] = (table, first, second)
                if let otherRel {
                    let otherEntity = ownerIsSelf ? relationship.destination : entity.name
                    joinTables["\(otherEntity).\(otherRel)"] = (table, second, first)
                }
                statements.append("CREATE TABLE \(table) ( \(first) INTEGER, \(second) INTEGER, PRIMARY KEY (\(first), \(second)) )")
                statements.append("CREATE INDEX \(table)_\(second)_INDEX ON \(table) (\(second), \(first))")
            }
        }

        for root in sorted where root.superentityName == nil {
            let name = tableName(root.name)
            let family = [root] + schema.subentities(of: root.name)
            var used: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
            func columnName(_ property: String) -> String {
                var candidate = "Z" + property.uppercased()
                var suffix = 1
                while used.contains(candidate) {
                    candidate = "Z" + property.uppercased() + String(suffix)
                    suffix += 1
                }
                used.insert(candidate)
                return candidate
            }
            // The columns and links each entity of the tree declares, by "Entity.property".
            var declaredColumns: [String: Column] = [:]
            var declaredLinks: [String: Link] = [:]
            var columns: [Column] = []
            var foreignKeys: [(String, String)] = []
            for entity in family {
                for attribute in entity.attributes {
                    let column = Column(
                        attribute: attribute, name: columnName(attribute.name), sqlType: Self.sqlType(attribute.valueType),
                        isExternal: attribute.options.contains(.externalStorage) && attribute.valueType == .data)
                    declaredColumns["\(entity.name).\(attribute.name)"] = column
                    columns.append(column)
                }
                for relationship in entity.relationships {
                    let destinationTable = tableName(relationship.destination)
                    let link: Link
                    if !relationship.isToMany {
                        if let inverseName = relationship.inverse, let inverse = schema.relationship(named: inverseName, in: relationship.destination),
                            !inverse.isToMany
                        {
                            throw DataStoreError(
                                .unsupportedFeature, "One-to-one relationships with an inverse are not implemented by the Core Data-shaped SQLite store.",
                                entityName: entity.name, propertyName: relationship.name)
                        }
                        let column = columnName(relationship.name)
                        foreignKeys.append((relationship.name, column))
                        link = Link(relationship: relationship, storage: .foreignKey(column: column), destinationTable: destinationTable)
                    } else if let inverseName = relationship.inverse, let inverse = schema.relationship(named: inverseName, in: relationship.destination),
                        !inverse.isToMany
                    {
                        // The column is named on the destination's side, as it names it.
                        link = Link(relationship: relationship, storage: .inverseForeignKey(table: destinationTable, column: "Z" + inverseName.uppercased()), destinationTable: destinationTable)
                    } else {
                        let join = joinTables["\(entity.name).\(relationship.name)"]!
                        link = Link(relationship: relationship, storage: .join(table: join.table, own: join.own, other: join.other), destinationTable: destinationTable)
                    }
                    declaredLinks["\(entity.name).\(relationship.name)"] = link
                }
            }
            // Core Data's column order: integers, foreign keys, then timestamps and floats,
            // strings, blobs.
            let rank: [String: Int] = ["INTEGER": 0, "TIMESTAMP": 2, "FLOAT": 2, "DECIMAL": 2, "VARCHAR": 3, "BLOB": 4]
            let ints = columns.filter { rank[$0.sqlType] == 0 }.map { "\($0.name) INTEGER" }
            let fks = foreignKeys.map { "\($0.1) INTEGER" }
            // Strings and URLs compare in the package's string order (CanonicalCollation).
            let rest = columns.filter { rank[$0.sqlType] != 0 }.sorted { rank[$0.sqlType]! < rank[$1.sqlType]! }.map { column in
                column.sqlType == "VARCHAR" ? "\(column.name) VARCHAR COLLATE \(CanonicalCollation.name)" : "\(column.name) \(column.sqlType)"
            }
            let definitions = ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"] + ints + fks + rest
            statements.append("CREATE TABLE \(name) ( \(definitions.joined(separator: ", ")) )")
            for (_, column) in foreignKeys {
                statements.append("CREATE INDEX \(name)_\(column)_INDEX ON \(name) (\(column))")
            }
            for entity in family {
                // Root first, as the schema lists inherited properties.
                let chain = Array(schema.inheritanceChain(of: entity.name).reversed())
                let entityColumns = chain.flatMap { e in e.attributes.map { declaredColumns["\(e.name).\($0.name)"]! } }
                let entityLinks = chain.flatMap { e in e.relationships.map { declaredLinks["\(e.name).\($0.name)"]! } }
                var columnsByAttribute: [String: Column] = [:]
                for column in entityColumns { columnsByAttribute[column.attribute.name] = column }
                var linksByName: [String: Link] = [:]
                for link in entityLinks { linksByName[link.relationship.name] = link }
                func columnOf(_ property: String) -> String? {
                    if let column = columnsByAttribute[property] { return column.name }
                    if case .foreignKey(let column)? = linksByName[property]?.storage { return column }
                    return nil
                }
                for index in entity.indexes {
                    if index.properties.count == 1, case .foreignKey? = linksByName[index.properties[0]]?.storage { continue }  // duplicates the FK index
                    let parts = index.properties.compactMap { property -> String? in
                        if let column = columnsByAttribute[property] {
                            return "\(column.name) COLLATE \(column.sqlType == "VARCHAR" ? CanonicalCollation.name : "BINARY") ASC"
                        }
                        return columnOf(property).map { "\($0) COLLATE BINARY ASC" }
                    }
                    statements.append("CREATE INDEX Z_\(entity.name)_\(index.properties.joined(separator: "_")) ON \(name) (\(parts.joined(separator: ", ")))")
                }
                let declaredRules = entity.attributes.filter { $0.options.contains(.unique) }.map { [$0.name] } + entity.uniquenessConstraints.map(\.properties)
                for properties in declaredRules {
                    // How Core Data enforces a uniqueness constraint in SQLite is not documented.
                    // An index is what the upsert's lookup and the save's check need; it is not a
                    // UNIQUE index, which SQLite checks statement by statement, because a save is
                    // checked as it leaves the objects (one update may take a value another moves
                    // away from).
                    let parts = properties.compactMap(columnOf)
                    statements.append("CREATE INDEX Z_\(entity.name)_UNIQUE_\(properties.joined(separator: "_")) ON \(name) (\(parts.joined(separator: ", ")))")
                }
                let kinds = [numbers[entity.name]!] + schema.subentities(of: entity.name).map { numbers[$0.name]! }
                tables[entity.name] = Table(
                    entity: entity, number: numbers[entity.name]!, rootNumber: numbers[root.name]!, kinds: kinds, isShared: family.count > 1,
                    name: name, columns: entityColumns, links: entityLinks, columnsByAttribute: columnsByAttribute, linksByName: linksByName,
                    uniqueness: schema.allUniquenessConstraints(of: entity.name).map(\.properties))
            }
        }
        self.tables = tables
        self.entityNames = Dictionary(uniqueKeysWithValues: numbers.map { ($0.value, $0.key) })
        self.statements = statements
    }

    /// One table per root entity (the tables to erase), in `Z_ENT` order.
    var rootTables: [Table] {
        tables.values.filter { $0.number == $0.rootNumber }.sorted { $0.number < $1.number }
    }

    /// The entity of the rows whose `Z_ENT` is `number`.
    ///
    /// - Throws: ``DataStoreError/Code/engine`` for a number the layout does not know (a
    ///   damaged row).
    func entityName(_ number: Int64) throws -> String {
        guard let name = entityNames[Int(truncatingIfNeeded: number)] else { throw ColumnValues.damaged("a row whose Z_ENT is \(number)") }
        return name
    }

    /// The table of `entity`.
    func table(_ entity: String) throws -> Table {
        guard let table = tables[entity] else {
            throw DataStoreError(.unknownEntity, "The schema declares no entity \(entity); add it to the schema or use a declared name.", entityName: entity)
        }
        return table
    }

    /// The declared column type of Core Data's SQLite store for each attribute type.
    static func sqlType(_ type: Schema.Attribute.ValueType) -> String {
        switch type {
        case .bool, .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64: "INTEGER"
        case .float, .double: "FLOAT"
        case .date: "TIMESTAMP"
        case .decimal: "DECIMAL"
        case .string, .url: "VARCHAR"
        case .uuid, .data, .array, .codable: "BLOB"
        }
    }
}
