import Foundation
import Snapshot
import SQLiteSupport

extension CoreDataSQLiteStore {
    /// The objects the descriptor selects, in its order, with the targets of the relationships
    /// to prefetch in ``DataStoreFetchResult/relatedSnapshots``; sees every save that returned
    /// before it began.
    ///
    /// - Throws: ``DataStoreError``: `unknownEntity`, `invalidRequest` (a negative limit or
    ///   offset), the predicate's errors (as ``PredicateEvaluator`` names them),
    ///   `unsupportedFeature` for a comparison or sort the store does not translate, `engine`
    ///   when SQLite fails.
    public func fetch(_ request: DataStoreFetchRequest) throws -> DataStoreFetchResult<DefaultSnapshot> {
        try lock.withLock {
            try Self.sqlite("Fetching") {
                let descriptor = request.descriptor
                let table = try layout.table(descriptor.entityName)
                let prefetch = descriptor.relationshipKeyPathsForPrefetching
                var wanted: Set<String>?
                if !descriptor.propertiesToFetch.isEmpty {
                    wanted = Set(descriptor.propertiesToFetch).union(prefetch.compactMap(\.components.first))
                }
                let columns = selectList(family(table, descriptor.includesSubentities), wanted: wanted, alias: "t0")
                let query = try selection(descriptor, columns: columns.sql, ordered: true)
                var fetched = try readObjects(table, query.sql, query.arguments, columns: columns)
                let related = try prefetched(from: fetched, through: prefetch)
                if !descriptor.propertiesToFetch.isEmpty { fetched = fetched.map { $0.keeping(descriptor.propertiesToFetch) } }
                return DataStoreFetchResult(descriptor: descriptor, fetchedSnapshots: fetched, relatedSnapshots: related)
            }
        }
    }

    /// How many objects the descriptor selects (offset and limit applied): one `count(*)`.
    public func fetchCount(_ request: DataStoreFetchRequest) throws -> Int {
        try lock.withLock {
            try Self.sqlite("Counting") {
                let descriptor = request.descriptor
                let windowed = descriptor.fetchLimit != nil || descriptor.fetchOffset != nil
                let query = try selection(descriptor, columns: windowed ? "t0.Z_PK" : "count(*)", ordered: windowed)
                let sql = windowed ? "SELECT count(*) FROM (\(query.sql))" : query.sql
                var count = 0
                try self.query(sql, query.arguments) { count = Int($0.integer(0)) }
                return count
            }
        }
    }

    /// The identifiers of the objects the descriptor selects, in its order (`Z_PK`s alone).
    public func fetchIdentifiers(_ request: DataStoreFetchRequest) throws -> [PersistentIdentifier] {
        try lock.withLock { try Self.sqlite("Fetching") { try identifiersLocked(request.descriptor) } }
    }

    func identifiersLocked(_ descriptor: FetchDescriptor) throws -> [PersistentIdentifier] {
        let query = try selection(descriptor, columns: "t0.Z_PK, t0.Z_ENT", ordered: true)
        var ids: [PersistentIdentifier] = []
        try self.query(query.sql, query.arguments) { ids.append(try identifier(try layout.entityName($0.integer(1)), $0.integer(0))) }
        return ids
    }

    /// `table` and, when `includingSubentities`, the tables of the entities inheriting from it.
    func family(_ table: CoreDataLayout.Table, _ includingSubentities: Bool) -> [CoreDataLayout.Table] {
        guard includingSubentities, table.kinds.count > 1 else { return [table] }
        return table.kinds.compactMap { layout.entityNames[$0].flatMap { layout.tables[$0] } }
    }

    // MARK: SQL

    /// `SELECT <columns> FROM Z<ENTITY> t0 <joins> WHERE <predicate> ORDER BY … LIMIT ? OFFSET ?`.
    func selection(_ descriptor: FetchDescriptor, columns: String, ordered: Bool) throws -> (sql: String, arguments: [SQLArgument]) {
        if let limit = descriptor.fetchLimit, limit < 0 {
            throw DataStoreError(.invalidRequest, "fetchLimit is \(limit); pass nil for no limit, or a count of at least 0.", entityName: descriptor.entityName)
        }
        if let offset = descriptor.fetchOffset, offset < 0 {
            throw DataStoreError(.invalidRequest, "fetchOffset is \(offset); pass nil or a count of at least 0.", entityName: descriptor.entityName)
        }
        let table = try layout.table(descriptor.entityName)
        let translator = PredicateTranslator(layout: layout, schema: schema, storeIdentifier: identifier)
        let scope = PredicateTranslator.Scope(entity: table.entity.name, alias: "t0")
        let condition = try descriptor.predicate.map { try translator.condition($0, in: scope) }
        // The sorts are checked even when the order does not matter (a count), as the request
        // is checked against the schema before anything is read.
        let sorts = try translator.orderBy(descriptor.sortBy, in: scope)
        let order = ordered ? sorts : nil
        var sql = "SELECT \(columns) FROM \(table.name) t0"
        if !scope.joinClauses.isEmpty { sql += " " + scope.joinClauses.joined(separator: " ") }
        var conditions = condition.map { [$0] } ?? []
        if table.isShared {
            // The rows of this entity (and its sub-entities) among those of its tree.
            let kinds = descriptor.includesSubentities ? table.kinds : [table.number]
            conditions.insert("t0.Z_ENT IN (\(kinds.map(String.init).joined(separator: ", ")))", at: 0)
        }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if let order { sql += " ORDER BY \(order)" }
        var arguments = translator.arguments
        if descriptor.fetchLimit != nil || descriptor.fetchOffset != nil {
            sql += " LIMIT ? OFFSET ?"
            arguments.append(.integer(Int64(descriptor.fetchLimit ?? -1)))
            arguments.append(.integer(Int64(descriptor.fetchOffset ?? 0)))
        }
        return (sql, arguments)
    }

    /// What a row of `table` is read from: `Z_PK`, then the wanted attributes and to-ones.
    struct Columns {
        var sql: String
        var attributes: [CoreDataLayout.Column]
        var toOnes: [CoreDataLayout.Link]
        var toManys: [CoreDataLayout.Link]
    }

    /// The columns of the properties of `tables` (an entity and its sub-entities: each row
    /// keeps those of its own entity).
    func selectList(_ tables: [CoreDataLayout.Table], wanted: Set<String>?, alias: String) -> Columns {
        var attributes: [CoreDataLayout.Column] = []
        var toOnes: [CoreDataLayout.Link] = []
        var toManys: [CoreDataLayout.Link] = []
        var seen: Set<String> = []
        for table in tables {
            for column in table.columns where wanted?.contains(column.attribute.name) ?? true {
                if seen.insert(column.name).inserted { attributes.append(column) }
            }
            for link in table.links where wanted?.contains(link.relationship.name) ?? true {
                guard seen.insert("\(link.relationship.name)@\(link.destinationTable)").inserted else { continue }
                if case .foreignKey = link.storage { toOnes.append(link) } else { toManys.append(link) }
            }
        }
        var names = ["\(alias).Z_PK", "\(alias).Z_ENT"] + attributes.map { "\(alias).\($0.name)" }
        for link in toOnes { if case .foreignKey(let column) = link.storage { names.append("\(alias).\(column)") } }
        return Columns(sql: names.joined(separator: ", "), attributes: attributes, toOnes: toOnes, toManys: toManys)
    }

    /// The snapshots of the rows `sql` selects (with ``selectList(_:wanted:alias:)``'s
    /// columns), their to-many relationships read with one query per relationship.
    func readObjects(_ table: CoreDataLayout.Table, _ sql: String, _ arguments: [SQLArgument], columns: Columns) throws -> [DefaultSnapshot] {
        var keys: [Int64] = []
        var kinds: [CoreDataLayout.Table] = []
        var snapshots: [DefaultSnapshot] = []
        try query(sql, arguments) { row in
            let key = row.integer(0)
            let kind = table.isShared ? try layout.table(try layout.entityName(row.integer(1))) : table
            var values: [String: PropertyValue] = [:]
            values.reserveCapacity(columns.attributes.count + columns.toOnes.count + columns.toManys.count)
            var index: Int32 = 2
            for column in columns.attributes {
                // A column of another entity of the tree is not a property of this row's.
                if kind.columnsByAttribute[column.attribute.name]?.name == column.name {
                    values[column.attribute.name] = column.isExternal
                        ? try externalValue(row, index) : try ColumnValues.read(row, index, as: column.attribute.valueType)
                }
                index += 1
            }
            for link in columns.toOnes {
                if kind.linksByName[link.relationship.name]?.destinationTable == link.destinationTable {
                    values[link.relationship.name] = row.isNull(index)
                        ? .toOne(nil) : .toOne(try identifier(link.relationship.destination, row.integer(index)))
                }
                index += 1
            }
            keys.append(key)
            kinds.append(kind)
            snapshots.append(DefaultSnapshot(persistentIdentifier: try identifier(kind.entity.name, key), values: values))
        }
        for link in columns.toManys {
            let owners = keys.indices.filter { kinds[$0].linksByName[link.relationship.name]?.destinationTable == link.destinationTable }
            let targets = try toMany(link, owners: owners.map { keys[$0] })
            let destination = link.relationship.destination
            for i in owners {
                let ids = try (targets[keys[i]] ?? []).map { try identifier(destination, $0) }
                snapshots[i].values[link.relationship.name] = .toMany(ids)
            }
        }
        return try withConcreteTargets(snapshots)
    }

    /// `snapshots` with each reference to an object of a tree with sub-entities naming the
    /// object's own entity (a relationship's destination may be its superentity): one query
    /// per tree for all the references.
    func withConcreteTargets(_ snapshots: [DefaultSnapshot]) throws -> [DefaultSnapshot] {
        var keysByTable: [String: Set<Int64>] = [:]
        for snapshot in snapshots {
            for id in snapshot.referencedIdentifiers {
                guard let table = layout.tables[id.entityName], table.isShared, case .integer(let key) = id.primaryKey else { continue }
                keysByTable[table.name, default: []].insert(key)
            }
        }
        guard !keysByTable.isEmpty else { return snapshots }
        var entities: [String: [Int64: String]] = [:]
        for (table, keys) in keysByTable.sorted(by: { $0.key < $1.key }) {
            let sorted = keys.sorted()
            var start = 0
            let chunk = 500
            while start < sorted.count {
                let part = sorted[start..<min(start + chunk, sorted.count)]
                let sql = "SELECT Z_PK, Z_ENT FROM \(table) WHERE Z_PK IN (" + Array(repeating: "?", count: part.count).joined(separator: ",") + ")"
                try query(sql, part.map(SQLArgument.integer)) { row in entities[table, default: [:]][row.integer(0)] = try layout.entityName(row.integer(1)) }
                start += chunk
            }
        }
        func concrete(_ id: PersistentIdentifier) throws -> PersistentIdentifier {
            guard let table = layout.tables[id.entityName], table.isShared, case .integer(let key) = id.primaryKey,
                let entity = entities[table.name]?[key], entity != id.entityName
            else { return id }
            return try identifier(entity, key)
        }
        return try snapshots.map { snapshot in
            var copy = snapshot
            for (name, value) in snapshot.values {
                switch value {
                case .toOne(let id?): copy.values[name] = .toOne(try concrete(id))
                case .toMany(let ids): copy.values[name] = .toMany(try ids.map(concrete))
                default: break
                }
            }
            return copy
        }
    }

    /// An `.externalStorage` column: the bytes after the inline marker, or the file named
    /// after the external one.
    private func externalValue(_ row: SQLiteStatement, _ index: Int32) throws -> PropertyValue {
        guard let stored = row.data(index) else { return .null }
        guard let marker = stored.first else { throw ColumnValues.damaged("an external-storage column without its marker") }
        switch marker {
        case ColumnValues.inlineMarker: return .data(stored.dropFirst())
        case ColumnValues.externalMarker: return .data(try files.read(String(decoding: stored.dropFirst(), as: UTF8.self)))
        default: throw ColumnValues.damaged("an external-storage column with the unknown marker \(marker)")
        }
    }

    /// The targets (`Z_PK`s, ascending) of the to-many `link` of each of `owners`: one query
    /// over the foreign key or the join table (a scan of it for a large set of owners, keyed
    /// lookups in chunks of 500 for a small one).
    func toMany(_ link: CoreDataLayout.Link, owners: [Int64]) throws -> [Int64: [Int64]] {
        guard !owners.isEmpty else { return [:] }
        let select: String
        let ownerColumn: String
        switch link.storage {
        case .foreignKey: return [:]
        case let .inverseForeignKey(table, column):
            select = "SELECT \(column), Z_PK FROM \(table)"
            ownerColumn = column
        case let .join(table, own, other):
            select = "SELECT \(own), \(other) FROM \(table)"
            ownerColumn = own
        }
        var result: [Int64: [Int64]] = [:]
        if owners.count > 4_096 {
            let wanted = Set(owners)
            try query("\(select) WHERE \(ownerColumn) IS NOT NULL", []) { row in
                let owner = row.integer(0)
                if wanted.contains(owner) { result[owner, default: []].append(row.integer(1)) }
            }
        } else {
            let chunk = 500
            let sql = "\(select) WHERE \(ownerColumn) IN (" + Array(repeating: "?", count: chunk).joined(separator: ",") + ")"
            var start = 0
            while start < owners.count {
                let part = owners[start..<min(start + chunk, owners.count)]
                // Padded with the last key, so that one statement serves every chunk.
                let arguments = (part + Array(repeating: part.last!, count: chunk - part.count)).map(SQLArgument.integer)
                try query(sql, arguments) { row in result[row.integer(0), default: []].append(row.integer(1)) }
                start += chunk
            }
        }
        for key in result.keys { result[key]!.sort() }
        return result
    }

    /// The full snapshots of `ids` (of one entity), in no particular order.
    func objects(_ entity: String, _ keys: [Int64]) throws -> [DefaultSnapshot] {
        let table = try layout.table(entity)
        let columns = selectList([table], wanted: nil, alias: "t0")
        let chunk = 500
        var result: [DefaultSnapshot] = []
        var start = 0
        let sorted = keys.sorted()
        while start < sorted.count {
            let part = sorted[start..<min(start + chunk, sorted.count)]
            let arguments = (part + Array(repeating: part.last!, count: chunk - part.count)).map(SQLArgument.integer)
            let sql = "SELECT \(columns.sql) FROM \(table.name) t0 WHERE t0.Z_PK IN (" + Array(repeating: "?", count: chunk).joined(separator: ",") + ")"
            result += try readObjects(table, sql, arguments, columns: columns)
            start += chunk
        }
        return result
    }

    /// The objects the prefetch paths reach from `snapshots`, by identifier (each path read as
    /// ``PredicateEvaluator/targets(at:of:)`` reads it: to-ones, then a last relationship).
    private func prefetched(from snapshots: [DefaultSnapshot], through paths: [PropertyPath]) throws -> [PersistentIdentifier: DefaultSnapshot] {
        var result: [PersistentIdentifier: DefaultSnapshot] = [:]
        for path in paths {
            var level = snapshots
            for (i, name) in path.components.enumerated() {
                var byEntity: [String: Set<Int64>] = [:]
                for snapshot in level {
                    for id in snapshot.values[name]?.referencedIdentifiers ?? [] {
                        if case .integer(let key) = id.primaryKey { byEntity[id.entityName, default: []].insert(key) }
                    }
                }
                var next: [DefaultSnapshot] = []
                for (entity, keys) in byEntity.sorted(by: { $0.key < $1.key }) {
                    if i == path.components.count - 1 {
                        for snapshot in try objects(entity, Array(keys)) { result[snapshot.persistentIdentifier] = snapshot }
                    } else {
                        next += try objects(entity, Array(keys))
                    }
                }
                level = next
            }
        }
        return result
    }
}
