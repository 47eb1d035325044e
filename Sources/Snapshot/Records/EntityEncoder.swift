import Foundation

/// How the entries of one concrete entity's objects are written (records format 2), worked out
/// once per schema from the entity's field list: for each record field, the property read from
/// a snapshot and how its body and asset are written; for each index and uniqueness rule, the
/// fields it reads; for each to-one, the parts of its back reference; for each to-many, whether
/// this entity writes its links.
///
/// Encoding reads an object's state (``ObjectState``) slot by slot, in field order, without a
/// name lookup; index and uniqueness keys then read the values already read.
struct EntityEncoder: Sendable {
    /// One record field.
    struct Field: Sendable {
        let name: String
        let kind: RecordField.Kind
        /// The asset key's attribute name; `nil` for a to-one.
        let attribute: Schema.Attribute?
        let isExternal: Bool
        /// `<DeclaringEntity>.<name>` of a to-one: how its back reference names it.
        let qualifiedName: String
        /// The value of a snapshot that leaves the field out (a new object's state holds only
        /// what the request stated): the attribute's default, else null; no target.
        let fallback: PropertyValue
    }

    /// One index or uniqueness rule: its key prefix, and where each of its properties' values
    /// is read (a field index, or `nil` for a property without field: read from the state).
    struct Rule: Sendable {
        let prefix: [UInt8]
        let properties: [String]
        let fieldIndices: [Int?]
        /// The value of each property for a new object's statement that leaves it out: the
        /// attribute's default, else null.
        let fallbacks: [PropertyValue]
    }

    /// One slot's property as the save planner reads and checks it.
    struct SlotRule: Sendable {
        enum Kind: Sendable {
            case attribute(Schema.Attribute)
            case toOne(Schema.Relationship)
            case toMany(Schema.Relationship)
        }

        let name: String
        let kind: Kind
        /// What a property left out of a new object's state reads in a check: the attribute's
        /// default, else null (a relationship: null).
        let absent: PropertyValue
        /// What it reads in the object whole: as ``absent``, a to-one `.toOne(nil)`; `nil` for a
        /// to-many (its links).
        let whole: PropertyValue?
        /// A relationship's inverse (declared on its destination), when it has one.
        let inverse: Schema.Relationship?

        var relationship: Schema.Relationship? {
            switch kind {
            case .attribute: nil
            case .toOne(let r), .toMany(let r): r
            }
        }
    }

    /// A relationship of the entity: its slot, and its inverse (declared on the destination).
    struct RelationshipSlot: Sendable {
        let slot: Int
        let relationship: Schema.Relationship
        let inverse: Schema.Relationship?
    }

    let entity: String
    let root: String
    /// `R` root 0x00: the prefix of the entity's record keys.
    let recordPrefix: [UInt8]
    let fields: [Field]
    let indexes: [Rule]
    let uniqueness: [Rule]
    /// The to-many relationships whose links this entity's entries hold, with their slots.
    let linkWriting: [(slot: Int, relationship: Schema.Relationship)]
    /// How the save planner reads, checks and completes each slot, in slot order (the same
    /// order as ``slots``): resolved once per schema, so that a statement is read in one pass
    /// over the slots without a name lookup of the planner's own.
    let slotRules: [SlotRule]
    /// The slots in the entity's property order (the order checks report in).
    let propertyOrder: [Int]
    /// The relationships of the entity, in property order, with their slots and inverses.
    let relationshipSlots: [RelationshipSlot]
    /// Whether every index and uniqueness rule reads only record fields: then two objects with
    /// the same record bytes have the same index and uniqueness entries.
    let rulesReadFieldsOnly: Bool
    /// Where each property of the entity's objects sits in an ``ObjectState``.
    let slots: SlotTable
    private let entityName: [UInt8]

    init(layout: RecordLayout, fieldList: RecordFieldList) {
        let entity = fieldList.entity
        self.entity = entity
        self.root = layout.root(of: entity)
        self.recordPrefix = RecordKeys.recordPrefix(root: layout.root(of: entity))
        self.entityName = Array(entity.utf8)
        self.slots = SlotTable(schema: layout.schema, fieldList: fieldList)
        self.fields = fieldList.fields.map { field in
            switch field.kind {
            case .attribute(let a):
                Field(
                    name: field.name, kind: field.kind, attribute: a, isExternal: a.options.contains(.externalStorage),
                    qualifiedName: layout.qualifiedName(field.name, in: entity), fallback: a.defaultValue ?? .null)
            case .toOne:
                Field(
                    name: field.name, kind: field.kind, attribute: nil, isExternal: false,
                    qualifiedName: layout.qualifiedName(field.name, in: entity), fallback: .null)
            }
        }
        let schema = layout.schema
        func fallbacks(_ properties: [String]) -> [PropertyValue] {
            properties.map { schema.attribute(named: $0, in: entity)?.defaultValue ?? .null }
        }
        self.indexes = layout.indexes(of: entity).map { index in
            Rule(
                prefix: RecordKeys.indexPrefix(entity: index.declaredBy, index: RecordKeys.listName(index.properties)),
                properties: index.properties, fieldIndices: index.properties.map { fieldList.index(of: $0) },
                fallbacks: fallbacks(index.properties))
        }
        self.uniqueness = layout.uniquenessConstraints(of: entity).map { constraint in
            Rule(
                prefix: RecordKeys.unique(entity: constraint.declaredBy, constraint: RecordKeys.listName(constraint.properties), values: []),
                properties: constraint.properties, fieldIndices: constraint.properties.map { fieldList.index(of: $0) },
                fallbacks: fallbacks(constraint.properties))
        }
        self.rulesReadFieldsOnly = (indexes + uniqueness).allSatisfy { !$0.fieldIndices.contains(nil) }
        let slots = self.slots
        self.linkWriting = layout.toManyRelationships(of: entity).compactMap {
            guard layout.usesJoinRecords($0), layout.writesJoinRecords($0, of: entity), let slot = slots.index(of: $0.name) else { return nil }
            return (slot, $0)
        }
        let properties = schema.allProperties(of: entity)
        let byName = Dictionary(properties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        func inverse(of r: Schema.Relationship) -> Schema.Relationship? {
            r.inverse.flatMap { schema.relationship(named: $0, in: r.destination) }
        }
        self.slotRules = slots.names.map { name in
            switch byName[name] {
            case .attribute(let a)?:
                let absent = a.defaultValue ?? .null
                return SlotRule(name: name, kind: .attribute(a), absent: absent, whole: absent, inverse: nil)
            case .relationship(let r)? where r.isToMany:
                return SlotRule(name: name, kind: .toMany(r), absent: .null, whole: nil, inverse: inverse(of: r))
            case .relationship(let r)?:
                return SlotRule(name: name, kind: .toOne(r), absent: .null, whole: .toOne(nil), inverse: inverse(of: r))
            case nil:
                preconditionFailure("the slot \(name) of \(entity) is a property of the entity")
            }
        }
        self.propertyOrder = properties.compactMap { slots.index(of: $0.name) }
        self.relationshipSlots = properties.compactMap { property in
            guard case .relationship(let r) = property, let slot = slots.index(of: r.name) else { return nil }
            return RelationshipSlot(slot: slot, relationship: r, inverse: inverse(of: r))
        }
    }

    /// The state of `snapshot` in this entity's slots (for callers holding a snapshot by name).
    func state(of snapshot: DefaultSnapshot) -> ObjectState { ObjectState(snapshot, table: slots) }

    /// The record of a state alone, and its field values: what ``entries(of:_:primaryKey:mapper:)``
    /// builds first.
    struct Encoded {
        /// The record value's bytes.
        var record: [UInt8]
        /// Whether a field is held in an asset (its bytes are not in ``record``).
        var holdsAsset: Bool
        /// The value of each field, in field order (`.null` for a to-one without a target).
        var values: [PropertyValue]
        /// The asset and back-reference entries of the fields.
        var fieldEntries: [(key: [UInt8], entry: StoredEntry)]
    }

    /// The record of `state` (primary key `pk`, its table this encoder's ``slots``), read once
    /// per field from slot *i* for field *i*; a field it leaves out reads the field's default
    /// in place.
    func encode(_ state: ObjectState, primaryKey pk: UUID, assetThreshold: Int, layout: RecordLayout) -> Encoded {
        var writer = RecordWriter(entityName: entity)
        var values: [PropertyValue] = []
        values.reserveCapacity(fields.count)
        var fieldEntries: [(key: [UInt8], entry: StoredEntry)] = []
        var holdsAsset = false
        for (i, field) in fields.enumerated() {
            let value = state.slot(i) ?? field.fallback
            values.append(value)
            if let attribute = field.attribute {
                if !value.isNull, field.isExternal || FieldValueCoding.encodedCount(value) > assetThreshold {
                    let key = RecordKeys.asset(root: root, primaryKey: pk, attribute: attribute.name)
                    if attribute.valueType == .data, case .data(let bytes) = value {
                        fieldEntries.append((key, .external(Array(bytes))))
                    } else {
                        fieldEntries.append((key, .external(FieldValueCoding.encoded(value))))
                    }
                    writer.appendAsset()
                    holdsAsset = true
                } else {
                    writer.append(value)
                }
            } else if case .toOne(let target?) = value, let targetPK = RecordMapper.primaryKey(of: target) {
                writer.append(value)
                let key = RecordKeys.backReference(
                    destinationRoot: layout.root(of: target.entityName), destination: targetPK,
                    relationship: field.qualifiedName, sourceEntity: entity, source: pk)
                fieldEntries.append((key, .inline([])))
            } else {
                writer.append(.null)
            }
        }
        return Encoded(record: writer.encoded(), holdsAsset: holdsAsset, values: values, fieldEntries: fieldEntries)
    }

    /// Every entry of `state` (primary key `pk`), its record already encoded as `encoded`:
    /// the assets and back references of its fields, the links of the to-many arrays it
    /// holds, its record, its index and uniqueness entries.
    func entries(of state: ObjectState, _ encoded: Encoded, primaryKey pk: UUID, mapper: RecordMapper) -> [(key: [UInt8], entry: StoredEntry)] {
        var result = encoded.fieldEntries
        result.reserveCapacity(result.count + 1 + indexes.count + uniqueness.count + 2 * linkWriting.count)
        linkEntries(of: state, mapper: mapper, into: &result)
        result.append((Self.key(recordPrefix, pk), .inline(encoded.record)))
        ruleEntries(encoded.values, of: state, primaryKey: pk, into: &result)
        return result
    }

    /// The index and uniqueness entries of an object of field values `values` (and, for a rule
    /// property without field, `state`'s value).
    func ruleEntries(
        _ values: [PropertyValue], of state: ObjectState, primaryKey pk: UUID, into result: inout [(key: [UInt8], entry: StoredEntry)]
    ) {
        func ruleValues(_ rule: Rule) -> [PropertyValue] {
            var out: [PropertyValue] = []
            out.reserveCapacity(rule.properties.count)
            for (i, name) in rule.properties.enumerated() {
                if let index = rule.fieldIndices[i], index < values.count { out.append(values[index]) } else { out.append(state[name] ?? .null) }
            }
            return out
        }
        for rule in indexes {
            result.append((Self.key(rule.prefix, OrderedValueEncoding.encoded(ruleValues(rule)), pk), .inline(entityName)))
        }
        for rule in uniqueness {
            let values = ruleValues(rule)
            if values.contains(where: \.isNull) { continue }
            result.append(
                (RecordKeys.unique(prefix: rule.prefix, values: OrderedValueEncoding.encoded(values)), .inline(Self.key([], [], pk, entityName))))
        }
    }

    /// The refusal of `key`, an index or uniqueness entry of `state` longer than
    /// ``RecordKeys/maxKeyLength``, naming the rule's property whose value takes the most bytes
    /// and the object as `id`; `nil` when `key` is no rule's entry.
    func refusal(ofLongKey key: [UInt8], in state: ObjectState, reportedAs id: PersistentIdentifier) -> DataStoreError? {
        let rules = uniqueness.map { ($0, true) } + indexes.map { ($0, false) }
        guard let (rule, isUnique) = rules.first(where: { key.starts(with: $0.0.prefix) }) else { return nil }
        let sizes = rule.properties.map { OrderedValueEncoding.encoded([state[$0] ?? .null]).count }
        let longest = rule.properties[sizes.indices.max { sizes[$0] < sizes[$1] } ?? 0]
        let kind = isUnique ? "uniqueness rule" : "index"
        return DataStoreError(
            .valueTooLongForKey,
            "The \(longest) of \(id) takes \(sizes.max() ?? 0) bytes in the \(kind) (\(rule.properties.joined(separator: ", "))) of \(entity): its entry would be \(key.count) bytes, over the store's key limit of \(RecordKeys.maxKeyLength). Keep the value shorter, or drop that \(kind); nothing was saved.",
            entityName: entity, propertyName: longest, identifier: id, constraint: rule.properties)
    }

    /// `prefix`, then `middle`, then the 16 bytes of `pk` (when given), then `suffix`: one
    /// key built in one buffer.
    static func key(_ prefix: [UInt8], _ middle: [UInt8] = [], _ pk: UUID? = nil, _ suffix: [UInt8] = []) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(prefix.count + middle.count + (pk == nil ? 0 : 16) + suffix.count)
        key += prefix
        key += middle
        if let pk { withUnsafeBytes(of: pk.uuid) { key.append(contentsOf: $0) } }
        key += suffix
        return key
    }

    static func key(_ prefix: [UInt8], _ pk: UUID) -> [UInt8] { key(prefix, [], pk) }

    /// The links of the to-many arrays `state` holds, for the relationships this entity
    /// writes links of.
    func linkEntries(of state: ObjectState, mapper: RecordMapper, into result: inout [(key: [UInt8], entry: StoredEntry)]) {
        let id = state.persistentIdentifier
        for (slot, relationship) in linkWriting {
            guard let value = state.slot(slot) else { continue }
            for target in value.referencedIdentifiers {
                result += mapper.joinEntries(of: id, through: relationship, to: target)
            }
        }
    }

    /// The uniqueness entries' keys of `state` (none for a rule with a null value: nulls do not
    /// collide), with each rule's properties, read by slot: a field the state leaves out (a new
    /// object's) reads its default.
    func uniqueKeys(of state: ObjectState) -> [(key: [UInt8], properties: [String])] {
        guard !uniqueness.isEmpty else { return [] }
        return uniqueness.compactMap { rule in
            var values: [PropertyValue] = []
            values.reserveCapacity(rule.properties.count)
            for (i, name) in rule.properties.enumerated() {
                let value = rule.fieldIndices[i].flatMap { state.slot($0) } ?? state[name] ?? rule.fallbacks[i]
                if value.isNull { return nil }
                values.append(value)
            }
            return (RecordKeys.unique(prefix: rule.prefix, values: OrderedValueEncoding.encoded(values)), rule.properties)
        }
    }

    /// The uniqueness entries' keys of a new object's statement `snapshot` (its values by name
    /// over the entity's defaults), as ``uniqueKeys(of:)`` reads a state; `include` filters
    /// the values (a rule with a value it refuses gives no key).
    func uniqueKeys(ofStatement snapshot: DefaultSnapshot, include: (PropertyValue) -> Bool) -> [(key: [UInt8], properties: [String])] {
        guard !uniqueness.isEmpty else { return [] }
        return uniqueness.compactMap { rule in
            var values: [PropertyValue] = []
            values.reserveCapacity(rule.properties.count)
            for (i, name) in rule.properties.enumerated() {
                let value = snapshot.values[name] ?? rule.fallbacks[i]
                if !include(value) { return nil }
                values.append(value)
            }
            return (RecordKeys.unique(prefix: rule.prefix, values: OrderedValueEncoding.encoded(values)), rule.properties)
        }
    }
}
