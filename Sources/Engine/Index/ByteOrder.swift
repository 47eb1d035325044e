#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Lexicographic order of byte strings (shorter first on a common prefix). The first eight bytes
/// are compared as one big-endian integer, which settles most comparisons of distinct keys
/// without a call to `memcmp`.
@inline(__always)
func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in compareBytes(pa, pb) } }
}

/// ``compareBytes(_:_:)-([UInt8],[UInt8])`` over raw bytes (the index's key tails).
@inline(__always)
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let common = min(a.count, b.count)
    if common >= 8 {
        let x = UInt64(bigEndian: a.loadUnaligned(as: UInt64.self))
        let y = UInt64(bigEndian: b.loadUnaligned(as: UInt64.self))
        if x != y { return x < y ? -1 : 1 }
    }
    let result = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
    return result != 0 ? Int(result) : a.count - b.count
}

@inline(__always)
func hasPrefix(_ key: [UInt8], _ prefix: [UInt8]) -> Bool {
    guard key.count >= prefix.count else { return false }
    if prefix.isEmpty { return true }
    return key.withUnsafeBytes { pk in
        prefix.withUnsafeBytes { pp in memcmp(pk.baseAddress!, pp.baseAddress!, prefix.count) == 0 }
    }
}

/// Lends `bytes`' memory to `body`, whose only errors are the engine's (the standard library's
/// `withUnsafeBytes` does not carry a typed error through).
@inline(__always)
func withBytes<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(EngineError) -> R) throws(EngineError) -> R {
    let result: Result<R, EngineError> = bytes.withUnsafeBytes { pointer in
        Result { () throws(EngineError) -> R in try body(pointer) }
    }
    return try result.get()
}
