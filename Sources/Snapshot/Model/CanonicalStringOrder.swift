import Foundation

/// The one order of strings every sort, index, uniqueness rule and comparison of this package
/// uses: **the lexicographic order of the UTF-8 bytes of the strings' NFC forms** (Unicode
/// Normalization Form C, UAX #15, as Swift's standard library computes it).
///
/// It is a total order that agrees with Swift's `==`: two strings compare equal exactly when
/// they are canonically equivalent (`"e\u{301}"` and `"\u{e9}"`), whichever way each is
/// spelled. Byte order of UTF-8 is the order of Unicode scalar values, so this is the order
/// Swift documents for `String` (scalar values of the NFC forms), computed so that it is
/// transitive for every input. It is independent of locale: a store's order never changes with
/// the user's settings.
///
/// The normalization is the standard library's, the one `String`'s `==` and hashing use (not
/// Foundation's `precomposedStringWithCanonicalMapping`, which on Linux carries other Unicode
/// data and disagrees with `==` on some strings). Two strings that first differ at an ASCII
/// character not followed by a combining mark, ASCII strings, and strings that pass the NFC
/// quick check are compared as they are, without normalizing.
public enum CanonicalStringOrder {
    /// -1, 0 or 1 as `a` is before, equal to (canonically equivalent to) or after `b`.
    public static func compare(_ a: String, _ b: String) -> Int {
        if let c = a.utf8.withContiguousStorageIfAvailable({ x in
            b.utf8.withContiguousStorageIfAvailable { y in compare(utf8: UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) }
        }), let c {
            return c
        }
        var a = a, b = b  // not contiguous (a bridged string): made so
        return a.withUTF8 { x in b.withUTF8 { y in compare(utf8: UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) } }
    }

    /// -1, 0 or 1 as the UTF-8 text `a` is before, equal to or after `b` (ill-formed bytes are
    /// read as `String(decoding:as:)` repairs them).
    public static func compare(utf8 a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        // The common prefix P, then the first byte that differs. When at that place each string
        // ends or holds an ASCII character followed by the end or another ASCII character, that
        // character is a starter that composes with nothing (no ASCII character is the second of
        // a canonical composition, and one followed by ASCII has no mark after it), so each NFC
        // form is NFC(P) followed by that character: the bytes there decide.
        let x = a.assumingMemoryBound(to: UInt8.self), y = b.assumingMemoryBound(to: UInt8.self)
        let common = min(x.count, y.count)
        var i = 0
        while i < common && x[i] == y[i] { i += 1 }
        if i == x.count && i == y.count { return 0 }
        if isLoneASCII(x, at: i) && isLoneASCII(y, at: i) {
            if i == x.count { return -1 }
            if i == y.count { return 1 }
            return x[i] < y[i] ? -1 : 1
        }
        switch (isKnownNFC(a), isKnownNFC(b)) {
        case (true, true): return orderedBytes(a, b)
        case (true, false):
            return normalized(b).withUnsafeBytes { orderedBytes(a, $0) }
        case (false, true):
            return normalized(a).withUnsafeBytes { orderedBytes($0, b) }
        case (false, false):
            let x = normalized(a), y = normalized(b)
            return x.withUnsafeBytes { p in y.withUnsafeBytes { q in orderedBytes(p, q) } }
        }
    }

    /// The UTF-8 bytes of `string`'s NFC form: what the order compares, and what index and
    /// uniqueness keys hold (FORMAT.md, "Order-preserving encoding").
    public static func normalizedUTF8(_ string: String) -> [UInt8] {
        var contiguous = string
        let known: [UInt8]? = contiguous.withUTF8 { bytes in isKnownNFC(UnsafeRawBufferPointer(bytes)) ? Array(bytes) : nil }
        return known ?? normalizedString(string)
    }

    /// Whether `bytes` end at `i`, or hold there an ASCII byte followed by the end or an ASCII byte.
    @inline(__always)
    private static func isLoneASCII(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
        i == bytes.count || (bytes[i] < 0x80 && (i + 1 == bytes.count || bytes[i + 1] < 0x80))
    }

    /// Whether `bytes` are certainly in NFC: ASCII, or valid UTF-8 passing the NFC quick check
    /// (a `false` may still be NFC; the caller then normalizes).
    static func isKnownNFC(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        let n = bytes.count
        while i < n {
            if bytes[i] >= 0x80 { break }
            i += 1
        }
        if i == n { return true }
        guard let base = bytes.baseAddress else { return true }
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { return false }
        let rest = UnsafeRawBufferPointer(start: base + i, count: n - i).assumingMemoryBound(to: UInt8.self)
        // `UTF8Span` validates, so ill-formed bytes (never in a Swift `String`) take the slow path.
        guard let span = try? UTF8Span(validating: rest.span) else { return false }
        var checked = span
        return checked.checkForNFC(quickCheck: true)
    }

    /// The NFC form of UTF-8 text.
    private static func normalized(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        normalizedString(String(decoding: bytes, as: UTF8.self))
    }

    private static func normalizedString(_ string: String) -> [UInt8] {
        // The standard library's normalizer (5.7 and later: macOS 13 and its peers); before
        // that, Apple's Foundation's, which there uses the system's Unicode data.
        guard #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) else {
            return Array(string.precomposedStringWithCanonicalMapping.utf8)
        }
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count)
        string._withNFCCodeUnits { out.append($0) }
        return out
    }

    /// Lexicographic order of bytes, by `memcmp` over the common prefix.
    static func orderedBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let x = a.baseAddress, let y = b.baseAddress {
            let c = memcmp(x, y, common)
            if c != 0 { return c < 0 ? -1 : 1 }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }
}
