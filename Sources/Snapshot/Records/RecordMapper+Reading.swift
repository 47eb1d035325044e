import Engine
import Foundation

extension RecordMapper {
    /// The record bytes of `root`/`pk`, or `nil` when there is none. Counts as one record read.
    func readRecord(root: String, primaryKey pk: UUID) throws -> [UInt8]? {
        let key = RecordKeys.record(root: root, primaryKey: pk)
        guard let bytes = try records.value(forKey: key) else { return nil }
        countRecordRead()
        return bytes
    }

    /// The full snapshot of `id` (to-many arrays rebuilt when `toMany`), or `nil` when the store
    /// holds no such object (of that entity).
    func load(_ id: PersistentIdentifier, toMany: Bool = true) throws -> DefaultSnapshot? {
        guard let record = record(of: id), let bytes = try readRecord(root: record.root, primaryKey: record.primaryKey) else { return nil }
        return try snapshot(of: id, fromRecord: bytes, record, toMany: toMany)
    }

    /// ``load(_:toMany:)`` for each of `ids`, in order, the records read in one batch
    /// (``RecordSpace/values(forKeys:)``).
    /// The to-many arrays of the objects found are read in one sorted pass per relationship
    /// (``targets(of:through:entity:)``), not one scan per object.
    func loadAll(_ ids: [PersistentIdentifier], toMany: Bool) throws -> [(PersistentIdentifier, DefaultSnapshot?)] {
        let places = ids.map(record(of:))
        let found = try records.values(forKeys: places.compactMap { $0?.key })
        var next = found.makeIterator()
        var loaded = try zip(ids, places).map { id, record in
            guard let record, let bytes = next.next() ?? nil else { return (id, DefaultSnapshot?.none) }
            countRecordRead()
            return (id, try snapshot(of: id, fromRecord: bytes, record, toMany: toMany && format != .format2))
        }
        guard toMany && format == .format2 else { return loaded }
        let positions = loaded.indices.filter { loaded[$0].1 != nil }
        var snapshots = positions.map { loaded[$0].1! }
        try fillToMany(&snapshots, bulk: false)
        for (k, position) in positions.enumerated() { loaded[position].1 = snapshots[k] }
        return loaded
    }

    /// Where the record of `id` is: its root, primary key and key; `nil` when `id` cannot name
    /// an object of this store.
    private func record(of id: PersistentIdentifier) -> (root: String, primaryKey: UUID, key: [UInt8])? {
        guard id.storeIdentifier == storeIdentifier, let pk = Self.primaryKey(of: id), schema.entity(named: id.entityName) != nil else { return nil }
        let root = layout.root(of: id.entityName)
        return (root, pk, RecordKeys.record(root: root, primaryKey: pk))
    }

    /// The snapshot of `id` from its record's `bytes`: `nil` when the record is of another
    /// entity than `id` names.
    private func snapshot(
        of id: PersistentIdentifier, fromRecord bytes: [UInt8], _ record: (root: String, primaryKey: UUID, key: [UInt8]), toMany: Bool
    ) throws -> DefaultSnapshot? {
        let snapshot = try self.snapshot(ofRecord: bytes, key: record.key, primaryKey: record.primaryKey, root: record.root, toMany: toMany)
        return snapshot.persistentIdentifier.entityName == id.entityName ? snapshot : nil
    }

    /// The concrete entity a record names, read from its header alone.
    func entityName(ofRecord bytes: [UInt8], key: [UInt8]) throws(RecordDecodingError) -> String {
        switch format {
        case .format1: try Format1Record.entityName(in: bytes, key: key)
        case .format2: try RecordReader(bytes, key: key).entityName
        }
    }

    /// The snapshot a record (`bytes` under `key`) holds: its attributes (assets read back),
    /// to-one references, and (when `toMany`) the to-many arrays rebuilt from back references
    /// and links. With `only`, just those properties (a partial snapshot, for evaluating a
    /// predicate): the other fields' bodies are not decoded.
    func snapshot(
        ofRecord bytes: [UInt8], key: [UInt8], primaryKey pk: UUID, root: String, toMany: Bool, only: Set<String>? = nil
    ) throws -> DefaultSnapshot {
        if format == .format1 {
            return try format1Snapshot(
                of: try Format1Record(decoding: bytes, key: key, only: only.map(Self.format1FieldNames)), key: key, primaryKey: pk, root: root,
                toMany: toMany, only: only)
        }
        return try snapshot(of: try RecordReader(bytes, key: key), primaryKey: pk, root: root, toMany: toMany, only: only)
    }

    /// The field list of `record`'s entity, once the record is known to be of an entity of
    /// `root` holding no more fields than the entity has.
    func checkedFields(of record: RecordReader, root: String) throws(RecordDecodingError) -> RecordFieldList {
        let entity = record.entityName
        guard let fields = layout.recordFieldsIfEntity(entity), layout.root(of: entity) == root else {
            throw RecordDecodingError("a record of \(entity), which is not an entity of the root \(root)", key: record.key)
        }
        guard record.fieldCount <= fields.count else {
            throw RecordDecodingError("a record of \(record.fieldCount) fields, more than the \(fields.count) of \(entity)", key: record.key)
        }
        return fields
    }

    /// As ``snapshot(ofRecord:key:primaryKey:root:toMany:only:)``, from a parsed record.
    func snapshot(of record: RecordReader, primaryKey pk: UUID, root: String, toMany: Bool, only: Set<String>? = nil) throws -> DefaultSnapshot {
        let entity = record.entityName
        let fields = try checkedFields(of: record, root: root)
        let id = try identifier(entity: entity, primaryKey: pk)
        var values: [String: PropertyValue] = Dictionary(minimumCapacity: fields.count)
        for field in fields.fields {
            if let only, !only.contains(field.name) { continue }
            values[field.name] = try value(of: field, in: record, primaryKey: pk, root: root)
        }
        if toMany {
            for relationship in layout.toManyRelationships(of: entity) {
                if let only, !only.contains(relationship.name) { continue }
                values[relationship.name] = .toMany(try targets(of: id, through: relationship))
            }
        }
        return DefaultSnapshot(persistentIdentifier: id, values: values)
    }

    /// The value of `field` in `record` (of primary key `pk`, in `root`): its asset read back
    /// when the record marks it held in one.
    func value(of field: RecordField, in record: RecordReader, primaryKey pk: UUID, root: String) throws -> PropertyValue {
        guard record.isAsset(field.index) else { return try record.value(of: field, storeIdentifier: storeIdentifier) }
        guard case .attribute(let attribute) = field.kind else {
            throw RecordDecodingError("the to-one \(field.name) marked as held in an asset", key: record.key)
        }
        return try readAsset(RecordKeys.asset(root: root, primaryKey: pk, attribute: attribute.name), type: attribute.valueType, record: record.key)
    }

    func readAsset(_ key: [UInt8], type: Schema.Attribute.ValueType, record: [UInt8]) throws -> PropertyValue {
        // An asset a shared commit's earlier save put, not yet committed, is read from there.
        if !records.pending.isEmpty, records.pending.value(forKey: records.engineKey(key)) != nil {
            guard let bytes = try records.value(forKey: key) else { throw RecordDecodingError("the asset it names is missing", key: record) }
            return try Self.assetValue(bytes, type: type, key: key)
        }
        guard let buffer = try records.engine.valueBuffer(forKey: records.engineKey(key)) else {
            throw RecordDecodingError("the asset it names is missing", key: record)
        }
        // The engine's buffer becomes the Data's storage, without a copy (its base is never nil).
        if type == .data, let base = buffer.bytes.baseAddress {
            return .data(
                Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: buffer.bytes.count, deallocator: .custom { _, _ in _ = buffer }))
        }
        return try Self.assetValue(Array(buffer.bytes), type: type, key: key)
    }

    /// An asset's value from its bytes: the bytes themselves for a `data` attribute, else the
    /// value encoding they hold.
    private static func assetValue(_ bytes: [UInt8], type: Schema.Attribute.ValueType, key: [UInt8]) throws -> PropertyValue {
        if type == .data { return .data(Data(bytes)) }
        var reader = ByteReader(bytes, key: key)
        let value = try FieldValueCoding.decode(&reader)
        guard reader.isAtEnd else { throw reader.failure("bytes after an asset's value") }
        return value
    }

    /// The targets of the to-many `relationship` of `id`, in canonical order.
    func targets(of id: PersistentIdentifier, through relationship: Schema.Relationship) throws -> [PersistentIdentifier] {
        if format == .format2 { return try targets(of: [id], through: relationship, entity: id.entityName)[0] }
        guard let pk = Self.primaryKey(of: id) else { return [] }
        var result: [PersistentIdentifier] = []
        if !layout.usesJoinRecords(relationship), let inverse = relationship.inverse {
            let prefix = RecordKeys.backReferencePrefix(
                destinationRoot: layout.root(of: id.entityName), destination: pk,
                relationship: layout.qualifiedName(inverse, in: relationship.destination))
            var cursor = try records.scan(prefix: prefix)
            while let entry = try cursor.next() {
                let (entity, source) = try RecordKeys.parseBackReferenceSuffix(entry.key, prefixLength: prefix.count)
                result.append(try identifier(entity: entity, primaryKey: source))
            }
        } else {
            let join = layout.join(relationship, of: id.entityName)
            for mirror in [false, true] where join.isSymmetric || join.isSideA != mirror {
                let prefix = joinPrefix(mirror: mirror, join, id)
                var cursor = try records.scan(prefix: prefix)
                while let entry = try cursor.next() {
                    let (entity, other) = try joinTarget(entry.key, objectPrefixLength: prefix.count)
                    // A link of an object to itself is both keys of a relationship that is its
                    // own inverse: listed once.
                    if mirror && join.isSymmetric && other == pk { continue }
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
                let prefix = joinPrefix(mirror: join.isSideA, join, id)
                var cursor = try records.scan(prefix: prefix)
                while let entry = try cursor.next() {
                    let (sourceEntity, source) = try joinTarget(entry.key, objectPrefixLength: prefix.count)
                    result.append((relationship.name, try identifier(entity: sourceEntity, primaryKey: source)))
                }
            }
        }
        return result
    }

    /// The prefix of every link of `id` on one side of `join` (`N` keys when `mirror`).
    func joinPrefix(mirror: Bool, _ join: RecordLayout.Join, _ id: PersistentIdentifier) -> [UInt8] {
        switch format {
        case .format1:
            Self.format1JoinPrefix(mirror: mirror, entities: join.entities, relationships: join.relationships, recordName: RecordName.of(id))
        case .format2:
            RecordKeys.joinRelationshipPrefix(mirror: mirror, entities: join.entities, relationships: join.relationships)
                + (Self.primaryKey(of: id).map(RecordKeys.bytes(of:)) ?? [])
        }
    }

    /// The far end of a link key found under an object's prefix of `objectPrefixLength` bytes.
    func joinTarget(_ key: [UInt8], objectPrefixLength: Int) throws(RecordDecodingError) -> (entity: String, primaryKey: UUID) {
        switch format {
        case .format1:
            guard let parsed = RecordName.parse(utf8: key.dropFirst(objectPrefixLength)) else {
                throw RecordDecodingError("a join key whose last component is not a record name", key: key)
            }
            return parsed
        case .format2: return try RecordKeys.parseJoinTarget(key, objectPrefixLength: objectPrefixLength)
        }
    }

    /// A link key under a relationship's prefix of `prefixLength` bytes: the near end's primary
    /// key, and the far end.
    func joinComponents(_ key: [UInt8], prefixLength: Int) throws(RecordDecodingError) -> (here: UUID, entity: String, other: UUID) {
        switch format {
        case .format1:
            let rest = key[prefixLength...]
            guard let zero = rest.firstIndex(of: 0), let (_, here) = RecordName.parse(utf8: rest[..<zero]),
                let (otherEntity, other) = RecordName.parse(utf8: rest[(zero + 1)...])
            else { throw RecordDecodingError("a join key whose components are not record names", key: key) }
            return (here, otherEntity, other)
        case .format2:
            let parsed = try RecordKeys.parseJoinSuffix(key, prefixLength: prefixLength)
            return (parsed.primaryKey, parsed.otherEntity, parsed.other)
        }
    }

    /// Every stored to-one reference to `id`: the relationship (`<DeclaringEntity>.<name>`) and
    /// the source.
    func incomingReferences(to id: PersistentIdentifier) throws -> [(relationship: String, source: PersistentIdentifier)] {
        guard let pk = Self.primaryKey(of: id) else { return [] }
        let prefix = RecordKeys.backReferencePrefix(destinationRoot: layout.root(of: id.entityName), destination: pk)
        var result: [(String, PersistentIdentifier)] = []
        var cursor = try records.scan(prefix: prefix)
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
