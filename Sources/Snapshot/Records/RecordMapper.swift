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
    let engine: RecordSpace
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
        let id = snapshot.persistentIdentifier
        guard let pk = Self.primaryKey(of: id) else { return [] }
        let encoder = layout.encoder(of: id.entityName)
        let encoded = encoder.encode(snapshot, primaryKey: pk, assetThreshold: assetThreshold, layout: layout)
        return encoder.entries(of: snapshot, encoded, primaryKey: pk, mapper: self)
    }

    /// The link and its mirror that store the link from `id` to `target` through the to-many
    /// `relationship`, when `id`'s entity is the side that writes them (none otherwise): two
    /// keys with empty values.
    func joinEntries(of id: PersistentIdentifier, through relationship: Schema.Relationship, to target: PersistentIdentifier) -> [(key: [UInt8], entry: StoredEntry)] {
        let entity = id.entityName
        guard layout.usesJoinRecords(relationship), layout.writesJoinRecords(relationship, of: entity),
            let here = Self.primaryKey(of: id), let there = Self.primaryKey(of: target)
        else { return [] }
        let join = layout.join(relationship, of: entity)
        let hereIsA = join.isSymmetric ? JoinCursor.compare(here, there) <= 0 : join.isSideA
        let (a, b) = hereIsA ? ((entity, here), (target.entityName, there)) : ((target.entityName, there), (entity, here))
        return [
            (RecordKeys.join(mirror: false, entities: join.entities, relationships: join.relationships, primaryKey: a.1, otherEntity: b.0, otherPrimaryKey: b.1),
             .inline([])),
            (RecordKeys.join(mirror: true, entities: join.entities, relationships: join.relationships, primaryKey: b.1, otherEntity: a.0, otherPrimaryKey: a.1),
             .inline([])),
        ]
    }

    /// The stored object `id` without its to-many arrays, with its record's bytes as stored;
    /// `nil` when the store holds no such object (of that entity).
    func loadRecord(_ id: PersistentIdentifier) throws -> (snapshot: DefaultSnapshot, bytes: [UInt8])? {
        guard id.storeIdentifier == storeIdentifier, let pk = Self.primaryKey(of: id), schema.entity(named: id.entityName) != nil else { return nil }
        let root = layout.root(of: id.entityName)
        guard let bytes = try readRecord(root: root, primaryKey: pk) else { return nil }
        let snapshot = try self.snapshot(ofRecord: bytes, key: RecordKeys.record(root: root, primaryKey: pk), primaryKey: pk, root: root, toMany: false)
        return snapshot.persistentIdentifier.entityName == id.entityName ? (snapshot, bytes) : nil
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
        of snapshot: DefaultSnapshot, _ normalization: OrderedValueEncoding.Normalization = .canonical,
        fallback: ((String) -> PropertyValue)? = nil
    ) -> [([UInt8], [String])] {
        layout.uniquenessConstraints(of: snapshot.persistentIdentifier.entityName).compactMap { constraint in
            let values = constraint.properties.map { snapshot.values[$0] ?? fallback?($0) ?? .null }
            if values.contains(where: \.isNull) { return nil }
            return (RecordKeys.unique(entity: constraint.declaredBy, constraint: RecordKeys.listName(constraint.properties),
                                      values: OrderedValueEncoding.encoded(values, normalization)), constraint.properties)
        }
    }
}
