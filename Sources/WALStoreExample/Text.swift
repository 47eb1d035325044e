import Glibc

/// Number formatting and small output helpers (no Foundation needed).
enum Text {
    /// `value` with exactly `digits` decimals: `fixed(3.14159, 2)` is "3.14".
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "n/a" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = UInt64((abs(value) * scale).rounded())
        let whole = scaled / UInt64(scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard digits > 0 else { return sign + grouped(whole) }
        let fraction = String(scaled % UInt64(scale))
        return sign + grouped(whole) + "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }

    /// An integer with thousands separators: "1,000,000".
    static func grouped(_ value: some BinaryInteger) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return (value < 0 ? "-" : "") + result
    }

    /// A rate with sensible precision: decimals only for small numbers.
    static func rate(_ value: Double) -> String {
        fixed(value, value < 100 ? 1 : 0)
    }

    /// `text` padded with spaces to `width`, on the left (`right` aligned) or the right.
    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return right ? padding + text : text + padding
    }

    /// Bytes as text (lossy for non-UTF-8).
    static func string(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}

/// Bytes of a string's UTF-8.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Writes `message` and a newline to standard error.
func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { buffer in _ = write(STDERR_FILENO, buffer.baseAddress, buffer.count) }
}

/// Runs `body` and returns how long it took on the monotonic clock.
func timed(_ body: () throws -> Void) rethrows -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    try body()
    return start.duration(to: clock.now)
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { self / .seconds(1) }
}
