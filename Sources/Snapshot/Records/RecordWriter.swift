import Foundation

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
