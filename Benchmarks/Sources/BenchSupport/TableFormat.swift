import Foundation

/// Number formatting for the table: grouped counts, fixed decimals, SI byte sizes.
public enum TableFormat {
    /// `value` with `decimals` digits after the point.
    public static func fixed(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }

    /// A rate or count with thousands separators; one decimal below 100, two below 10.
    public static func count(_ value: Double) -> String {
        if value < 10 { return fixed(value, 2) }
        if value < 100 { return fixed(value, 1) }
        let digits = String(Int(value.rounded()))
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return grouped
    }

    /// Microseconds: two decimals below 10, one below 1,000, grouped above.
    public static func micros(_ value: Double) -> String {
        if value < 10 { return fixed(value, 2) }
        if value < 1_000 { return fixed(value, 1) }
        return count(value)
    }

    /// Bytes in SI units (kB, MB, GB: powers of 1,000, like the MB/s column).
    public static func bytes(_ value: UInt64) -> String {
        let v = Double(value)
        if v < 1e3 { return "\(value) B" }
        if v < 1e6 { return fixed(v / 1e3, 1) + " kB" }
        if v < 1e9 { return fixed(v / 1e6, 1) + " MB" }
        return fixed(v / 1e9, 2) + " GB"
    }

    /// A ratio such as `3.25x`.
    public static func ratio(_ value: Double) -> String {
        value < 10 ? fixed(value, 2) + "x" : fixed(value, 1) + "x"
    }

    /// `text` padded with spaces to `width` characters, on the left (`right: true`) or right.
    public static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let gap = max(0, width - text.count)
        let spaces = String(repeating: " ", count: gap)
        return right ? spaces + text : text + spaces
    }
}
