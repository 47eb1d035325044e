import Engine
import Foundation

/// Records format 1 (header versions 1 to 3), read while a store is upgraded to format 2: a
/// record names every field (`CD_<name>`, `CD_<name>_ckAsset`), and a link is a `CDMR` record
/// value under an `M` key whose components are record names (`<Entity>_<UUID>`), with an `N`
/// mirror.
extension RecordMapper {
    /// The format-1 field names of properties: what a record's fields are named.
    static func format1FieldNames(_ properties: Set<String>) -> Set<String> {
        Set(properties.flatMap { ["CD_\($0)", "CD_\($0)_ckAsset"] })
    }

    /// `M` (or `N`) "EntityA:EntityB" 0x00 "relA:relB" 0x00 recordName 0x00: every format-1
    /// join record of one object on side A (on side B, for `N`).
    static func format1JoinPrefix(mirror: Bool, entities: String, relationships: String, recordName: String) -> [UInt8] {
        RecordKeys.joinRelationshipPrefix(mirror: mirror, entities: entities, relationships: relationships) + RecordKeys.name(recordName)
    }

    /// The snapshot a format-1 record holds: its attributes (assets read back), to-one references, and
    /// (when `toMany`) the to-many arrays rebuilt from back references and join records.
    /// With `only`, just those properties (a partial snapshot, for evaluating a predicate).
    func format1Snapshot(
        of record: Format1Record, key: [UInt8], primaryKey pk: UUID, root: String, toMany: Bool, only: Set<String>? = nil
    ) throws -> DefaultSnapshot {
        guard case .string(let entity)? = record[Format1Record.entityNameField], schema.entity(named: entity) != nil, layout.root(of: entity) == root
        else {
            throw RecordDecodingError("a record without a known \(Format1Record.entityNameField) of root \(root)", key: key)
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

    /// Records format 1's entries of `snapshot` (kept to make format-1 stores for the tests of
    /// the upgrade): every entry that stores it (of a stored or inserted object with a UUID primary
    /// key): its record, assets, back references, join records (of the to-many arrays it
    /// holds), index and uniqueness entries. A key repeats only when an array lists a target
    /// twice.
    func format1Entries(of snapshot: DefaultSnapshot) -> [(key: [UInt8], entry: StoredEntry)] {
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
                    result += format1JoinEntries(of: id, through: relationship, to: target)
                }
            }
        }
        fields.sort { $0.name < $1.name }
        fields.insert((Format1Record.entityNameField, .string(entity)), at: 0)
        result.append((RecordKeys.record(root: root, primaryKey: pk), .inline(Format1Record(fields: fields).encoded())))

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
    func format1JoinEntries(
        of id: PersistentIdentifier, through relationship: Schema.Relationship, to target: PersistentIdentifier
    ) -> [(key: [UInt8], entry: StoredEntry)] {
        let entity = id.entityName
        guard layout.usesJoinRecords(relationship), layout.writesJoinRecords(relationship, of: entity) else { return [] }
        let join = layout.join(relationship, of: entity)
        let here = RecordName.of(id)
        let there = RecordName.of(target)
        let hereIsA = join.isSymmetric ? here <= there : join.isSideA
        let (a, b) = hereIsA ? (here, there) : (there, here)
        let record = Format1Record(fields: [
            ("CD_entityNames", .string(join.entities)), ("CD_recordNames", .string("\(a):\(b)")),
            ("CD_relationships", .string(join.relationships)),
        ])
        return [
            (
                Self.format1JoinPrefix(mirror: false, entities: join.entities, relationships: join.relationships, recordName: a) + Array(b.utf8),
                .inline(record.encoded())
            ),
            (
                Self.format1JoinPrefix(mirror: true, entities: join.entities, relationships: join.relationships, recordName: b) + Array(a.utf8),
                .inline([])
            ),
        ]
    }

}
