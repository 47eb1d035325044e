import Foundation

/// Why bytes read back from the engine could not be decoded: the record layer's corruption
/// report, carried as ``DataStoreError/underlying`` of a ``DataStoreError/Code/engine`` error.
public struct RecordDecodingError: Error, Sendable, CustomStringConvertible {
    /// What was wrong, and where in the bytes.
    public var reason: String
    /// The key whose value (or the key itself) failed to decode.
    public var key: [UInt8]

    /// A decoding failure of `key`'s bytes for `reason`.
    public init(_ reason: String, key: [UInt8]) {
        self.reason = reason
        self.key = key
    }

    /// The key in hex, then the reason.
    public var description: String { "record \(key.map { String(format: "%02x", $0) }.joined()): \(reason)" }
}

/// A bounds-checked cursor over bytes read from disk: every read past the end, or of a length
/// larger than what is left, throws instead of trapping.
struct ByteReader {
    let bytes: [UInt8]
    var offset: Int
    let key: [UInt8]

    init(_ bytes: [UInt8], key: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.key = key
        self.offset = offset
    }

    var isAtEnd: Bool { offset >= bytes.count }
    var remaining: Int { bytes.count - offset }

    func failure(_ reason: String) -> RecordDecodingError { RecordDecodingError("\(reason) at byte \(offset)", key: key) }

    mutating func byte() throws(RecordDecodingError) -> UInt8 {
        guard offset < bytes.count else { throw failure("unexpected end") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func take(_ count: Int) throws(RecordDecodingError) -> [UInt8] {
        guard count >= 0, count <= remaining else { throw failure("a length of \(count) with \(remaining) bytes left") }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func bigEndian64() throws(RecordDecodingError) -> UInt64 {
        guard remaining >= 8 else { throw failure("a length of 8 with \(remaining) bytes left") }
        defer { offset += 8 }
        return bytes[offset..<offset + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Moves past `count` bytes without reading them.
    mutating func skip(_ count: Int) throws(RecordDecodingError) {
        guard count >= 0, count <= remaining else { throw failure("a length of \(count) with \(remaining) bytes left") }
        offset += count
    }

    /// An unsigned LEB128 varint of at most 10 bytes.
    mutating func varint() throws(RecordDecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64 else { throw failure("a varint longer than 10 bytes") }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// A varint length, checked against what is left.
    mutating func length() throws(RecordDecodingError) -> Int {
        let n = try varint()
        guard n <= UInt64(remaining) else { throw failure("a length of \(n) with \(remaining) bytes left") }
        return Int(n)
    }

    mutating func string() throws(RecordDecodingError) -> String {
        let count = try length()
        guard let s = String(validating: bytes[offset..<offset + count], as: UTF8.self) else { throw failure("invalid UTF-8") }
        offset += count
        return s
    }
}

/// Appending the primitive encodings the record layer uses.
extension Array where Element == UInt8 {
    mutating func appendVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        append(UInt8(v))
    }

    mutating func appendBigEndian(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func appendLengthPrefixed(_ bytes: some Collection<UInt8>) {
        appendVarint(UInt64(bytes.count))
        append(contentsOf: bytes)
    }
}
