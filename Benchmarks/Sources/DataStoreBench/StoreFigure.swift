/// One measured figure: a workload's result for one contender.
struct StoreFigure: Codable, Sendable {
    /// The workload's row label.
    var workload: String
    /// The contender (``ContenderKind/rawValue``).
    var contender: String
    /// The value, in `unit`.
    var value: Double
    /// `posts/s`, `ms`, `B`, …
    var unit: String
    /// Whether a larger value is better (rates) or worse (times, bytes).
    var higherIsBetter: Bool
    /// How it was measured, when there is more to say.
    var detail: String?
}
