import Engine
import Foundation

extension RecordMapper {
    /// The record of `root`/`pk`, decoded, or `nil` when there is none. Counts as one record read.
    func readRecord(root: String, primaryKey pk: UUID) throws -> RecordValue? {
        let key = RecordKeys.record(root: root, primaryKey: pk)
        guard let bytes = try engine.value(forKey: key) else { return nil }
        countRecordRead()
        return try RecordValue(decoding: bytes, key: key)
    }

    /// The full snapshot of `id` (to-many arrays rebuilt when `toMany`), or `nil` when the store
    /// holds no such object (of that entity).
    func load(_ id: PersistentIdentifier, toMany: Bool = true) throws -> DefaultSnapshot? {
        guard id.storeIdentifier == storeIdentifier, let pk = Self.primaryKey(of: id), schema.entity(named: id.entityName) != nil else { return nil }
        let root = layout.root(of: id.entityName)
        guard let record = try readRecord(root: root, primaryKey: pk) else { return nil }
        let snapshot = try self.snapshot(of: record, key: RecordKeys.record(root: root, primaryKey: pk), primaryKey: pk, root: root, toMany: toMany)
        return snapshot.persistentIdentifier.entityName == id.entityName ? snapshot : nil
    }

    /// The snapshot a record holds: its attributes (assets read back), to-one references, and
    /// (when `toMany`) the to-many arrays rebuilt from back references and join records.
    /// With `only`, just those properties (a partial snapshot, for evaluating a predicate).
    func snapshot(of record: RecordValue, key: [UInt8], primaryKey pk: UUID, root: String, toMany: Bool, only: Set<String>? = nil) throws -> DefaultSnapshot {
        guard case .string(let entity)? = record[RecordValue.entityNameField], schema.entity(named: entity) != nil, layout.root(of: entity) == root else {
            throw RecordDecodingError("a record without a known \(RecordValue.entityNameField) of root \(root)", key: key)
        }
        let id = try identifier(entity: entity, primaryKey: pk)
        let plan = layout.fields(of: entity)
        var values: [String: PropertyValue] = Dictionary(minimumCapacity: plan.count)
        var fields: [String: PropertyValue] = Dictionary(minimumCapacity: record.fields.count)
        for field in record.fields { fields[field.name] = field.value }
        for field in plan {
            if let only, !only.contains(field.property.name) { continue }
            switch field.property {
            case .attribute(let attribute):
                if attribute.options.contains(.ephemeral) { continue }
                if case .data(let assetKey)? = fields[field.assetName] {
                    values[attribute.name] = try readAsset(Array(assetKey), type: attribute.valueType, record: key)
                } else {
                    // No field: written before a lightweight migration added the attribute
                    // (records are not rewritten for it), so it holds the default.
                    values[attribute.name] = fields[field.name] ?? attribute.defaultValue ?? .null
                }
            case .relationship(let relationship) where !relationship.isToMany:
                switch fields[field.name] {
                case .string(let name)?:
                    guard let (targetEntity, targetPK) = RecordName.parse(name) else {
                        throw RecordDecodingError("\(field.name) holds \(name), not a record name", key: key)
                    }
                    values[relationship.name] = .toOne(try identifier(entity: targetEntity, primaryKey: targetPK))
                default:
                    values[relationship.name] = .toOne(nil)
                }
            case .relationship(let relationship):
                if toMany { values[relationship.name] = .toMany(try targets(of: id, through: relationship)) }
            }
        }
        return DefaultSnapshot(persistentIdentifier: id, values: values)
    }

    private func readAsset(_ key: [UInt8], type: Schema.Attribute.ValueType, record: [UInt8]) throws -> PropertyValue {
        guard let buffer = try engine.engine.valueBuffer(forKey: engine.engineKey(key)) else {
            throw RecordDecodingError("the asset it names is missing", key: record)
        }
        // The engine's buffer becomes the Data's storage, without a copy (its base is never nil).
        if type == .data, let base = buffer.bytes.baseAddress {
            return .data(Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: buffer.bytes.count, deallocator: .custom { _, _ in _ = buffer }))
        }
        let bytes = Array(buffer.bytes)
        var reader = ByteReader(bytes, key: key)
        let value = try FieldValueCoding.decode(&reader)
        guard reader.isAtEnd else { throw reader.failure("bytes after an asset's value") }
        return value
    }

    /// The targets of the to-many `relationship` of `id`, in canonical order.
    func targets(of id: PersistentIdentifier, through relationship: Schema.Relationship) throws -> [PersistentIdentifier] {
        guard let pk = Self.primaryKey(of: id) else { return [] }
        var result: [PersistentIdentifier] = []
        if !layout.usesJoinRecords(relationship), let inverse = relationship.inverse {
            let prefix = RecordKeys.backReferencePrefix(
                destinationRoot: layout.root(of: id.entityName), destination: pk,
                relationship: layout.qualifiedName(inverse, in: relationship.destination))
            var cursor = try engine.scan(prefix: prefix)
            while let entry = try cursor.next() {
                let (entity, source) = try RecordKeys.parseBackReferenceSuffix(entry.key, prefixLength: prefix.count)
                result.append(try identifier(entity: entity, primaryKey: source))
            }
        } else {
            let join = layout.join(relationship, of: id.entityName)
            for mirror in [false, true] where join.isSymmetric || join.isSideA != mirror {
                let prefix = RecordKeys.joinPrefix(mirror: mirror, entities: join.entities, relationships: join.relationships, recordName: RecordName.of(id))
                var cursor = try engine.scan(prefix: prefix)
                while let entry = try cursor.next() {
                    guard let (entity, other) = RecordName.parse(utf8: entry.key.dropFirst(prefix.count)) else {
                        throw RecordDecodingError("a join key whose last component is not a record name", key: entry.key)
                    }
                    result.append(try identifier(entity: entity, primaryKey: other))
                }
            }
        }
        return result.sorted(by: Self.canonicalOrder)
    }

    /// The objects whose to-many relationship without an inverse lists `id`, with that
    /// relationship's name (read from their join records, where `id` is the far end): the only
    /// references to `id` that `id`'s own snapshot does not name, besides to-one ones
    /// (``incomingReferences(to:)``).
    func incomingJoinSources(to id: PersistentIdentifier) throws -> [(relationship: String, source: PersistentIdentifier)] {
        var result: [(relationship: String, source: PersistentIdentifier)] = []
        for entity in schema.entities {
            for relationship in entity.relationships where relationship.inverse == nil && layout.usesJoinRecords(relationship) {
                guard schema.isEntity(id.entityName, kindOf: relationship.destination) else { continue }
                let join = layout.join(relationship, of: entity.name)
                // The far end is listed first in the mirror keys when the source is side A.
                let prefix = RecordKeys.joinPrefix(
                    mirror: join.isSideA, entities: join.entities, relationships: join.relationships, recordName: RecordName.of(id))
                var cursor = try engine.scan(prefix: prefix)
                while let entry = try cursor.next() {
                    guard let (sourceEntity, source) = RecordName.parse(utf8: entry.key.dropFirst(prefix.count)) else { throw RecordDecodingError("a join key whose last component is not a record name", key: entry.key) }
                    result.append((relationship.name, try identifier(entity: sourceEntity, primaryKey: source)))
                }
            }
        }
        return result
    }

    /// Every stored to-one reference to `id`: the relationship (`<DeclaringEntity>.<name>`) and
    /// the source.
    func incomingReferences(to id: PersistentIdentifier) throws -> [(relationship: String, source: PersistentIdentifier)] {
        guard let pk = Self.primaryKey(of: id) else { return [] }
        let prefix = RecordKeys.backReferencePrefix(destinationRoot: layout.root(of: id.entityName), destination: pk)
        var result: [(String, PersistentIdentifier)] = []
        var cursor = try engine.scan(prefix: prefix)
        while let entry = try cursor.next() {
            let rest = entry.key.dropFirst(prefix.count)
            guard let zero = rest.firstIndex(of: 0), let relationship = String(validating: entry.key[prefix.count..<zero], as: UTF8.self) else {
                throw RecordDecodingError("a malformed back reference key", key: entry.key)
            }
            let (entity, source) = try RecordKeys.parseBackReferenceSuffix(entry.key, prefixLength: zero + 1)
            result.append((relationship, try identifier(entity: entity, primaryKey: source)))
        }
        return result
    }
}
