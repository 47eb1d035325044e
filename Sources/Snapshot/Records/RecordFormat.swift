import Foundation

/// One field of a record (records format 2, FORMAT.md "Record value, version 2"): a stored
/// attribute (one not `ephemeral`) or a to-one relationship of an entity, at its place in the
/// entity's field order.
package struct RecordField: Sendable {
    /// What a field holds.
    package enum Kind: Sendable {
        /// A stored attribute: its body is read under the attribute's value type.
        case attribute(Schema.Attribute)
        /// A to-one relationship: its body is the target's primary key and concrete entity.
        case toOne(Schema.Relationship)
    }

    /// The schema property the field stores.
    package let property: Schema.Property
    /// The attribute or to-one relationship, with what reading its body needs.
    package let kind: Kind
    /// The field's index in its entity's field order (its serial type is the header's
    /// `index`-th).
    package let index: Int

    /// The property's name.
    package var name: String { property.name }
}

/// The fields of one concrete entity's records, in field order: the properties of
/// ``Schema/allProperties(of:)`` that are stored attributes or to-one relationships (to-many
/// relationships have no field). Field *i* of a record is `fields[i]`.
package struct RecordFieldList: Sendable {
    /// The concrete entity.
    package let entity: String
    /// The fields, in field order (`fields[i].index == i`).
    package let fields: [RecordField]
    private let indices: [String: Int]

    /// The field list of `entity` under `schema` (empty for an entity the schema lacks).
    package init(schema: Schema, entity: String) {
        var fields: [RecordField] = []
        for property in schema.allProperties(of: entity) {
            switch property {
            case .attribute(let a) where !a.options.contains(.ephemeral):
                fields.append(RecordField(property: property, kind: .attribute(a), index: fields.count))
            case .relationship(let r) where !r.isToMany:
                fields.append(RecordField(property: property, kind: .toOne(r), index: fields.count))
            default:
                continue
            }
        }
        self.entity = entity
        self.fields = fields
        self.indices = Dictionary(fields.map { ($0.name, $0.index) }, uniquingKeysWith: { first, _ in first })
    }

    /// How many fields a record of the entity has.
    package var count: Int { fields.count }

    /// The index of the field storing the property `name`, or `nil` when the property has no
    /// field (ephemeral, to-many, or unknown).
    package func index(of name: String) -> Int? { indices[name] }

    /// The field storing the property `name`, or `nil` as for ``index(of:)``.
    package func field(named name: String) -> RecordField? { indices[name].map { fields[$0] } }

    /// Whether `old` lists the same fields as the start of this list (same property names,
    /// kinds and value types, in the same order): records written under `old` read under this
    /// list without a rewrite, the missing fields as their defaults.
    package func hasPrefix(_ old: RecordFieldList) -> Bool {
        guard old.count <= count else { return false }
        return zip(old.fields, fields).allSatisfy { o, n in
            guard o.name == n.name else { return false }
            switch (o.kind, n.kind) {
            case let (.attribute(a), .attribute(b)):
                return a.valueType == b.valueType && a.options.contains(.externalStorage) == b.options.contains(.externalStorage)
            case let (.toOne(a), .toOne(b)):
                return a.destination == b.destination
            default:
                return false
            }
        }
    }
}

/// The serial types of records format 2: each field's header entry, which gives its body's
/// size and how to read it.
package enum RecordSerialType {
    package static let null: UInt64 = 0
    package static let `false`: UInt64 = 1
    package static let `true`: UInt64 = 2
    /// Integers of 1, 2, 4 and 8 bytes are 3, 4, 5 and 6.
    package static let int8Bytes: UInt64 = 3
    package static let int64Bytes: UInt64 = 6
    package static let zero: UInt64 = 7
    package static let float: UInt64 = 8
    package static let double: UInt64 = 9
    package static let uuid: UInt64 = 10
    package static let asset: UInt64 = 11
    /// The first serial type of text (even) and bytes (odd).
    package static let firstVariable: UInt64 = 16

    package static func text(count: Int) -> UInt64 { 16 + 2 * UInt64(count) }
    package static func bytes(count: Int) -> UInt64 { 17 + 2 * UInt64(count) }

    /// The body size of `serialType`, or `nil` for a reserved one (12–15).
    package static func bodySize(_ serialType: UInt64) -> UInt64? {
        switch serialType {
        case 0, 1, 2, 7, 11: 0
        case 3: 1
        case 4: 2
        case 5: 4
        case 6: 8
        case 8: 4
        case 9: 8
        case 10: 16
        case 12...15: nil
        default: (serialType - 16) / 2
        }
    }

    package static func isText(_ serialType: UInt64) -> Bool { serialType >= 16 && serialType % 2 == 0 }
    package static func isBytes(_ serialType: UInt64) -> Bool { serialType >= 17 && serialType % 2 == 1 }
}

/// A reader of one format-2 record value: parses the header when made (the version, the
/// concrete entity's name, one serial type per field and where each body lies) and decodes a
/// field only when asked, so field *i* is read without decoding the fields before it.
///
/// Every malformed header (a wrong version, a header size past the end, a reserved serial type,
/// bodies that do not fill the record exactly) throws ``RecordDecodingError`` when the reader
/// is made; a body that does not fit its field's type throws when that field is decoded.
package struct RecordReader {
    /// The record format version this reader reads.
    package static let version: UInt8 = 2

    /// The record's bytes, as stored.
    package let bytes: [UInt8]
    /// The key the record is stored under (named in errors).
    package let key: [UInt8]
    /// Where the concrete entity's name lies in ``bytes``.
    package let entityNameRange: Range<Int>
    /// The concrete entity's name.
    package let entityName: String
    private let slots: [Slot]

    private struct Slot {
        var serialType: UInt64
        var start: Int
        var end: Int
    }

    /// Parses the header of `bytes` (stored under `key`).
    package init(_ bytes: [UInt8], key: [UInt8]) throws(RecordDecodingError) {
        var reader = ByteReader(bytes, key: key)
        let version = try reader.byte()
        guard version == Self.version else { throw reader.failure("record format version \(version), expected \(Self.version)") }
        let headerSize = try reader.length()
        let headerEnd = reader.offset + headerSize
        let nameCount = try reader.length()
        guard nameCount > 0, reader.offset + nameCount <= headerEnd else {
            throw reader.failure("an entity name of \(nameCount) bytes in a header of \(headerSize)")
        }
        let nameRange = reader.offset..<(reader.offset + nameCount)
        guard let name = String(validating: bytes[nameRange], as: UTF8.self) else { throw reader.failure("an entity name that is not UTF-8") }
        try reader.skip(nameCount)
        var slots: [Slot] = []
        // Every serial type takes a byte at least: one allocation holds them all (up to 64;
        // a longer header grows the array as it is read).
        slots.reserveCapacity(min(headerEnd - reader.offset, 64))
        var bodyOffset = headerEnd
        while reader.offset < headerEnd {
            let serialType = try reader.varint()
            guard reader.offset <= headerEnd else { throw reader.failure("a serial type past the header's end") }
            guard let size = RecordSerialType.bodySize(serialType) else { throw reader.failure("the reserved serial type \(serialType)") }
            guard size <= UInt64(bytes.count - bodyOffset) else {
                throw reader.failure("field \(slots.count) of \(size) bytes with \(bytes.count - bodyOffset) left")
            }
            slots.append(Slot(serialType: serialType, start: bodyOffset, end: bodyOffset + Int(size)))
            bodyOffset += Int(size)
        }
        guard bodyOffset == bytes.count else { throw reader.failure("\(bytes.count - bodyOffset) bytes after the last field's body") }
        self.bytes = bytes
        self.key = key
        self.entityNameRange = nameRange
        self.entityName = name
        self.slots = slots
    }

    /// The concrete entity's name as its UTF-8 bytes.
    package var entityNameBytes: ArraySlice<UInt8> { bytes[entityNameRange] }

    /// How many fields the record holds (fewer than its entity has when the entity gained
    /// fields after it was written).
    package var fieldCount: Int { slots.count }

    /// The serial type of field `i` (`0 ..< fieldCount`).
    package func serialType(_ i: Int) -> UInt64 { slots[i].serialType }

    /// Where field `i`'s body lies in ``bytes`` (`0 ..< fieldCount`).
    package func bodyRange(_ i: Int) -> Range<Int> { slots[i].start..<slots[i].end }

    /// Field `i`'s body bytes.
    package func body(_ i: Int) -> ArraySlice<UInt8> { bytes[slots[i].start..<slots[i].end] }

    /// Whether field `i` is held in its asset (serial type 11); `false` past the last field.
    package func isAsset(_ i: Int) -> Bool { i < slots.count && slots[i].serialType == RecordSerialType.asset }

    /// Whether field `i` is null (serial type 0, or a field the record does not hold).
    package func isNull(_ i: Int) -> Bool { i >= slots.count || slots[i].serialType == RecordSerialType.null }

    private func failure(_ i: Int, _ reason: String) -> RecordDecodingError {
        RecordDecodingError("field \(i) (serial type \(i < slots.count ? slots[i].serialType : 0)): \(reason)", key: key)
    }

    /// The value of field `field` of this record: decoded under the field's type, the
    /// attribute's default (or null) for a field past the record's last, and a to-one as the
    /// identifier of its target in the store `storeIdentifier`.
    ///
    /// - Throws: ``RecordDecodingError`` when the body does not fit the field's type, or the
    ///   field is held in an asset (read the asset instead: ``isAsset(_:)``).
    package func value(of field: RecordField, storeIdentifier: String) throws -> PropertyValue {
        switch field.kind {
        case .attribute(let attribute):
            guard field.index < slots.count else { return attribute.defaultValue ?? .null }
            return try value(field.index, as: attribute.valueType)
        case .toOne:
            guard let (entity, pk) = try toOneTarget(field.index) else { return .toOne(nil) }
            return .toOne(try PersistentIdentifier.identifier(for: storeIdentifier, entityName: entity, primaryKey: pk))
        }
    }

    /// The target of the to-one field `i`: its concrete entity and primary key, or `nil` when
    /// the field is null (or past the record's last).
    package func toOneTarget(_ i: Int) throws(RecordDecodingError) -> (entity: String, primaryKey: UUID)? {
        guard i < slots.count else { return nil }
        let slot = slots[i]
        if slot.serialType == RecordSerialType.null { return nil }
        guard RecordSerialType.isBytes(slot.serialType), slot.end - slot.start > 16 else {
            throw failure(i, "a to-one that is not a primary key and an entity name")
        }
        let nameStart = slot.start + 16
        guard let entity = String(validating: bytes[nameStart..<slot.end], as: UTF8.self) else {
            throw failure(i, "a to-one whose entity name is not UTF-8")
        }
        return (entity, RecordKeys.uuid(from: bytes[slot.start..<nameStart]))
    }

    /// Field `i` decoded as a value of `type` (null for serial type 0).
    ///
    /// - Throws: ``RecordDecodingError`` when `i` is not a field of the record, the field is
    ///   held in an asset, or its serial type or body does not fit `type`.
    package func value(_ i: Int, as type: Schema.Attribute.ValueType) throws(RecordDecodingError) -> PropertyValue {
        guard i >= 0, i < slots.count else { throw failure(i, "a field the record does not hold (it has \(slots.count))") }
        let slot = slots[i]
        let serialType = slot.serialType
        if serialType == RecordSerialType.null { return .null }
        if serialType == RecordSerialType.asset { throw failure(i, "a value held in an asset, read as inline") }
        let body = bytes[slot.start..<slot.end]
        func mismatch() -> RecordDecodingError { failure(i, "a body that is not a \(type)") }
        func text() throws(RecordDecodingError) -> String {
            guard RecordSerialType.isText(serialType) else { throw mismatch() }
            guard let s = String(validating: body, as: UTF8.self) else { throw failure(i, "text that is not UTF-8") }
            return s
        }
        func bytesBody() throws(RecordDecodingError) -> ArraySlice<UInt8> {
            guard RecordSerialType.isBytes(serialType) else { throw mismatch() }
            return body
        }
        func bits(_ expected: UInt64) throws(RecordDecodingError) -> UInt64 {
            guard serialType == expected else { throw mismatch() }
            return body.reduce(0) { $0 << 8 | UInt64($1) }
        }
        func signed() throws(RecordDecodingError) -> Int64 {
            guard serialType >= RecordSerialType.int8Bytes, serialType <= RecordSerialType.zero else { throw mismatch() }
            guard let first = body.first else { return 0 }
            var v: Int64 = Int64(Int8(bitPattern: first))
            for b in body.dropFirst() { v = v << 8 | Int64(b) }
            return v
        }
        func unsigned() throws(RecordDecodingError) -> UInt64 {
            guard serialType >= RecordSerialType.int8Bytes, serialType <= RecordSerialType.zero else { throw mismatch() }
            return body.reduce(0) { $0 << 8 | UInt64($1) }
        }
        func exactly<T: FixedWidthInteger>(_ v: some BinaryInteger, _: T.Type) throws(RecordDecodingError) -> T {
            guard let t = T(exactly: v) else { throw failure(i, "an integer out of the range of \(type)") }
            return t
        }
        switch type {
        case .bool:
            switch serialType {
            case RecordSerialType.false: return .bool(false)
            case RecordSerialType.true: return .bool(true)
            default: throw mismatch()
            }
        case .int: return .int(try exactly(try signed(), Int.self))
        case .int8: return .int8(try exactly(try signed(), Int8.self))
        case .int16: return .int16(try exactly(try signed(), Int16.self))
        case .int32: return .int32(try exactly(try signed(), Int32.self))
        case .int64: return .int64(try signed())
        case .uint: return .uint(try exactly(try unsigned(), UInt.self))
        case .uint8: return .uint8(try exactly(try unsigned(), UInt8.self))
        case .uint16: return .uint16(try exactly(try unsigned(), UInt16.self))
        case .uint32: return .uint32(try exactly(try unsigned(), UInt32.self))
        case .uint64: return .uint64(try unsigned())
        case .float: return .float(Float(bitPattern: UInt32(truncatingIfNeeded: try bits(RecordSerialType.float))))
        case .double: return .double(Double(bitPattern: try bits(RecordSerialType.double)))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try bits(RecordSerialType.double))))
        case .uuid:
            guard serialType == RecordSerialType.uuid else { throw mismatch() }
            return .uuid(RecordKeys.uuid(from: body))
        case .string: return .string(try text())
        case .url:
            guard let url = URL(string: try text()) else { throw failure(i, "text that is not a URL") }
            return .url(url)
        case .decimal:
            let s = try text()
            if s == "NaN" { return .decimal(Decimal.nan) }
            guard let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else { throw failure(i, "text that is not a decimal") }
            return .decimal(d)
        case .data: return .data(Data(try bytesBody()))
        case .codable(let typeName): return .codable(typeName: typeName, encoded: Data(try bytesBody()))
        case .array:
            var reader = ByteReader(Array(try bytesBody()), key: key)
            let value = try FieldValueCoding.decode(&reader)
            guard case .array = value else { throw failure(i, "an array field holding a \(value.caseName)") }
            guard reader.isAtEnd else { throw failure(i, "\(reader.remaining) bytes after an array's value") }
            return value
        }
    }
}

/// What a record writer is given for one field: a value, or the mark of a value held in the
/// field's asset.
package enum RecordFieldValue {
    /// The field's value, stored in the record (a to-one as ``PropertyValue/toOne(_:)``).
    case value(PropertyValue)
    /// The value is in the field's `A` asset entry (serial type 11).
    case asset
}

/// The one builder of format-2 record values: the concrete entity's name, then one field at a
/// time in field order (no dictionary: callers pass values in order).
package struct RecordWriter {
    private var header: [UInt8]
    private var body: [UInt8]

    /// A record of the concrete entity `entityName`, with no field yet.
    package init(entityName: String, bodyCapacity: Int = 64) {
        header = []
        header.reserveCapacity(entityName.utf8.count + 16)
        header.appendLengthPrefixed(entityName.utf8)
        body = []
        body.reserveCapacity(bodyCapacity)
    }

    /// Appends the next field: `value` encoded by its case (integers in the fewest bytes,
    /// a to-one as its target's primary key and entity, a codable's bytes without its type
    /// name, an array as its format-1 value encoding). A to-many value, never a field, is
    /// written as null.
    package mutating func append(_ value: PropertyValue) {
        switch value {
        case .null, .toOne(nil), .toMany: header.appendVarint(RecordSerialType.null)
        case .bool(let v): header.appendVarint(v ? RecordSerialType.true : RecordSerialType.false)
        case .int(let v): appendSigned(Int64(v))
        case .int8(let v): appendSigned(Int64(v))
        case .int16(let v): appendSigned(Int64(v))
        case .int32(let v): appendSigned(Int64(v))
        case .int64(let v): appendSigned(v)
        case .uint(let v): appendUnsigned(UInt64(v))
        case .uint8(let v): appendUnsigned(UInt64(v))
        case .uint16(let v): appendUnsigned(UInt64(v))
        case .uint32(let v): appendUnsigned(UInt64(v))
        case .uint64(let v): appendUnsigned(v)
        case .float(let v):
            header.appendVarint(RecordSerialType.float)
            appendBigEndian(UInt64(v.bitPattern), bytes: 4)
        case .double(let v):
            header.appendVarint(RecordSerialType.double)
            appendBigEndian(v.bitPattern, bytes: 8)
        case .date(let v):
            header.appendVarint(RecordSerialType.double)
            appendBigEndian(v.timeIntervalSinceReferenceDate.bitPattern, bytes: 8)
        case .uuid(let v):
            header.appendVarint(RecordSerialType.uuid)
            body.append(contentsOf: RecordKeys.bytes(of: v))
        case .string(let v): appendText(v.utf8)
        case .url(let v): appendText(v.absoluteString.utf8)
        case .decimal(let v): appendText(v.description.utf8)
        case .data(let v): appendBytes(v)
        case .codable(_, let encoded): appendBytes(encoded)
        case .array: appendBytes(FieldValueCoding.encoded(value))
        case .toOne(let id?):
            guard case .uuid(let pk) = id.primaryKey else {
                header.appendVarint(RecordSerialType.null)
                return
            }
            let name = id.entityName.utf8
            header.appendVarint(RecordSerialType.bytes(count: 16 + name.count))
            body.append(contentsOf: RecordKeys.bytes(of: pk))
            body.append(contentsOf: name)
        }
    }

    /// Appends the next field as held in its asset (serial type 11).
    package mutating func appendAsset() { header.appendVarint(RecordSerialType.asset) }

    /// Appends the next field as `value` says.
    package mutating func append(_ value: RecordFieldValue) {
        switch value {
        case .value(let v): append(v)
        case .asset: appendAsset()
        }
    }

    /// The record value: version 2, the header size, the header, the bodies.
    package func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(header.count + body.count + 4)
        out.append(RecordReader.version)
        out.appendVarint(UInt64(header.count))
        out.append(contentsOf: header)
        out.append(contentsOf: body)
        return out
    }

    /// The record of an object of `entityName` whose fields, in field order, are `values`.
    package static func record(entityName: String, values: some Sequence<RecordFieldValue>) -> [UInt8] {
        var writer = RecordWriter(entityName: entityName)
        for value in values { writer.append(value) }
        return writer.encoded()
    }

    /// The record of `snapshot` (of the entity of `fields`): each field's value from the
    /// snapshot (null when it has none), held in its asset where `isAsset` says.
    package static func record(
        of snapshot: DefaultSnapshot, fields: RecordFieldList, isAsset: (RecordField, PropertyValue) -> Bool = { _, _ in false }
    ) -> [UInt8] {
        var writer = RecordWriter(entityName: fields.entity)
        for field in fields.fields {
            let value = snapshot.values[field.name] ?? .null
            if isAsset(field, value) { writer.appendAsset() } else { writer.append(value) }
        }
        return writer.encoded()
    }

    private mutating func appendSigned(_ v: Int64) {
        let count: Int
        switch v {
        case 0:
            header.appendVarint(RecordSerialType.zero)
            return
        case Int64(Int8.min)...Int64(Int8.max): count = 1
        case Int64(Int16.min)...Int64(Int16.max): count = 2
        case Int64(Int32.min)...Int64(Int32.max): count = 4
        default: count = 8
        }
        appendInteger(UInt64(bitPattern: v), bytes: count)
    }

    private mutating func appendUnsigned(_ v: UInt64) {
        let count: Int
        switch v {
        case 0:
            header.appendVarint(RecordSerialType.zero)
            return
        case ...UInt64(UInt8.max): count = 1
        case ...UInt64(UInt16.max): count = 2
        case ...UInt64(UInt32.max): count = 4
        default: count = 8
        }
        appendInteger(v, bytes: count)
    }

    private mutating func appendInteger(_ bits: UInt64, bytes count: Int) {
        header.appendVarint(RecordSerialType.int8Bytes + UInt64(count.trailingZeroBitCount))
        appendBigEndian(bits, bytes: count)
    }

    private mutating func appendBigEndian(_ bits: UInt64, bytes count: Int) {
        for shift in stride(from: (count - 1) * 8, through: 0, by: -8) { body.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }

    private mutating func appendText(_ utf8: some Collection<UInt8>) {
        header.appendVarint(RecordSerialType.text(count: utf8.count))
        body.append(contentsOf: utf8)
    }

    private mutating func appendBytes(_ bytes: some Collection<UInt8>) {
        header.appendVarint(RecordSerialType.bytes(count: bytes.count))
        body.append(contentsOf: bytes)
    }
}
