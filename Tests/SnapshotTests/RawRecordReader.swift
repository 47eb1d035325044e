import Foundation

/// A reader of the record layer's bytes written from FORMAT.md ("Records (the Snapshot layer)"),
/// independently of the module's decoder, for the tests that check the raw shape.
enum RawRecord {
    enum Field: Hashable {
        case null
        case string(String)
        case date(Double)
        case data([UInt8])
        case other(UInt8)
    }

    struct Malformed: Error {}

    static func varint(_ bytes: [UInt8], _ i: inout Int) throws -> Int {
        var result = 0, shift = 0
        while true {
            guard i < bytes.count else { throw Malformed() }
            let b = bytes[i]; i += 1
            result |= Int(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// The fields of a record value, in stored order.
    static func fields(_ bytes: [UInt8]) throws -> [(String, Field)] {
        guard bytes.first == 1 else { throw Malformed() }
        var i = 1
        let count = try varint(bytes, &i)
        var result: [(String, Field)] = []
        for _ in 0..<count {
            let n = try varint(bytes, &i)
            let name = String(decoding: bytes[i..<i + n], as: UTF8.self); i += n
            let tag = bytes[i]; i += 1
            switch tag {
            case 0: result.append((name, .null))
            case 14:
                let n = try varint(bytes, &i)
                result.append((name, .string(String(decoding: bytes[i..<i + n], as: UTF8.self)))); i += n
            case 15:
                let bits = bytes[i..<i + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }; i += 8
                result.append((name, .date(Double(bitPattern: bits))))
            case 18:
                let n = try varint(bytes, &i)
                result.append((name, .data(Array(bytes[i..<i + n])))); i += n
            default:
                result.append((name, .other(tag)))
                return result
            }
        }
        guard i == bytes.count else { throw Malformed() }
        return result
    }

    static func uuidBytes(_ uuid: UUID) -> [UInt8] { withUnsafeBytes(of: uuid.uuid) { Array($0) } }

    static func name(_ s: String) -> [UInt8] { Array(s.utf8) + [0] }
}
