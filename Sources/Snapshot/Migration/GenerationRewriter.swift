import Engine
import Foundation

/// Writes the objects of one generation, in the old schema, into another generation in the
/// new schema (FORMAT.md, "Migrations"): object by object in one scan of each root's records,
/// in commits of bounded size, so the data is never all in memory. The to-many targets an
/// object writes join records for are read from one streaming scan per join side
/// (``JoinCursor``), walked in step with the records, not one scan per object. Identities stay
/// (same primary keys; a renamed entity's objects get identifiers of the new name); values follow the ``SchemaMapping``; every entry of the
/// new generation — records, assets, back references, join records, index and uniqueness
/// entries — is derived anew, as a save would write it.
///
/// A dry run writes nothing and only checks what the new schema's uniqueness rules and
/// required attributes demand of the data (so a refused migration leaves the store
/// byte-identical); it keeps each uniqueness entry in memory (a few bytes per object under a
/// rule), nothing else.
struct GenerationRewriter {
    let mapping: SchemaMapping
    let source: RecordSpace
    /// `nil` for a dry run.
    let destination: RecordSpace?
    let storeIdentifier: String
    let assetThreshold: Int

    /// Commits of at most this many operations… (each commit is synced: fewer, larger ones
    /// save syncs, while a commit's batch stays a few MiB)
    static let chunkOperations = 65536
    /// …or about this many bytes.
    static let chunkBytes = 16 << 20

    var oldMapper: RecordMapper {
        RecordMapper(layout: RecordLayout(schema: mapping.old), engine: source, storeIdentifier: storeIdentifier, assetThreshold: assetThreshold, countRecordRead: {})
    }

    var newMapper: RecordMapper {
        RecordMapper(
            layout: RecordLayout(schema: mapping.new), engine: destination ?? source, storeIdentifier: storeIdentifier,
            assetThreshold: assetThreshold, countRecordRead: {})
    }

    func run() throws {
        let oldMapper = self.oldMapper, newMapper = self.newMapper
        var batch = WriteBatch()
        var bytes = 0
        /// Uniqueness entries written by this run and not yet committed (all of them in a dry run).
        var claimed: [[UInt8]: PersistentIdentifier] = [:]
        func flush() throws {
            guard let destination, !batch.isEmpty else { return }
            try destination.commit(batch)
            batch = WriteBatch()
            bytes = 0
            claimed.removeAll(keepingCapacity: true)
        }
        /// Old entity → how its objects are rewritten (`nil`: removed).
        var rewrites: [String: EntityRewrite?] = [:]
        for root in mapping.old.entities where root.superentityName == nil {
            // One streaming scan per join side and entity, walked in step with the records.
            var cursors: [String: [JoinCursor]] = [:]
            let prefix = RecordKeys.recordPrefix(root: root.name)
            for entry in try source.scan(prefix: prefix) {
                guard entry.key.count == prefix.count + 16 else { throw RecordDecodingError("a record key of the wrong length", key: entry.key) }
                let pk = RecordKeys.uuid(from: Array(entry.key.suffix(16)))
                let record = try RecordValue(decoding: try entry.value(), key: entry.key)
                let old = try oldMapper.snapshot(of: record, key: entry.key, primaryKey: pk, root: root.name, toMany: false)
                let oldEntity = old.persistentIdentifier.entityName
                if rewrites[oldEntity] == nil {
                    rewrites[oldEntity] = EntityRewrite(oldEntity: oldEntity, mapping: mapping, oldLayout: oldMapper.layout, newLayout: newMapper.layout)
                }
                guard let rewrite = rewrites[oldEntity] ?? nil else { continue }
                if cursors[oldEntity] == nil {
                    cursors[oldEntity] = try rewrite.joinPrefixes.map { try JoinCursor(source, relationshipPrefix: $0, entity: oldEntity) }
                }
                let snapshot = try transform(old, primaryKey: pk, rewrite: rewrite, cursors: &cursors[oldEntity, default: []], oldMapper: oldMapper, newMapper: newMapper)
                for (key, stored) in newMapper.entries(of: snapshot) {
                    if key.first == RecordKeys.uniqueTag { try claim(key, for: snapshot, old: old, claimed: &claimed, mapper: newMapper) }
                    guard destination != nil else { continue }
                    switch stored {
                    case .inline(let value):
                        batch.put(key, value)
                        bytes += key.count + value.count
                    case .external(let value):
                        batch.putExternal(key, value)
                        bytes += key.count + value.count
                    }
                }
                if batch.count >= Self.chunkOperations || bytes >= Self.chunkBytes { try flush() }
            }
        }
        try flush()
    }

    /// Refuses a uniqueness entry another object of the new generation already holds.
    private func claim(
        _ key: [UInt8], for snapshot: DefaultSnapshot, old: DefaultSnapshot, claimed: inout [[UInt8]: PersistentIdentifier], mapper: RecordMapper
    ) throws {
        var other = claimed[key]
        if other == nil, let destination, let bytes = try destination.value(forKey: key), bytes.count > 16,
            let entity = String(validating: bytes[16...], as: UTF8.self)
        {
            other = try mapper.identifier(entity: entity, primaryKey: RecordKeys.uuid(from: Array(bytes[..<16])))
        }
        if let other, other != snapshot.persistentIdentifier {
            let rule = mapper.uniqueKeys(of: snapshot).first { $0.0 == key }?.1 ?? []
            throw DataStoreError(
                .uniqueness,
                "The migration to the new schema gives \(other) and \(snapshot.persistentIdentifier) the same values of the uniqueness rule (\(rule.joined(separator: ", "))) of \(snapshot.persistentIdentifier.entityName); make them differ (in a custom stage's willMigrate, say) or drop the rule. The store is unchanged.",
                entityName: snapshot.persistentIdentifier.entityName, propertyName: rule.first, identifier: old.persistentIdentifier)
        }
        claimed[key] = snapshot.persistentIdentifier
    }

    /// `old` (of primary key `primaryKey`) in the new schema, following `rewrite`; its join
    /// targets come from `cursors`, which must be asked in ascending primary-key order.
    func transform(
        _ old: DefaultSnapshot, primaryKey pk: UUID, rewrite: EntityRewrite, cursors: inout [JoinCursor], oldMapper: RecordMapper, newMapper: RecordMapper
    ) throws -> DefaultSnapshot {
        let oldID = old.persistentIdentifier
        let entity = rewrite.entity
        let id = try newMapper.identifier(entity: entity, primaryKey: pk)
        func renamed(_ entity: String, _ primaryKey: UUID) throws -> PersistentIdentifier? {
            guard let e = mapping.newEntity[entity] else { return nil }
            return try newMapper.identifier(entity: e, primaryKey: primaryKey)
        }
        func renamed(_ target: PersistentIdentifier) throws -> PersistentIdentifier? {
            guard let tpk = RecordMapper.primaryKey(of: target) else { return nil }
            return try renamed(target.entityName, tpk)
        }
        var values: [String: PropertyValue] = Dictionary(minimumCapacity: rewrite.sources.count)
        for source in rewrite.sources {
            switch source {
            case let .attribute(a, oldName, fallback):
                var value = oldName.flatMap { old.values[$0] } ?? fallback ?? .null
                if value.isNull && !a.isOptional {
                    guard let d = fallback, !d.isNull else {
                        throw DataStoreError(
                            .missingValue,
                            "\(oldID) holds no \(oldName ?? a.name), which the new schema's \(entity).\(a.name) requires; give it a value in a custom stage's willMigrate, or a default. The store is unchanged.",
                            entityName: entity, propertyName: a.name, identifier: oldID)
                    }
                    value = d
                }
                values[a.name] = value
            case let .toOne(name, oldName):
                let target = oldName.flatMap { old.values[$0] }?.referencedIdentifiers.first
                values[name] = .toOne(try target.flatMap(renamed))
            case let .joinedToMany(name, indices):
                var targets: [PersistentIdentifier] = []
                for i in indices {
                    for (e, tpk) in try cursors[i].targets(of: pk) {
                        if let target = try renamed(e, tpk) { targets.append(target) }
                    }
                }
                values[name] = .toMany(targets.count > 1 ? targets.sorted(by: RecordMapper.canonicalOrder) : targets)
            case let .readToMany(name, relationship):
                values[name] = .toMany(try oldMapper.targets(of: oldID, through: relationship).compactMap(renamed))
            case .emptyToMany(let name):
                values[name] = .toMany([])
            }
        }
        return DefaultSnapshot(persistentIdentifier: id, values: values)
    }
}
