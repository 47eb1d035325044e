import Foundation

/// The Codable form of a value: a keyed container `{"type": <case name>, "value": <contents>}`
/// (no `value` for ``PropertyValue/null`` and a to-one without a target).
///
/// Contents are written so that any encoder round-trips them exactly, whatever its strategies:
/// integers as integers of their width; finite floating-point numbers as numbers, and NaN,
/// infinities and negative zero as their bit pattern under `"bits"` instead of `"value"`; dates
/// as their `timeIntervalSinceReferenceDate` (the same way); UUIDs as their string; URLs as their
/// `absoluteString`; data and Codable bytes as base64 strings; decimals as their description;
/// arrays and identifier lists as arrays. Decoding checks every part and throws
/// `DecodingError.dataCorrupted` for anything else (an unknown type, a malformed URL, UUID,
/// base64 or decimal), never traps.
///
/// This form is used by JSON stores and tests; it is not the engine's record encoding.
extension PropertyValue: Codable {
    private enum CodingKeys: String, CodingKey {
        case type, value, bits, typeName
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(caseName, forKey: .type)
        switch self {
        case .null, .toOne(nil): break
        case .bool(let v): try c.encode(v, forKey: .value)
        case .int(let v): try c.encode(v, forKey: .value)
        case .int8(let v): try c.encode(v, forKey: .value)
        case .int16(let v): try c.encode(v, forKey: .value)
        case .int32(let v): try c.encode(v, forKey: .value)
        case .int64(let v): try c.encode(v, forKey: .value)
        case .uint(let v): try c.encode(v, forKey: .value)
        case .uint8(let v): try c.encode(v, forKey: .value)
        case .uint16(let v): try c.encode(v, forKey: .value)
        case .uint32(let v): try c.encode(v, forKey: .value)
        case .uint64(let v): try c.encode(v, forKey: .value)
        case .float(let v):
            if v.isFinite && !(v == 0 && v.sign == .minus) { try c.encode(v, forKey: .value) } else { try c.encode(v.bitPattern, forKey: .bits) }
        case .double(let v): try Self.encodeDouble(v, into: &c)
        case .date(let v): try Self.encodeDouble(v.timeIntervalSinceReferenceDate, into: &c)
        case .string(let v): try c.encode(v, forKey: .value)
        case .uuid(let v): try c.encode(v.uuidString, forKey: .value)
        case .url(let v): try c.encode(v.absoluteString, forKey: .value)
        case .data(let v): try c.encode(v.base64EncodedString(), forKey: .value)
        case .decimal(let v): try c.encode(v.description, forKey: .value)
        case .array(let v): try c.encode(v, forKey: .value)
        case let .codable(typeName, encoded):
            try c.encode(typeName, forKey: .typeName)
            try c.encode(encoded.base64EncodedString(), forKey: .value)
        case .toOne(let id?): try c.encode(id, forKey: .value)
        case .toMany(let ids): try c.encode(ids, forKey: .value)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let type = try c.decode(String.self, forKey: .type)
        func bad(_ what: String) -> DecodingError {
            DecodingError.dataCorruptedError(forKey: .value, in: c, debugDescription: "not a valid \(what)")
        }
        switch type {
        case "null": self = .null
        case "bool": self = .bool(try c.decode(Bool.self, forKey: .value))
        case "int": self = .int(try c.decode(Int.self, forKey: .value))
        case "int8": self = .int8(try c.decode(Int8.self, forKey: .value))
        case "int16": self = .int16(try c.decode(Int16.self, forKey: .value))
        case "int32": self = .int32(try c.decode(Int32.self, forKey: .value))
        case "int64": self = .int64(try c.decode(Int64.self, forKey: .value))
        case "uint": self = .uint(try c.decode(UInt.self, forKey: .value))
        case "uint8": self = .uint8(try c.decode(UInt8.self, forKey: .value))
        case "uint16": self = .uint16(try c.decode(UInt16.self, forKey: .value))
        case "uint32": self = .uint32(try c.decode(UInt32.self, forKey: .value))
        case "uint64": self = .uint64(try c.decode(UInt64.self, forKey: .value))
        case "float":
            if let bits = try c.decodeIfPresent(UInt32.self, forKey: .bits) {
                self = .float(Float(bitPattern: bits))
            } else {
                self = .float(try c.decode(Float.self, forKey: .value))
            }
        case "double": self = .double(try Self.decodeDouble(c))
        case "date": self = .date(Date(timeIntervalSinceReferenceDate: try Self.decodeDouble(c)))
        case "string": self = .string(try c.decode(String.self, forKey: .value))
        case "uuid":
            guard let uuid = UUID(uuidString: try c.decode(String.self, forKey: .value)) else { throw bad("UUID") }
            self = .uuid(uuid)
        case "url":
            guard let url = URL(string: try c.decode(String.self, forKey: .value)) else { throw bad("URL") }
            self = .url(url)
        case "data":
            guard let data = Data(base64Encoded: try c.decode(String.self, forKey: .value)) else { throw bad("base64 string") }
            self = .data(data)
        case "decimal":
            let text = try c.decode(String.self, forKey: .value)
            if text == "NaN" { self = .decimal(.nan); break }
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { throw bad("decimal") }
            self = .decimal(decimal)
        case "array": self = .array(try c.decode([PropertyValue].self, forKey: .value))
        case "codable":
            let typeName = try c.decode(String.self, forKey: .typeName)
            guard let data = Data(base64Encoded: try c.decode(String.self, forKey: .value)) else { throw bad("base64 string") }
            self = .codable(typeName: typeName, encoded: data)
        case "toOne": self = .toOne(try c.decodeIfPresent(PersistentIdentifier.self, forKey: .value))
        case "toMany": self = .toMany(try c.decode([PersistentIdentifier].self, forKey: .value))
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: c, debugDescription: "unknown value type \(type)")
        }
    }

    private static func encodeDouble(_ v: Double, into c: inout KeyedEncodingContainer<CodingKeys>) throws {
        if v.isFinite && !(v == 0 && v.sign == .minus) { try c.encode(v, forKey: .value) } else { try c.encode(v.bitPattern, forKey: .bits) }
    }

    private static func decodeDouble(_ c: KeyedDecodingContainer<CodingKeys>) throws -> Double {
        if let bits = try c.decodeIfPresent(UInt64.self, forKey: .bits) { return Double(bitPattern: bits) }
        return try c.decode(Double.self, forKey: .value)
    }
}
