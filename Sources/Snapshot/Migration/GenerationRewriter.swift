import Engine
import Foundation

/// Writes the objects of one generation, in the old schema, into another generation in the
/// new schema (FORMAT.md, "Migrations"): object by object, in commits of bounded size, so the
/// data is never all in memory. Identities stay (same primary keys; a renamed entity's objects
/// get identifiers of the new name); values follow the ``SchemaMapping``; every entry of the
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

    /// Commits of at most this many operations…
    static let chunkOperations = 16384
    /// …or about this many bytes.
    static let chunkBytes = 8 << 20

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
        for root in mapping.old.entities where root.superentityName == nil {
            let prefix = RecordKeys.recordPrefix(root: root.name)
            for entry in try source.scan(prefix: prefix) {
                guard entry.key.count == prefix.count + 16 else { throw RecordDecodingError("a record key of the wrong length", key: entry.key) }
                let pk = RecordKeys.uuid(from: Array(entry.key.suffix(16)))
                let record = try RecordValue(decoding: try entry.value(), key: entry.key)
                let old = try oldMapper.snapshot(of: record, key: entry.key, primaryKey: pk, root: root.name, toMany: false)
                guard let snapshot = try transform(old, oldMapper: oldMapper, newMapper: newMapper) else { continue }
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

    /// `old` in the new schema, or `nil` when its entity is removed.
    func transform(_ old: DefaultSnapshot, oldMapper: RecordMapper, newMapper: RecordMapper) throws -> DefaultSnapshot? {
        let oldID = old.persistentIdentifier
        guard let entity = mapping.newEntity[oldID.entityName], let pk = RecordMapper.primaryKey(of: oldID) else { return nil }
        let id = try newMapper.identifier(entity: entity, primaryKey: pk)
        func renamed(_ target: PersistentIdentifier) throws -> PersistentIdentifier? {
            guard let e = mapping.newEntity[target.entityName], let tpk = RecordMapper.primaryKey(of: target) else { return nil }
            return try newMapper.identifier(entity: e, primaryKey: tpk)
        }
        var values: [String: PropertyValue] = [:]
        for property in mapping.new.allProperties(of: entity) {
            let oldName = mapping.oldName(ofProperty: property.name, inNew: entity)
            switch property {
            case .attribute(let a):
                var value = oldName.flatMap { old.values[$0] } ?? a.defaultValue ?? .null
                if value.isNull && !a.isOptional {
                    guard let d = a.defaultValue, !d.isNull else {
                        throw DataStoreError(
                            .missingValue,
                            "\(oldID) holds no \(oldName ?? a.name), which the new schema's \(entity).\(a.name) requires; give it a value in a custom stage's willMigrate, or a default. The store is unchanged.",
                            entityName: entity, propertyName: a.name, identifier: oldID)
                    }
                    value = d
                }
                values[a.name] = value
            case .relationship(let r) where !r.isToMany:
                let target = oldName.flatMap { old.values[$0] }?.referencedIdentifiers.first
                values[r.name] = .toOne(try target.flatMap(renamed))
            case .relationship(let r):
                // Only the side that writes join records needs its targets; the others are
                // rebuilt from keys other objects write.
                guard newMapper.layout.usesJoinRecords(r), newMapper.layout.writesJoinRecords(r, of: entity), let oldName,
                    let oldRelationship = mapping.old.relationship(named: oldName, in: oldID.entityName)
                else {
                    values[r.name] = .toMany([])
                    continue
                }
                values[r.name] = .toMany(try oldMapper.targets(of: oldID, through: oldRelationship).compactMap(renamed))
            }
        }
        return DefaultSnapshot(persistentIdentifier: id, values: values)
    }
}
