import Foundation

/// The typed binary encoding of one ``PropertyValue`` inside a record value (FORMAT.md,
/// "Records (the Snapshot layer)"): a type byte, then the contents. Fixed-width numbers are
/// big-endian; floating-point numbers and dates are their IEEE 754 bit patterns, so every value
/// round-trips exactly (NaN payloads and negative zero included). References are not values of
/// this encoding: a to-one is written as its target's record name (a string), and to-many
/// relationships are not in records at all.
enum FieldValueCoding {
    enum Tag: UInt8 {
        case null = 0, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64
        case float, double, string, date, uuid, url, data, decimal, array, codable
    }

    static func encode(_ value: PropertyValue, into out: inout [UInt8]) {
        func tag(_ t: Tag) { out.append(t.rawValue) }
        switch value {
        case .null, .toOne(nil): tag(.null)
        case .bool(let v): tag(.bool); out.append(v ? 1 : 0)
        case .int(let v): tag(.int); out.appendBigEndian(UInt64(bitPattern: Int64(v)))
        case .int8(let v): tag(.int8); out.append(UInt8(bitPattern: v))
        case .int16(let v): tag(.int16); out.appendBigEndian(UInt64(UInt16(bitPattern: v)))
        case .int32(let v): tag(.int32); out.appendBigEndian(UInt64(UInt32(bitPattern: v)))
        case .int64(let v): tag(.int64); out.appendBigEndian(UInt64(bitPattern: v))
        case .uint(let v): tag(.uint); out.appendBigEndian(UInt64(v))
        case .uint8(let v): tag(.uint8); out.append(v)
        case .uint16(let v): tag(.uint16); out.appendBigEndian(UInt64(v))
        case .uint32(let v): tag(.uint32); out.appendBigEndian(UInt64(v))
        case .uint64(let v): tag(.uint64); out.appendBigEndian(v)
        case .float(let v): tag(.float); out.appendBigEndian(UInt64(v.bitPattern))
        case .double(let v): tag(.double); out.appendBigEndian(v.bitPattern)
        case .string(let v): tag(.string); out.appendLengthPrefixed(Array(v.utf8))
        case .date(let v): tag(.date); out.appendBigEndian(v.timeIntervalSinceReferenceDate.bitPattern)
        case .uuid(let v): tag(.uuid); out.append(contentsOf: RecordKeys.bytes(of: v))
        case .url(let v): tag(.url); out.appendLengthPrefixed(Array(v.absoluteString.utf8))
        case .data(let v): tag(.data); out.appendLengthPrefixed(Array(v))
        case .decimal(let v): tag(.decimal); out.appendLengthPrefixed(Array(v.description.utf8))
        case .array(let values):
            tag(.array)
            out.appendVarint(UInt64(values.count))
            for element in values { encode(element, into: &out) }
        case let .codable(typeName, encoded):
            tag(.codable)
            out.appendLengthPrefixed(Array(typeName.utf8))
            out.appendLengthPrefixed(Array(encoded))
        case .toOne(let id?):
            // Never reached for records (the store writes record names); kept total.
            tag(.string); out.appendLengthPrefixed(Array(RecordName.of(id).utf8))
        case .toMany(let ids):
            tag(.array)
            out.appendVarint(UInt64(ids.count))
            for id in ids { tag(.string); out.appendLengthPrefixed(Array(RecordName.of(id).utf8)) }
        }
    }

    /// How many bytes ``encode(_:into:)`` writes for `value`, without writing them (what the
    /// asset threshold is compared with).
    static func encodedCount(_ value: PropertyValue) -> Int {
        func varintCount(_ n: Int) -> Int {
            var count = 1
            var v = UInt64(n) >> 7
            while v != 0 { count += 1; v >>= 7 }
            return count
        }
        func prefixed(_ n: Int) -> Int { 1 + varintCount(n) + n }
        switch value {
        case .null, .toOne(nil): return 1
        case .bool, .int8, .uint8: return 2
        case .int, .int16, .int32, .int64, .uint, .uint16, .uint32, .uint64, .float, .double, .date: return 9
        case .uuid: return 17
        case .string(let v): return prefixed(v.utf8.count)
        case .url(let v): return prefixed(v.absoluteString.utf8.count)
        case .data(let v): return prefixed(v.count)
        case .decimal(let v): return prefixed(v.description.utf8.count)
        case .codable(let typeName, let encoded):
            return 1 + varintCount(typeName.utf8.count) + typeName.utf8.count + varintCount(encoded.count) + encoded.count
        case .array(let values): return 1 + varintCount(values.count) + values.reduce(0) { $0 + encodedCount($1) }
        case .toOne(let id?): return prefixed(RecordName.of(id).utf8.count)
        case .toMany(let ids): return 1 + varintCount(ids.count) + ids.reduce(0) { $0 + prefixed(RecordName.of($1).utf8.count) }
        }
    }

    static func encoded(_ value: PropertyValue) -> [UInt8] {
        var out: [UInt8] = []
        encode(value, into: &out)
        return out
    }

    /// Moves past one value without decoding it (its bytes are checked only as far as finding
    /// its end needs); arrays nest at most 64 deep.
    static func skip(_ reader: inout ByteReader, depth: Int = 0) throws(RecordDecodingError) {
        let raw = try reader.byte()
        guard let tag = Tag(rawValue: raw) else { throw reader.failure("unknown value type \(raw)") }
        switch tag {
        case .null: return
        case .bool, .int8, .uint8: try reader.skip(1)
        case .int, .int16, .int32, .int64, .uint, .uint16, .uint32, .uint64, .float, .double, .date: try reader.skip(8)
        case .uuid: try reader.skip(16)
        case .string, .url, .data, .decimal: try reader.skip(try reader.length())
        case .array:
            guard depth < 64 else { throw reader.failure("arrays nested over 64 deep") }
            let count = try reader.varint()
            guard count <= UInt64(reader.remaining) else { throw reader.failure("an array of \(count) values with \(reader.remaining) bytes left") }
            for _ in 0..<count { try skip(&reader, depth: depth + 1) }
        case .codable:
            try reader.skip(try reader.length())
            try reader.skip(try reader.length())
        }
    }

    /// One value; arrays nest at most 64 deep.
    static func decode(_ reader: inout ByteReader, depth: Int = 0) throws(RecordDecodingError) -> PropertyValue {
        let raw = try reader.byte()
        guard let tag = Tag(rawValue: raw) else { throw reader.failure("unknown value type \(raw)") }
        func fixed(_ bits: Int) throws(RecordDecodingError) -> UInt64 {
            let v = try reader.bigEndian64()
            guard bits == 64 || v >> UInt64(bits) == 0 else { throw reader.failure("a \(bits)-bit value out of range") }
            return v
        }
        switch tag {
        case .null: return .null
        case .bool:
            let b = try reader.byte()
            guard b <= 1 else { throw reader.failure("a Boolean of \(b)") }
            return .bool(b == 1)
        case .int:
            let v = Int64(bitPattern: try fixed(64))
            guard let i = Int(exactly: v) else { throw reader.failure("an Int out of range") }
            return .int(i)
        case .int8: return .int8(Int8(bitPattern: try reader.byte()))
        case .int16: return .int16(Int16(bitPattern: UInt16(try fixed(16))))
        case .int32: return .int32(Int32(bitPattern: UInt32(try fixed(32))))
        case .int64: return .int64(Int64(bitPattern: try fixed(64)))
        case .uint:
            guard let u = UInt(exactly: try fixed(64)) else { throw reader.failure("a UInt out of range") }
            return .uint(u)
        case .uint8: return .uint8(try reader.byte())
        case .uint16: return .uint16(UInt16(try fixed(16)))
        case .uint32: return .uint32(UInt32(try fixed(32)))
        case .uint64: return .uint64(try fixed(64))
        case .float: return .float(Float(bitPattern: UInt32(try fixed(32))))
        case .double: return .double(Double(bitPattern: try fixed(64)))
        case .string: return .string(try reader.string())
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed(64))))
        case .uuid: return .uuid(RecordKeys.uuid(from: try reader.take(16)))
        case .url:
            let s = try reader.string()
            guard let url = URL(string: s) else { throw reader.failure("an invalid URL") }
            return .url(url)
        case .data: return .data(Data(try reader.take(try reader.length())))
        case .decimal:
            let s = try reader.string()
            if s == "NaN" { return .decimal(Decimal.nan) }
            guard let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else { throw reader.failure("an invalid decimal") }
            return .decimal(d)
        case .array:
            guard depth < 64 else { throw reader.failure("arrays nested over 64 deep") }
            let count = try reader.varint()
            guard count <= UInt64(reader.remaining) else { throw reader.failure("an array of \(count) values with \(reader.remaining) bytes left") }
            var values: [PropertyValue] = []
            for _ in 0..<count { values.append(try decode(&reader, depth: depth + 1)) }
            return .array(values)
        case .codable:
            let typeName = try reader.string()
            return .codable(typeName: typeName, encoded: Data(try reader.take(try reader.length())))
        }
    }
}
