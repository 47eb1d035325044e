import Engine
import Foundation

extension RecordMapper {
    /// `snapshots` (read without their to-many arrays) with every to-many relationship of
    /// their entities filled in, in canonical order, as ``targets(of:through:)`` reads them.
    ///
    /// With `bulk`, each relationship's keys are read in one scan of all of them (every join
    /// record of the relationship, every back reference into the root) instead of one scan per
    /// object: cheaper when the snapshots are a large part of their root's objects.
    func fillingToMany(_ snapshots: [DefaultSnapshot], bulk: Bool) throws -> [DefaultSnapshot] {
        guard !snapshots.isEmpty else { return snapshots }
        let table = bulk ? try allTargets(of: snapshots) : nil
        return try snapshots.map { snapshot in
            var filled = snapshot
            let id = snapshot.persistentIdentifier
            for field in layout.fields(of: id.entityName) {
                guard case .relationship(let r) = field.property, r.isToMany else { continue }
                if let table {
                    let found = Self.primaryKey(of: id).flatMap { table[$0]?[r.name] } ?? []
                    filled.values[r.name] = .toMany(found.sorted(by: Self.canonicalOrder))
                } else {
                    filled.values[r.name] = .toMany(try targets(of: id, through: r))
                }
            }
            return filled
        }
    }

    /// Primary key → to-many relationship name → targets (unsorted), for every object of the
    /// snapshots' entities, from one scan per relationship.
    private func allTargets(of snapshots: [DefaultSnapshot]) throws -> [UUID: [String: [PersistentIdentifier]]] {
        var table: [UUID: [String: [PersistentIdentifier]]] = [:]
        var entities = Set(snapshots.map(\.persistentIdentifier.entityName))
        // Same-named relationships of sibling entities share one scan when they share a join.
        var scannedJoins = Set<[UInt8]>()
        // Back references into each root: qualified to-one name → the to-many it fills.
        var backReferences: [String: [String: String]] = [:]
        while let entity = entities.popFirst() {
            let root = layout.root(of: entity)
            for field in layout.fields(of: entity) {
                guard case .relationship(let r) = field.property, r.isToMany else { continue }
                if !layout.usesJoinRecords(r), let inverse = r.inverse {
                    backReferences[root, default: [:]][layout.qualifiedName(inverse, in: r.destination)] = r.name
                    continue
                }
                let join = layout.join(r, of: entity)
                for mirror in [false, true] where join.isSymmetric || join.isSideA != mirror {
                    let prefix = RecordKeys.joinRelationshipPrefix(mirror: mirror, entities: join.entities, relationships: join.relationships)
                    guard scannedJoins.insert(prefix).inserted else { continue }
                    for entry in try engine.scan(prefix: prefix) {
                        let rest = entry.key[prefix.count...]
                        guard let zero = rest.firstIndex(of: 0), let (_, here) = RecordName.parse(utf8: rest[..<zero]),
                            let (otherEntity, other) = RecordName.parse(utf8: rest[(zero + 1)...])
                        else { throw RecordDecodingError("a join key whose components are not record names", key: entry.key) }
                        table[here, default: [:]][r.name, default: []].append(try identifier(entity: otherEntity, primaryKey: other))
                    }
                }
            }
        }
        for (root, relationships) in backReferences {
            let prefix = RecordKeys.backReferenceRootPrefix(destinationRoot: root)
            for entry in try engine.scan(prefix: prefix) {
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
                table[destination, default: [:]][toMany, default: []].append(try identifier(entity: entity, primaryKey: source))
            }
        }
        return table
    }
}
