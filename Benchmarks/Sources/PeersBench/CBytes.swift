import BenchSupport

extension Array where Element == UInt8 {
    /// Calls `body` with the bytes as a C `const char *` and their count (a valid pointer even
    /// for an empty array).
    func withCChars<R>(_ body: (UnsafePointer<CChar>, Int) throws -> R) rethrows -> R {
        try withUnsafeBytes { raw in
            guard let base = raw.baseAddress else {
                var empty: CChar = 0
                return try body(&empty, 0)
            }
            return try body(base.assumingMemoryBound(to: CChar.self), raw.count)
        }
    }

    /// A copy of `count` bytes at `pointer` (nil pointer: empty).
    init(copying pointer: UnsafePointer<CChar>?, count: Int) {
        guard let pointer, count > 0 else {
            self = []
            return
        }
        self = Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

/// Turns a C API's `char **errptr` result into a thrown error (freeing the message with `free`).
func throwIfError(
    _ message: UnsafeMutablePointer<CChar>?, _ what: String, free: (UnsafeMutableRawPointer) -> Void
) throws {
    guard let message else { return }
    let text = String(cString: message)
    free(UnsafeMutableRawPointer(message))
    throw BenchError("\(what): \(text)")
}
