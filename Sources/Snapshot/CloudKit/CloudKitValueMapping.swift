import Foundation

/// How an attribute's value is written as a CloudKit field and read back, given its schema type
/// (Core Data's CloudKit mirroring's choices where it has one):
///
/// | schema type | field type |
/// |---|---|
/// | `bool` | `INT64` 0 or 1 |
/// | `int`, `int8` … `int64`, `uint8` … `uint32` | `INT64` |
/// | `uint`, `uint64` | `INT64`, the same 64 bits (a value above `Int64.max` is negative) |
/// | `float`, `double` | `DOUBLE` (a non-finite value: the export refuses the record, naming it) |
/// | `string` | `STRING` |
/// | `uuid`, `url`, `decimal` | `STRING` (`uuidString`, `absoluteString`, `description`) |
/// | `date` | `TIMESTAMP`, whole milliseconds since 1970 (the fraction rounded off) |
/// | `data` | `BYTES` (base64), or an asset (`CD_<name>_ckAsset`, `ASSETID`) |
/// | `array` of one of the above | its `_LIST` type |
/// | `codable`, nested arrays | `BYTES` (the Codable's encoding; the array's `PropertyValue` JSON, keys sorted) |
///
/// A null value is no field at all (CloudKit has no null).
enum CloudKitValueMapping {
    static func field(_ value: PropertyValue, type: Schema.Attribute.ValueType) -> CloudKitField? {
        switch value {
        case .null, .toOne, .toMany: return nil
        case .array(let items):
            guard case .array(let element) = type else { return nil }
            return list(items, element: element)
        case .codable(_, let encoded): return .bytes(encoded)
        default:
            return scalar(value)
        }
    }

    private static func scalar(_ value: PropertyValue) -> CloudKitField? {
        switch value {
        case .bool(let b): .int64(b ? 1 : 0)
        case .int(let i): .int64(Int64(i))
        case .int8(let i): .int64(Int64(i))
        case .int16(let i): .int64(Int64(i))
        case .int32(let i): .int64(Int64(i))
        case .int64(let i): .int64(i)
        case .uint(let i): .int64(Int64(bitPattern: UInt64(i)))
        case .uint8(let i): .int64(Int64(i))
        case .uint16(let i): .int64(Int64(i))
        case .uint32(let i): .int64(Int64(i))
        case .uint64(let i): .int64(Int64(bitPattern: i))
        case .float(let f): .double(Double(f))
        case .double(let d): .double(d)
        case .string(let s): .string(s)
        case .uuid(let u): .string(u.uuidString)
        case .url(let u): .string(u.absoluteString)
        case .decimal(let d): .string(d.description)
        case .date(let d): timestamp(d)
        case .data(let d): .bytes(d)
        default: nil
        }
    }

    /// A date as whole milliseconds since 1970, rounded to the nearest; a date that is not
    /// finite stays a non-finite `DOUBLE`, which the export refuses by name.
    static func timestamp(_ date: Date) -> CloudKitField {
        let ms = (date.timeIntervalSince1970 * 1000).rounded()
        guard ms.isFinite else { return .double(ms) }
        return .timestamp(Int64(max(min(ms, 9.2e18), -9.2e18)))
    }

    private static func list(_ items: [PropertyValue], element: Schema.Attribute.ValueType) -> CloudKitField? {
        let fields = items.map(scalar)
        switch element {
        case .bool, .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64:
            return .int64List(fields.map { if case .int64(let i)? = $0 { i } else { 0 } })
        case .float, .double:
            return .doubleList(fields.map { if case .double(let d)? = $0 { d } else { 0 } })
        case .date:
            let stamps = fields.map { field -> Int64? in
                if case .timestamp(let ms)? = field { return ms }
                return nil
            }
            if stamps.contains(nil) { return .doubleList(fields.map { if case .double(let d)? = $0 { d } else { 0 } }) }
            return .timestampList(stamps.map { $0! })
        case .string, .uuid, .url, .decimal:
            return .stringList(fields.map { if case .string(let s)? = $0 { s } else { "" } })
        case .data:
            return .bytesList(fields.map { if case .bytes(let d)? = $0 { d } else { Data() } })
        case .array, .codable:
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let encoded = (try? encoder.encode(PropertyValue.array(items))) ?? Data()
            return .bytes(encoded)
        }
    }

    /// The value `field` holds for an attribute of `type`, or nil when the field's type does
    /// not fit the attribute's.
    static func value(_ field: CloudKitField, type: Schema.Attribute.ValueType) -> PropertyValue? {
        switch (type, field) {
        case (.array(let element), .bytes(let data)):
            if case .array = element {} else if case .codable = element {} else { return nil }
            return try? JSONDecoder().decode(PropertyValue.self, from: data)
        case (.array(let element), _):
            let items: [CloudKitField]
            switch field {
            case .int64List(let l): items = l.map(CloudKitField.int64)
            case .doubleList(let l): items = l.map(CloudKitField.double)
            case .timestampList(let l): items = l.map(CloudKitField.timestamp)
            case .stringList(let l): items = l.map(CloudKitField.string)
            case .bytesList(let l): items = l.map(CloudKitField.bytes)
            default: return nil
            }
            var values: [PropertyValue] = []
            values.reserveCapacity(items.count)
            for item in items {
                guard let v = scalarValue(item, type: element) else { return nil }
                values.append(v)
            }
            return .array(values)
        case (.codable(let typeName), .bytes(let data)):
            return .codable(typeName: typeName, encoded: data)
        default:
            return scalarValue(field, type: type)
        }
    }

    private static func scalarValue(_ field: CloudKitField, type: Schema.Attribute.ValueType) -> PropertyValue? {
        switch (type, field) {
        case (.bool, .int64(let i)): return i == 0 || i == 1 ? .bool(i == 1) : nil
        case (.int, .int64(let i)): return Int(exactly: i).map(PropertyValue.int)
        case (.int8, .int64(let i)): return Int8(exactly: i).map(PropertyValue.int8)
        case (.int16, .int64(let i)): return Int16(exactly: i).map(PropertyValue.int16)
        case (.int32, .int64(let i)): return Int32(exactly: i).map(PropertyValue.int32)
        case (.int64, .int64(let i)): return .int64(i)
        case (.uint, .int64(let i)): return UInt(exactly: UInt64(bitPattern: i)).map(PropertyValue.uint)
        case (.uint8, .int64(let i)): return UInt8(exactly: i).map(PropertyValue.uint8)
        case (.uint16, .int64(let i)): return UInt16(exactly: i).map(PropertyValue.uint16)
        case (.uint32, .int64(let i)): return UInt32(exactly: i).map(PropertyValue.uint32)
        case (.uint64, .int64(let i)): return .uint64(UInt64(bitPattern: i))
        case (.float, .double(let d)): return .float(Float(d))
        case (.double, .double(let d)): return .double(d)
        case (.string, .string(let s)): return .string(s)
        case (.uuid, .string(let s)): return UUID(uuidString: s).map(PropertyValue.uuid)
        case (.url, .string(let s)): return URL(string: s).map(PropertyValue.url)
        case (.decimal, .string(let s)): return Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")).map(PropertyValue.decimal)
        case (.date, .timestamp(let ms)): return .date(Date(timeIntervalSince1970: Double(ms) / 1000))
        case (.data, .bytes(let d)): return .data(d)
        default: return nil
        }
    }
}
