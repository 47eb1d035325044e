import Engine
import Foundation

/// One engine entry the record layer derives from an object: a value kept inline in the log,
/// or one written as a blob file (``WriteBatch/putExternal(_:_:)``).
enum StoredEntry: Equatable {
    case inline([UInt8])
    case external([UInt8])
}

/// The layout of records and links a generation holds (FORMAT.md, "Records"): format 1 (header
/// versions 1 to 3: named fields, `CDMR` join record values), or format 2 (header version 4:
/// serial-typed records, links as keys without values).
enum RecordsFormat: Sendable {
    case format1, format2
}

/// Maps snapshots to the engine entries that store them and back (FORMAT.md, "Records (the
/// Snapshot layer)").
struct RecordMapper {
    let layout: RecordLayout
    /// The generation's records in the engine's key space.
    let records: RecordSpace
    let storeIdentifier: String
    /// Values whose record encoding is longer than this go to an asset, as
    /// externalStorage ones do: the engine's blob threshold.
    let assetThreshold: Int
    let countRecordRead: () -> Void
    /// The records format of the generation read (``RecordsFormat/format1`` only while a
    /// store of header version 3 or older is upgraded); entries are always written in format 2.
    var format: RecordsFormat = .format2

    var schema: Schema { layout.schema }

    static func primaryKey(of id: PersistentIdentifier) -> UUID? {
        if case .uuid(let uuid) = id.primaryKey { return uuid }
        return nil
    }

    /// The canonical order of to-many arrays: by entity name, then primary key.
    static func canonicalOrder(_ a: PersistentIdentifier, _ b: PersistentIdentifier) -> Bool {
        if a.entityName != b.entityName { return a.entityName < b.entityName }
        return a.primaryKey < b.primaryKey
    }

    func identifier(entity: String, primaryKey: UUID) throws -> PersistentIdentifier {
        try PersistentIdentifier.identifier(for: storeIdentifier, entityName: entity, primaryKey: primaryKey)
    }

    func recordKey(_ id: PersistentIdentifier) -> [UInt8]? {
        Self.primaryKey(of: id).map { RecordKeys.record(root: layout.root(of: id.entityName), primaryKey: $0) }
    }

    /// Every entry that stores `snapshot` (of a stored or inserted object with a UUID primary
    /// key) in records format 2: its record, assets, back references, links (of the to-many
    /// arrays it holds), index and uniqueness entries. A key repeats only when an array lists a
    /// target twice.
    func entries(of snapshot: DefaultSnapshot) -> [(key: [UInt8], entry: StoredEntry)] {
        entries(of: layout.encoder(of: snapshot.persistentIdentifier.entityName).state(of: snapshot))
    }

    /// The entries of `snapshot`'s object, as above, from its state.
    func entries(of state: ObjectState) -> [(key: [UInt8], entry: StoredEntry)] {
        let id = state.persistentIdentifier
        guard let pk = Self.primaryKey(of: id) else { return [] }
        let encoder = layout.encoder(of: id.entityName)
        let encoded = encoder.encode(state, primaryKey: pk, assetThreshold: assetThreshold, layout: layout)
        return encoder.entries(of: state, encoded, primaryKey: pk, mapper: self)
    }

    /// The link and its mirror that store the link from `id` to `target` through the to-many
    /// `relationship`, when `id`'s entity is the side that writes them (none otherwise): two
    /// keys with empty values.
    func joinEntries(
        of id: PersistentIdentifier, through relationship: Schema.Relationship, to target: PersistentIdentifier
    ) -> [(key: [UInt8], entry: StoredEntry)] {
        let entity = id.entityName
        guard layout.usesJoinRecords(relationship), layout.writesJoinRecords(relationship, of: entity),
            let here = Self.primaryKey(of: id), let there = Self.primaryKey(of: target)
        else { return [] }
        let join = layout.join(relationship, of: entity)
        let hereIsA = join.isSymmetric ? JoinCursor.compare(here, there) <= 0 : join.isSideA
        let (a, b) = hereIsA ? ((entity, here), (target.entityName, there)) : ((target.entityName, there), (entity, here))
        return [
            (
                RecordKeys.join(
                    mirror: false, entities: join.entities, relationships: join.relationships, primaryKey: a.1, otherEntity: b.0, otherPrimaryKey: b.1
                ),
                .inline([])
            ),
            (
                RecordKeys.join(
                    mirror: true, entities: join.entities, relationships: join.relationships, primaryKey: b.1, otherEntity: a.0, otherPrimaryKey: a.1),
                .inline([])
            ),
        ]
    }

    /// The stored object `id` without its to-many arrays, with its record's bytes as stored;
    /// `nil` when the store holds no such object (of that entity).
    func loadRecord(_ id: PersistentIdentifier) throws -> (snapshot: DefaultSnapshot, bytes: [UInt8])? {
        guard id.storeIdentifier == storeIdentifier, let pk = Self.primaryKey(of: id), schema.entity(named: id.entityName) != nil else { return nil }
        let root = layout.root(of: id.entityName)
        guard let bytes = try readRecord(root: root, primaryKey: pk) else { return nil }
        let snapshot = try self.snapshot(
            ofRecord: bytes, key: RecordKeys.record(root: root, primaryKey: pk), primaryKey: pk, root: root, toMany: false)
        return snapshot.persistentIdentifier.entityName == id.entityName ? (snapshot, bytes) : nil
    }

    /// The stored object `id` as an ``ObjectState`` (without its to-many arrays), decoded from
    /// its record's fields by index into slots, with its record's bytes as stored; `nil` when
    /// the store holds no such object (of that entity). The same checks and errors as
    /// ``loadRecord(_:)``.
    func loadState(_ id: PersistentIdentifier) throws -> (state: ObjectState, bytes: [UInt8])? {
        if format == .format1 {
            // Only while a store of header version 3 or older is upgraded.
            return try loadRecord(id).map { (layout.encoder(of: id.entityName).state(of: $0.snapshot), $0.bytes) }
        }
        guard id.storeIdentifier == storeIdentifier, let pk = Self.primaryKey(of: id), schema.entity(named: id.entityName) != nil else { return nil }
        let root = layout.root(of: id.entityName)
        guard let bytes = try readRecord(root: root, primaryKey: pk) else { return nil }
        let record = try RecordReader(bytes, key: RecordKeys.record(root: root, primaryKey: pk))
        let fields = try checkedFields(of: record, root: root)
        let stateID = try identifier(entity: record.entityName, primaryKey: pk)
        var state = ObjectState(stateID, table: layout.slotTable(of: record.entityName))
        for field in fields.fields {
            state.values.slots[field.index] = try value(of: field, in: record, primaryKey: pk, root: root)
        }
        return record.entityName == id.entityName ? (state, bytes) : nil
    }

    /// The index entries' keys of `snapshot` (of primary key `pk`), one per index covering its
    /// entity, with strings normalized as `normalization` says.
    func indexKeys(of snapshot: DefaultSnapshot, primaryKey pk: UUID, _ normalization: OrderedValueEncoding.Normalization = .canonical) -> [[UInt8]] {
        layout.indexes(of: snapshot.persistentIdentifier.entityName).map { index in
            let values = index.properties.map { snapshot.values[$0] ?? .null }
            return RecordKeys.indexPrefix(entity: index.declaredBy, index: RecordKeys.listName(index.properties))
                + OrderedValueEncoding.encoded(values, normalization) + RecordKeys.bytes(of: pk)
        }
    }

    /// The uniqueness entries of `snapshot` (none for a constraint with a null value: nulls do
    /// not collide), with the constraint's properties.
    ///
    /// `fallback` gives the value of a property `snapshot` leaves out (a new object's default).
    func uniqueKeys(
        of snapshot: DefaultSnapshot, _ normalization: OrderedValueEncoding.Normalization = .canonical
    ) -> [([UInt8], [String])] {
        uniqueKeys(of: snapshot.persistentIdentifier.entityName, normalization) { snapshot.values[$0] ?? .null }
    }

    /// The uniqueness entries of an object, as above, from its state; `fallback` gives
    /// the value of a property `state` leaves out (a new object's default).
    func uniqueKeys(of state: ObjectState, fallback: ((String) -> PropertyValue)? = nil) -> [([UInt8], [String])] {
        uniqueKeys(of: state.persistentIdentifier.entityName, .canonical) { state[$0] ?? fallback?($0) ?? .null }
    }

    /// The uniqueness entries of an object of `entity` whose property values `value` reads.
    private func uniqueKeys(
        of entity: String, _ normalization: OrderedValueEncoding.Normalization, _ value: (String) -> PropertyValue
    ) -> [([UInt8], [String])] {
        layout.uniquenessConstraints(of: entity).compactMap { constraint in
            let values = constraint.properties.map(value)
            if values.contains(where: \.isNull) { return nil }
            return (
                RecordKeys.unique(
                    entity: constraint.declaredBy, constraint: RecordKeys.listName(constraint.properties),
                    values: OrderedValueEncoding.encoded(values, normalization)), constraint.properties
            )
        }
    }
}
