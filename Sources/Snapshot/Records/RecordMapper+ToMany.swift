import Engine
import Foundation

extension RecordMapper {
    /// Fills in every to-many relationship of `snapshots` (read without their to-many arrays),
    /// in canonical order, as ``targets(of:through:)`` reads them.
    ///
    /// With `bulk`, each relationship's keys are read in one scan of all of them (every join
    /// record of the relationship, every back reference into the root) instead of one scan per
    /// object: cheaper when the snapshots are a large part of their root's objects.
    func fillToMany(_ snapshots: inout [DefaultSnapshot], bulk: Bool) throws {
        guard !snapshots.isEmpty else { return }
        guard bulk else {
            for i in snapshots.indices {
                for (name, targets) in try toManyValues(of: snapshots[i].persistentIdentifier, from: nil) {
                    snapshots[i].values[name] = .toMany(targets)
                }
            }
            return
        }
        let table = try allTargets(of: snapshots)
        // Each relationship's column of the table, looked up once per run of snapshots of one
        // entity rather than once per snapshot.
        var entity = ""
        var columns: [(name: String, targets: [UUID: [PersistentIdentifier]])] = []
        for i in snapshots.indices {
            let id = snapshots[i].persistentIdentifier
            if i == 0 || id.entityName != entity {
                entity = id.entityName
                columns = layout.toManyRelationships(of: entity).map { ($0.name, table[$0.name] ?? [:]) }
            }
            guard let pk = Self.primaryKey(of: id) else {
                for column in columns { snapshots[i].values[column.name] = .toMany([]) }
                continue
            }
            for column in columns {
                let found = column.targets[pk] ?? []
                snapshots[i].values[column.name] = .toMany(found.count > 1 ? found.sorted(by: Self.canonicalOrder) : found)
            }
        }
    }

    /// Relationship name → canonically ordered targets, for each to-many relationship of `id`:
    /// from `table` when given, else from the object's own keys.
    private func toManyValues(of id: PersistentIdentifier, from table: [String: [UUID: [PersistentIdentifier]]]?) throws -> [(String, [PersistentIdentifier])] {
        let pk = Self.primaryKey(of: id)
        var result: [(String, [PersistentIdentifier])] = []
        for r in layout.toManyRelationships(of: id.entityName) {
            guard let table else {
                result.append((r.name, try targets(of: id, through: r)))
                continue
            }
            let found = pk.flatMap { table[r.name]?[$0] } ?? []
            result.append((r.name, found.count > 1 ? found.sorted(by: Self.canonicalOrder) : found))
        }
        return result
    }

    /// To-many relationship name → primary key → targets (unsorted), for every object of the
    /// snapshots' entities, from one scan per relationship.
    private func allTargets(of snapshots: [DefaultSnapshot]) throws -> [String: [UUID: [PersistentIdentifier]]] {
        var table: [String: [UUID: [PersistentIdentifier]]] = [:]
        var entities = Set(snapshots.map(\.persistentIdentifier.entityName))
        // Same-named relationships of sibling entities share one scan when they share a join.
        var scannedJoins = Set<[UInt8]>()
        // Back references into each root: qualified to-one name → the to-many it fills.
        var backReferences: [String: [String: String]] = [:]
        while let entity = entities.popFirst() {
            let root = layout.root(of: entity)
            for r in layout.toManyRelationships(of: entity) {
                if !layout.usesJoinRecords(r), let inverse = r.inverse {
                    backReferences[root, default: [:]][layout.qualifiedName(inverse, in: r.destination)] = r.name
                    continue
                }
                let join = layout.join(r, of: entity)
                for mirror in [false, true] where join.isSymmetric || join.isSideA != mirror {
                    let prefix = RecordKeys.joinRelationshipPrefix(mirror: mirror, entities: join.entities, relationships: join.relationships)
                    guard scannedJoins.insert(prefix).inserted else { continue }
                    var found = table.removeValue(forKey: r.name) ?? Dictionary(minimumCapacity: snapshots.count)
                    defer { table[r.name] = found }
                    var cursor = try engine.scan(prefix: prefix)
                    while let entry = try cursor.next() {
                        let (here, otherEntity, other) = try joinComponents(entry.key, prefixLength: prefix.count)
                        // A link of an object to itself (own inverse): listed once.
                        if mirror && join.isSymmetric && here == other { continue }
                        found[here, default: []].append(try identifier(entity: otherEntity, primaryKey: other))
                    }
                }
            }
        }
        for (root, relationships) in backReferences {
            var found: [String: [UUID: [PersistentIdentifier]]] = [:]
            defer { for (name, targets) in found { table[name, default: [:]].merge(targets) { $0 + $1 } } }
            let prefix = RecordKeys.backReferenceRootPrefix(destinationRoot: root)
            var cursor = try engine.scan(prefix: prefix)
            while let entry = try cursor.next() {
                let rest = entry.key[prefix.count...]
                guard rest.count > 16 else { throw RecordDecodingError("a malformed back reference key", key: entry.key) }
                let nameStart = rest.startIndex + 16
                guard let zero = rest[nameStart...].firstIndex(of: 0) else { throw RecordDecodingError("a malformed back reference key", key: entry.key) }
                guard let relationship = String(validating: rest[nameStart..<zero], as: UTF8.self) else {
                    throw RecordDecodingError("a malformed back reference key", key: entry.key)
                }
                guard let toMany = relationships[relationship] else { continue }
                let destination = RecordKeys.uuid(from: Array(rest[rest.startIndex..<nameStart]))
                let (entity, source) = try RecordKeys.parseBackReferenceSuffix(entry.key, prefixLength: zero + 1)
                found[toMany, default: [:]][destination, default: []].append(try identifier(entity: entity, primaryKey: source))
            }
        }
        return table
    }
}
