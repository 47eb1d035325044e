/// The distribution of a set of latencies: how many, their sum, the median, the 99th percentile
/// and the longest.
public struct LatencySummary: Sendable {
    public let count: Int
    /// The sum, in seconds.
    public let total: Double
    /// In seconds; 0 when there are none.
    public let median: Double
    public let p99: Double
    public let longest: Double

    /// Summarises `seconds` (in any order).
    public init(_ seconds: [Double]) {
        let sorted = seconds.sorted()
        count = sorted.count
        total = sorted.reduce(0, +)
        // The smallest value with at least `fraction` of the values at or below it.
        func percentile(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let rank = Int((fraction * Double(sorted.count)).rounded(.up))
            return sorted[min(sorted.count, max(1, rank)) - 1]
        }
        median = percentile(0.5)
        p99 = percentile(0.99)
        longest = sorted.last ?? 0
    }

    /// The figures for ``Sample/figures``, in microseconds, their names starting with `prefix`.
    public func figures(_ prefix: String) -> [String: Double] {
        [
            prefix + "Count": Double(count),
            prefix + "MedianMicroseconds": median * 1e6,
            prefix + "P99Microseconds": p99 * 1e6,
            prefix + "LongestMicroseconds": longest * 1e6,
        ]
    }
}
