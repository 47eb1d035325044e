import Engine
import Foundation

/// One engine entry the record layer derives from an object: a value kept inline in the log,
/// or one written as a blob file (``WriteBatch/putExternal(_:_:)``).
enum StoredEntry: Equatable {
    case inline([UInt8])
    case external([UInt8])
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
    /// key): its record, assets, back references, join records (of the to-many arrays it
    /// holds), index and uniqueness entries. A key repeats only when an array lists a target
    /// twice.
    func entries(of snapshot: DefaultSnapshot) -> [(key: [UInt8], entry: StoredEntry)] {
        let id = snapshot.persistentIdentifier
        guard let pk = Self.primaryKey(of: id) else { return [] }
        let entity = id.entityName
        let root = layout.root(of: entity)
        var result: [(key: [UInt8], entry: StoredEntry)] = []
        var fields: [(name: String, value: PropertyValue)] = []
        for field in layout.fields(of: entity) {
            let value = snapshot.values[field.property.name] ?? .null
            switch field.property {
            case .attribute(let attribute):
                if attribute.options.contains(.ephemeral) { continue }
                let encoded = FieldValueCoding.encoded(value)
                if !value.isNull && (attribute.options.contains(.externalStorage) || encoded.count > assetThreshold) {
                    let key = RecordKeys.asset(root: root, primaryKey: pk, attribute: attribute.name)
                    if attribute.valueType == .data, case .data(let bytes) = value {
                        result.append((key, .external(Array(bytes))))
                    } else {
                        result.append((key, .external(encoded)))
                    }
                    fields.append((field.assetName, .data(Data(key))))
                } else {
                    fields.append((field.name, value))
                }
            case .relationship(let relationship) where !relationship.isToMany:
                if case .toOne(let target?) = value, let targetPK = Self.primaryKey(of: target) {
                    fields.append((field.name, .string(RecordName.of(target))))
                    let key = RecordKeys.backReference(
                        destinationRoot: layout.root(of: target.entityName), destination: targetPK,
                        relationship: layout.qualifiedName(relationship.name, in: entity),
                        sourceEntity: entity, source: pk)
                    result.append((key, .inline([])))
                } else {
                    fields.append((field.name, .null))
                }
            case .relationship(let relationship):
                for target in value.referencedIdentifiers {
                    result += joinEntries(of: id, through: relationship, to: target)
                }
            }
        }
        fields.sort { $0.name < $1.name }
        fields.insert((RecordValue.entityNameField, .string(entity)), at: 0)
        result.append((RecordKeys.record(root: root, primaryKey: pk), .inline(RecordValue(fields: fields).encoded())))

        for key in indexKeys(of: snapshot, primaryKey: pk) {
            result.append((key, .inline(Array(entity.utf8))))
        }
        for (key, _) in uniqueKeys(of: snapshot) {
            result.append((key, .inline(RecordKeys.bytes(of: pk) + Array(entity.utf8))))
        }
        return result
    }

    /// The join record and its mirror that store the link from `id` to `target` through the
    /// to-many `relationship`, when `id`'s entity is the side that writes them (none otherwise).
    func joinEntries(of id: PersistentIdentifier, through relationship: Schema.Relationship, to target: PersistentIdentifier) -> [(key: [UInt8], entry: StoredEntry)] {
        let entity = id.entityName
        guard layout.usesJoinRecords(relationship), layout.writesJoinRecords(relationship, of: entity) else { return [] }
        let join = layout.join(relationship, of: entity)
        let here = RecordName.of(id)
        let there = RecordName.of(target)
        let hereIsA = join.isSymmetric ? here <= there : join.isSideA
        let (a, b) = hereIsA ? (here, there) : (there, here)
        let record = RecordValue(fields: [
            ("CD_entityNames", .string(join.entities)), ("CD_recordNames", .string("\(a):\(b)")),
            ("CD_relationships", .string(join.relationships)),
        ])
        return [
            (RecordKeys.join(mirror: false, entities: join.entities, relationships: join.relationships, recordName: a, otherRecordName: b),
             .inline(record.encoded())),
            (RecordKeys.join(mirror: true, entities: join.entities, relationships: join.relationships, recordName: b, otherRecordName: a), .inline([])),
        ]
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
    func uniqueKeys(of snapshot: DefaultSnapshot, _ normalization: OrderedValueEncoding.Normalization = .canonical) -> [([UInt8], [String])] {
        layout.uniquenessConstraints(of: snapshot.persistentIdentifier.entityName).compactMap { constraint in
            let values = constraint.properties.map { snapshot.values[$0] ?? .null }
            if values.contains(where: \.isNull) { return nil }
            return (RecordKeys.unique(entity: constraint.declaredBy, constraint: RecordKeys.listName(constraint.properties),
                                      values: OrderedValueEncoding.encoded(values, normalization)), constraint.properties)
        }
    }
}
