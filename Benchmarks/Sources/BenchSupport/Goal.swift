/// A target of the project, judged on this run's figures: met, missed, or not judged when the run
/// did not measure what the target is stated for (another size, a workload not run).
public struct Goal: Sendable, Codable {
    public enum Verdict: String, Sendable, Codable {
        case met
        case miss = "MISS"
        case notJudged = "not judged"
    }

    /// What is measured, e.g. "open of 1,000,000 records, never compacted (segment hints)".
    public var name: String
    /// The target, e.g. "≤ 300 ms".
    public var target: String
    /// What this run measured, e.g. "2,839 ms"; empty when nothing was.
    public var measured: String
    public var verdict: Verdict
    /// Why it was not judged, or what the figure is compared with.
    public var remark: String?

    public init(name: String, target: String, measured: String, verdict: Verdict, remark: String? = nil) {
        self.name = name
        self.target = target
        self.measured = measured
        self.verdict = verdict
        self.remark = remark
    }

    /// A goal judged on `met`.
    public static func judged(_ name: String, target: String, measured: String, met: Bool, remark: String? = nil) -> Goal {
        Goal(name: name, target: target, measured: measured, verdict: met ? .met : .miss, remark: remark)
    }

    /// A goal this run cannot judge, and why.
    public static func notJudged(_ name: String, target: String, measured: String = "", because reason: String) -> Goal {
        Goal(name: name, target: target, measured: measured, verdict: .notJudged, remark: reason)
    }

    /// The line under the table: "MISS        open of ... ≤ 300 ms: 2,839 ms (remark)".
    public var line: String {
        var text = TableFormat.pad(verdict.rawValue, 10) + "  " + name + " " + target
        if !measured.isEmpty { text += ": " + measured }
        if let remark { text += " (" + remark + ")" }
        return text
    }

    /// The goals as a Markdown table, the form README.md shows them in.
    public static func markdown(_ goals: [Goal]) -> [String] {
        ["| goal | target | this run | verdict |", "|---|---|---:|---|"]
            + goals.map { goal in
                let measured = goal.measured + (goal.remark.map { goal.measured.isEmpty ? $0 : " (\($0))" } ?? "")
                let verdict = goal.verdict == .miss ? "**MISS**" : goal.verdict.rawValue
                return "| \(goal.name) | \(goal.target) | \(measured) | \(verdict) |"
            }
    }
}
