import BenchSupport
import Foundation

/// Collects a child's figures and prints each as it is measured (on standard error, so that
/// standard output carries only the result line the parent reads).
final class SuiteRecorder {
    let contender: ContenderKind
    private(set) var figures: [StoreFigure] = []

    init(contender: ContenderKind) { self.contender = contender }

    func add(_ workload: String, _ value: Double, _ unit: String, higherIsBetter: Bool, _ detail: String? = nil) {
        figures.append(StoreFigure(workload: workload, contender: contender.rawValue, value: value, unit: unit, higherIsBetter: higherIsBetter, detail: detail))
        FileHandle.standardError.write(Data("  \(contender.rawValue): \(workload): \(String(format: "%.2f", value)) \(unit)\(detail.map { " (\($0))" } ?? "")\n".utf8))
    }

    /// A rate: `count` per `seconds`.
    func rate(_ workload: String, _ count: Int, _ seconds: Double, _ unit: String, _ detail: String? = nil) {
        add(workload, Double(count) / seconds, unit, higherIsBetter: true, detail)
    }

    /// A time in milliseconds.
    func milliseconds(_ workload: String, _ seconds: Double, _ detail: String? = nil) {
        add(workload, seconds * 1e3, "ms", higherIsBetter: false, detail)
    }

    /// The line the parent parses.
    func resultLine() throws -> String {
        ChildProcess.marker + String(decoding: try JSONEncoder().encode(figures), as: UTF8.self)
    }
}

/// The median of `repetitions` timings of `body`, in seconds.
func medianSeconds(_ repetitions: Int, _ body: () async throws -> Void) async rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<repetitions {
        let start = ContinuousClock.now
        try await body()
        times.append(Stopwatch.seconds(ContinuousClock.now - start))
    }
    return times.sorted()[times.count / 2]
}

/// The seconds `body` took.
func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    return Stopwatch.seconds(ContinuousClock.now - start)
}
