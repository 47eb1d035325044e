import Foundation

/// The order-preserving encoding of index and uniqueness values (FORMAT.md, "Records (the
/// Snapshot layer)"), in the style of FoundationDB's tuple layer: a type byte, then contents
/// whose byte order is the values' order, so a range of keys is a range of values.
///
/// - null `0x01` (below every value, as nulls sort first);
/// - `false` `0x02`, `true` `0x03`;
/// - an integer of any width that fits `Int64`: `0x10` + 8 bytes big-endian with the sign bit
///   flipped; a `UInt64` above `Int64.max`: `0x11` + 8 bytes big-endian;
/// - `Float`, `Double` (and, approximately, `Decimal`): `0x20` + the `Double`'s bits big-endian,
///   all bits flipped when negative, else the sign bit flipped (NaN, made positive, sorts last);
/// - a date: `0x30` + its `timeIntervalSinceReferenceDate` as a double above;
/// - a string: `0x40` + its NFC UTF-8 bytes (``CanonicalStringOrder/normalizedUTF8(_:)``) with
///   0x00 escaped as 0x00 0xFF, then 0x00, so key order is ``CanonicalStringOrder`` and
///   canonically equivalent spellings have one key;
/// - a UUID: `0x50` + its 16 bytes; a URL: `0x51` + its `absoluteString` as a string;
/// - data: `0x60` + escaped bytes + 0x00;
/// - a to-one reference: `0x70` + the target's record name as a string;
/// - an array or Codable value: `0x7F` + its record encoding with every string in NFC (an
///   array's elements, a Codable value's type name), escaped (equality only).
///
/// Every encoding is prefix-free, so values concatenate into compound keys.
enum OrderedValueEncoding {
    static let nullTag: UInt8 = 0x01
    static let stringTag: UInt8 = 0x40

    /// How strings are normalized in keys.
    enum Normalization {
        /// The standard library's NFC (``CanonicalStringOrder``), for every string, URL and
        /// string inside an array or Codable value: what stores of header version 3 hold.
        case canonical
        /// What stores of header versions 1 and 2 hold: Foundation's
        /// `precomposedStringWithCanonicalMapping` for strings, URLs and arrays as they are. Only
        /// read, by the one-time upgrade of their keys (``StringKeyUpgrade``).
        case legacy
    }

    static func encode(_ value: PropertyValue, into out: inout [UInt8], _ normalization: Normalization = .canonical) {
        switch value {
        case .null, .toOne(nil): out.append(nullTag)
        case .bool(let v): out.append(v ? 0x03 : 0x02)
        case .int(let v): signed(Int64(v), &out)
        case .int8(let v): signed(Int64(v), &out)
        case .int16(let v): signed(Int64(v), &out)
        case .int32(let v): signed(Int64(v), &out)
        case .int64(let v): signed(v, &out)
        case .uint(let v): unsigned(UInt64(v), &out)
        case .uint8(let v): unsigned(UInt64(v), &out)
        case .uint16(let v): unsigned(UInt64(v), &out)
        case .uint32(let v): unsigned(UInt64(v), &out)
        case .uint64(let v): unsigned(v, &out)
        case .float(let v): double(Double(v), tag: 0x20, &out)
        case .double(let v): double(v, tag: 0x20, &out)
        case .decimal(let v): double(v.isNaN ? .nan : NSDecimalNumber(decimal: v).doubleValue, tag: 0x20, &out)
        case .date(let v): double(v.timeIntervalSinceReferenceDate, tag: 0x30, &out)
        case .string(let v): out.append(stringTag); escaped(stringBytes(v, normalization), &out)
        case .uuid(let v): out.append(0x50); out.append(contentsOf: RecordKeys.bytes(of: v))
        case .url(let v):
            out.append(0x51)
            escaped(normalization == .canonical ? CanonicalStringOrder.normalizedUTF8(v.absoluteString) : Array(v.absoluteString.utf8), &out)
        case .data(let v): out.append(0x60); escaped(Array(v), &out)
        case .toOne(let id?): out.append(0x70); escaped(Array(RecordName.of(id).utf8), &out)
        case .array, .codable, .toMany:
            out.append(0x7F)
            escaped(FieldValueCoding.encoded(normalization == .canonical ? normalizingStrings(value) : value), &out)
        }
    }

    static func encoded(_ values: [PropertyValue], _ normalization: Normalization = .canonical) -> [UInt8] {
        var out: [UInt8] = []
        for v in values { encode(v, into: &out, normalization) }
        return out
    }

    /// The bytes a string's encoding starts with, without its terminator: the range of every
    /// string whose NFC form begins with `prefix`'s byte-wise.
    static func stringPrefix(_ prefix: String) -> [UInt8] {
        var out: [UInt8] = [stringTag]
        escaped(CanonicalStringOrder.normalizedUTF8(prefix), &out)
        out.removeLast()
        return out
    }

    private static func stringBytes(_ string: String, _ normalization: Normalization) -> [UInt8] {
        switch normalization {
        case .canonical: CanonicalStringOrder.normalizedUTF8(string)
        case .legacy: Array(string.precomposedStringWithCanonicalMapping.utf8)
        }
    }

    /// `value` with every string it holds (array elements, at any depth; a Codable value's
    /// type name) in NFC, so equal values (``PropertyValue``'s `==`) encode alike.
    private static func normalizingStrings(_ value: PropertyValue) -> PropertyValue {
        switch value {
        case .string(let s): .string(String(decoding: CanonicalStringOrder.normalizedUTF8(s), as: UTF8.self))
        case .array(let values): .array(values.map(normalizingStrings))
        case let .codable(typeName, encoded):
            .codable(typeName: String(decoding: CanonicalStringOrder.normalizedUTF8(typeName), as: UTF8.self), encoded: encoded)
        default: value
        }
    }

    private static func signed(_ v: Int64, _ out: inout [UInt8]) {
        out.append(0x10)
        out.appendBigEndian(UInt64(bitPattern: v) ^ (1 << 63))
    }

    private static func unsigned(_ v: UInt64, _ out: inout [UInt8]) {
        if v <= UInt64(Int64.max) { signed(Int64(v), &out) } else { out.append(0x11); out.appendBigEndian(v) }
    }

    private static func double(_ v: Double, tag: UInt8, _ out: inout [UInt8]) {
        out.append(tag)
        let d = v.isNaN ? Double.nan : v
        let bits = d.bitPattern
        out.appendBigEndian(bits >> 63 == 1 ? ~bits : bits ^ (1 << 63))
    }

    private static func escaped(_ bytes: [UInt8], _ out: inout [UInt8]) {
        for b in bytes {
            out.append(b)
            if b == 0 { out.append(0xFF) }
        }
        out.append(0x00)
    }
}
