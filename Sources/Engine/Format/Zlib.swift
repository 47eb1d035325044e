import CZlib

/// zlib's one-shot `compress2` / `uncompress`, with the engine's bounds.
enum Zlib {
    /// Deflates `input` at `level` (1...9). Returns nil when the result would not be smaller than
    /// the input, so the caller stores the bytes raw.
    static func compress(_ input: ArraySlice<UInt8>, level: Int) -> [UInt8]? {
        let bound = Int(compressBound(uLong(input.count)))
        var produced = 0
        let output = [UInt8](unsafeUninitializedCapacity: bound) { out, initialized in
            var length = uLongf(bound)
            let status = input.withUnsafeBytes { src in
                compress2(
                    out.baseAddress, &length, src.bindMemory(to: Bytef.self).baseAddress,
                    uLong(src.count), Int32(level))
            }
            produced = status == Z_OK ? Int(length) : Int.max
            initialized = status == Z_OK ? Int(length) : 0
        }
        return produced < input.count ? output : nil
    }

    /// Inflates `input` into exactly `rawLength` bytes. Output is never allowed to grow past
    /// `rawLength`; any other outcome returns nil (the caller reports corruption).
    static func decompress(_ input: ArraySlice<UInt8>, rawLength: Int) -> [UInt8]? {
        var ok = false
        let output = [UInt8](unsafeUninitializedCapacity: rawLength) { out, initialized in
            var length = uLongf(rawLength)
            let status = input.withUnsafeBytes { src in
                uncompress(
                    out.baseAddress, &length, src.bindMemory(to: Bytef.self).baseAddress,
                    uLong(src.count))
            }
            ok = status == Z_OK && Int(length) == rawLength
            initialized = ok ? rawLength : 0
        }
        return ok ? output : nil
    }
}
