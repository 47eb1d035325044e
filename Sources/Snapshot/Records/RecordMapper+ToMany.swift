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
            // Each entity's objects together: one sorted walk per relationship of the entity.
            var positions: [String: [Int]] = [:]
            for i in snapshots.indices { positions[snapshots[i].persistentIdentifier.entityName, default: []].append(i) }
            for (entity, members) in positions {
                let ids = members.map { snapshots[$0].persistentIdentifier }
                for relationship in layout.toManyRelationships(of: entity) {
                    let found = try targets(of: ids, through: relationship, entity: entity)
                    for (k, position) in members.enumerated() { snapshots[position].values[relationship.name] = .toMany(found[k]) }
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
                    var cursor = try records.scan(prefix: prefix)
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
            var cursor = try records.scan(prefix: prefix)
            while let entry = try cursor.next() {
                let rest = entry.key[prefix.count...]
                guard rest.count > 16 else { throw RecordDecodingError("a malformed back reference key", key: entry.key) }
                let nameStart = rest.startIndex + 16
                guard let zero = rest[nameStart...].firstIndex(of: 0) else {
                    throw RecordDecodingError("a malformed back reference key", key: entry.key)
                }
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

    /// The targets of the to-many `relationship` of each of `ids` (objects of `entity`), each
    /// list in canonical order, read in **one sorted pass**: the objects' key prefixes (their
    /// back references, or their link keys on each side that lists them) are sorted, and one
    /// scan of the relationship's keys seeks from each prefix to the next in key order, reading
    /// the keys under each: the cost is a seek per object plus a step per target, not a scan
    /// opened per object. An identifier that names no object of this store has no targets.
    func targets(of ids: [PersistentIdentifier], through relationship: Schema.Relationship, entity: String) throws -> [[PersistentIdentifier]] {
        var result = [[PersistentIdentifier]](repeating: [], count: ids.count)
        guard !ids.isEmpty else { return result }
        guard format == .format2 else {
            for (i, id) in ids.enumerated() { result[i] = try targets(of: id, through: relationship) }
            return result
        }
        let pks = ids.map { id in Self.primaryKey(of: id) }
        /// Reads, for each object, the keys under its prefix (`prefix(pk)`), passing each key and
        /// the prefix's length to `take`.
        func walk(_ prefix: (UUID) -> [UInt8], _ take: (Int, [UInt8], Int) throws -> Void) throws {
            var prefixes: [(position: Int, prefix: [UInt8])] = []
            for (i, pk) in pks.enumerated() { if let pk { prefixes.append((i, prefix(pk))) } }
            guard !prefixes.isEmpty else { return }
            prefixes.sort { $0.prefix.lexicographicallyPrecedes($1.prefix) }
            let range = LogStore.KeyRange(
                lower: .inclusive(prefixes[0].prefix), upper: LogStore.KeyRange.prefix(prefixes[prefixes.count - 1].prefix).upper)
            var cursor = try records.scan(range)
            // The key that ended the last prefix's run: the first key above it. When it is at or
            // above the next (greater) prefix too, no key lies between them, and the scan already
            // stands where a seek would put it (objects read in key order, as a verify or a
            // prefetch of neighbours reads them, cost a step each, not a seek).
            var next: RecordSpace.Scan.Entry?
            var previous: [UInt8]?
            for (position, prefix) in prefixes {
                var entry: RecordSpace.Scan.Entry?
                if let following = next, let previous, previous.lexicographicallyPrecedes(prefix),
                    !following.key.lexicographicallyPrecedes(prefix)
                {
                    entry = following
                } else {
                    try cursor.seek(to: prefix)
                    entry = try cursor.next()
                }
                next = nil
                while let current = entry {
                    guard current.key.starts(with: prefix) else {
                        next = current
                        break
                    }
                    try take(position, current.key, prefix.count)
                    entry = try cursor.next()
                }
                previous = prefix
            }
        }
        if !layout.usesJoinRecords(relationship), let inverse = relationship.inverse {
            let root = layout.root(of: entity)
            let name = layout.qualifiedName(inverse, in: relationship.destination)
            try walk({ pk in RecordKeys.backReferencePrefix(destinationRoot: root, destination: pk, relationship: name) }) {
                position, key, prefixLength in
                let (source, sourcePK) = try RecordKeys.parseBackReferenceSuffix(key, prefixLength: prefixLength)
                result[position].append(try identifier(entity: source, primaryKey: sourcePK))
            }
        } else {
            let join = layout.join(relationship, of: entity)
            for mirror in [false, true] where join.isSymmetric || join.isSideA != mirror {
                let relationshipPrefix = RecordKeys.joinRelationshipPrefix(mirror: mirror, entities: join.entities, relationships: join.relationships)
                try walk({ pk in relationshipPrefix + RecordKeys.bytes(of: pk) }) { position, key, prefixLength in
                    let (other, otherPK) = try RecordKeys.parseJoinTarget(key, objectPrefixLength: prefixLength)
                    // A link of an object to itself is both keys of a relationship that is its
                    // own inverse: listed once.
                    if mirror && join.isSymmetric && otherPK == pks[position] { return }
                    result[position].append(try identifier(entity: other, primaryKey: otherPK))
                }
            }
        }
        for i in result.indices where result[i].count > 1 { result[i].sort(by: Self.canonicalOrder) }
        return result
    }
}
