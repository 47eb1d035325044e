#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Lexicographic order of byte strings (shorter first on a common prefix), by `memcmp`.
@inline(__always)
func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    let common = min(a.count, b.count)
    let result = a.withUnsafeBytes { pa in
        b.withUnsafeBytes { pb in common == 0 ? 0 : memcmp(pa.baseAddress!, pb.baseAddress!, common) }
    }
    if result != 0 { return Int(result) }
    return a.count - b.count
}

@inline(__always)
func hasPrefix(_ key: [UInt8], _ prefix: [UInt8]) -> Bool {
    guard key.count >= prefix.count else { return false }
    if prefix.isEmpty { return true }
    return key.withUnsafeBytes { pk in
        prefix.withUnsafeBytes { pp in memcmp(pk.baseAddress!, pp.baseAddress!, prefix.count) == 0 }
    }
}
