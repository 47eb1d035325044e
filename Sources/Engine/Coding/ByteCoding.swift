import CZlib

/// Little-endian integers and LEB128 varints appended to a byte array.
struct ByteWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func append(_ value: UInt8) { bytes.append(value) }
    mutating func append(_ value: UInt16) { appendLittleEndian(value) }
    mutating func append(_ value: UInt32) { appendLittleEndian(value) }
    mutating func append(_ value: UInt64) { appendLittleEndian(value) }
    mutating func append(contentsOf other: some Collection<UInt8>) { bytes.append(contentsOf: other) }

    mutating func appendVarint(_ value: Int) { appendVarint64(UInt64(value)) }

    /// A LEB128 varint of up to 10 bytes.
    mutating func appendVarint64(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    private mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Overwrites 4 bytes at `offset` with `value`, little-endian.
    mutating func set(_ value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for i in 0..<4 { bytes[offset + i] = raw[i] }
        }
    }
}

/// Bounds-checked reads from a byte buffer. Every read returns nil past the end instead of
/// trapping, so a decoder turns bad input into an error, never a crash.
struct ByteReader {
    let bytes: ArraySlice<UInt8>
    private(set) var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.position = bytes.startIndex
    }

    var remaining: Int { bytes.endIndex - position }
    var isAtEnd: Bool { position == bytes.endIndex }

    mutating func readUInt8() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { position += 1 }
        return bytes[position]
    }
    mutating func readUInt16() -> UInt16? { readLittleEndian() }
    mutating func readUInt32() -> UInt32? { readLittleEndian() }
    mutating func readUInt64() -> UInt64? { readLittleEndian() }

    /// A LEB128 varint of at most 5 bytes whose value fits in `limit`.
    mutating func readVarint(limit: Int) -> Int? {
        var result = 0
        var shift = 0
        while shift <= 28 {
            guard let byte = readUInt8() else { return nil }
            result |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result <= limit ? result : nil }
            shift += 7
        }
        return nil
    }

    /// A LEB128 varint of at most 10 bytes that fits in 64 bits.
    mutating func readVarint64() -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while shift <= 63 {
            guard let byte = readUInt8() else { return nil }
            let bits = UInt64(byte & 0x7F)
            guard shift < 63 || bits <= 1 else { return nil }  // the tenth byte holds one bit
            result |= bits << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
        return nil
    }

    mutating func readBytes(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, remaining >= count else { return nil }
        defer { position += count }
        return bytes[position..<position + count]
    }

    private mutating func readLittleEndian<T: FixedWidthInteger>() -> T? {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { return nil }
        var value: T = 0
        for i in 0..<size { value |= T(bytes[position + i]) << (8 * i) }
        position += size
        return value
    }
}

/// zlib's crc32, the checksum of every checksummed region in the format except blob chunks and
/// blob contents (``XXHash64``).
func checksum(_ bytes: ArraySlice<UInt8>, seed: UInt32 = 0) -> UInt32 {
    bytes.withUnsafeBytes { raw in
        UInt32(crc32(uLong(seed), raw.bindMemory(to: Bytef.self).baseAddress, uInt(raw.count)))
    }
}

/// True when every byte is zero; eight bytes at a time.
func isAllZero(_ bytes: ArraySlice<UInt8>) -> Bool {
    bytes.withUnsafeBytes { raw in
        var index = 0
        var bits: UInt64 = 0
        while index + 8 <= raw.count {
            bits |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < raw.count {
            bits |= UInt64(raw[index])
            index += 1
        }
        return bits == 0
    }
}

/// Reads a little-endian UInt32 at `offset` of `bytes` (which the caller has bounds-checked).
func loadUInt32(_ bytes: ArraySlice<UInt8>, at offset: Int) -> UInt32 {
    var value: UInt32 = 0
    for i in 0..<4 { value |= UInt32(bytes[offset + i]) << (8 * i) }
    return value
}

/// The little-endian `u16` at index `offset` of `bytes` (an index of the slice, not a distance
/// from its start); the caller has checked that two bytes are there.
func loadUInt16(_ bytes: ArraySlice<UInt8>, at offset: Int) -> UInt16 {
    UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
}
