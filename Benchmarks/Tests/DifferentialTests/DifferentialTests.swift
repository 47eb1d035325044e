import Foundation
import Snapshot
import Testing

/// What the random run does, from the environment:
///
/// - `WALSTORE_DIFF_SECONDS` — how long to generate and run programs (default 20).
/// - `WALSTORE_DIFF_SEED` — run this one seed only (decimal or `0x` hex), e.g. one a failure
///   printed.
/// - `WALSTORE_DIFF_FIRST_SEED` — the first seed of a timed run (default 1); seeds go up by one.
/// - `WALSTORE_DIFF_STEPS` — steps per program (default 60).
/// - `WALSTORE_DIFF_INCLUDE` — shapes to make besides ``DiffShapes/defaults`` (`twice`,
///   `combining`, `mismatch`, `toManySort`, `upsertMerge`): `negativeZero`, or `all`.
/// - `WALSTORE_DIFF_SHRINK_SECONDS` — the most time shrinking a failure may take (default 60).
struct DiffSettings {
    var seconds: Double = 20
    var seed: UInt64?
    var firstSeed: UInt64 = 1
    var steps = 60
    var shapes: DiffShapes = .defaults
    var shrinkSeconds: Double = 60

    static func parse(_ text: String) -> UInt64? {
        text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
    }

    static var fromEnvironment: DiffSettings {
        let environment = ProcessInfo.processInfo.environment
        var settings = DiffSettings()
        if let text = environment["WALSTORE_DIFF_SECONDS"], let seconds = Double(text) { settings.seconds = seconds }
        if let text = environment["WALSTORE_DIFF_SEED"] { settings.seed = parse(text) }
        if let text = environment["WALSTORE_DIFF_FIRST_SEED"], let seed = parse(text) { settings.firstSeed = seed }
        if let text = environment["WALSTORE_DIFF_STEPS"], let steps = Int(text), steps > 0 { settings.steps = steps }
        if let text = environment["WALSTORE_DIFF_INCLUDE"] { settings.shapes.formUnion(DiffShapes(names: text)) }
        if let text = environment["WALSTORE_DIFF_SHRINK_SECONDS"], let seconds = Double(text) { settings.shrinkSeconds = seconds }
        return settings
    }
}

/// A failing program found by ``explore(seed:steps:shapes:tamper:)``.
struct DiffFailure {
    var seed: UInt64
    var program: [Step]
    var disagreement: Disagreement
}

enum Differential {
    /// Generates a program of `steps` steps from `seed` and runs it on both stores, step by
    /// step (each step made from the state they agree on); the program up to the first
    /// disagreement, if there is one.
    static func explore(
        seed: UInt64, steps: Int, shapes: DiffShapes, tamper: ((any DiffSide) -> any DiffSide)? = nil
    ) throws -> DiffFailure? {
        let run = try DiffRun(tamper: tamper)
        defer { run.close() }
        var generator = DiffGenerator(seed: seed, shapes: shapes)
        var program: [Step] = []
        for i in 0..<steps {
            let step = generator.step(current: run.current, lastKnown: run.lastKnown)
            program.append(step)
            if let disagreement = run.execute(step, index: i) { return DiffFailure(seed: seed, program: program, disagreement: disagreement) }
        }
        return nil
    }

    /// The program as numbered Swift-ish steps.
    static func listing(_ steps: [Step]) -> String {
        steps.enumerated().map { "  \($0.offset). \($0.element.description.replacingOccurrences(of: "\n", with: "\n     "))" }
            .joined(separator: "\n")
    }

    /// What a failure prints: the seed, how to replay it, the minimal program and both answers.
    static func report(_ failure: DiffFailure, shrunk: [Step], disagreement: Disagreement, trials: Int, shapes: DiffShapes) -> String {
        let include = DiffShapes.names.filter { shapes.contains($0.1) && !DiffShapes.defaults.contains($0.1) }.map(\.0).joined(separator: ",")
        return """
            WALDataStore and CoreDataSQLiteStore disagree: seed \(failure.seed)\(include.isEmpty ? "" : ", shapes \(include)").
            Replay: WALSTORE_DIFF_SEED=\(failure.seed)\(include.isEmpty ? "" : " WALSTORE_DIFF_INCLUDE=\(include)") swift test --package-path Benchmarks --filter Differential
            Minimal reproduction (\(shrunk.count) of \(failure.program.count) steps, \(trials) candidates tried):
            \(listing(shrunk))
            The last step disagrees, \(disagreement)
            """
    }
}

@Suite struct DifferentialTests {
    /// The random run: programs from consecutive seeds until the time is up (or the one seed
    /// `WALSTORE_DIFF_SEED` names); a disagreement is shrunk and printed with its seed.
    @Test func walDataStoreAndTheCoreDataShapedStoreAgreeOnRandomPrograms() throws {
        let settings = DiffSettings.fromEnvironment
        let deadline = Date().addingTimeInterval(settings.seconds)
        var seed = settings.seed ?? settings.firstSeed
        var programs = 0
        repeat {
            programs += 1
            if let failure = try Differential.explore(seed: seed, steps: settings.steps, shapes: settings.shapes) {
                var shrinker = DiffShrinker(deadline: Date().addingTimeInterval(settings.shrinkSeconds))
                let (shrunk, disagreement) = shrinker.shrink(failure.program, failure: failure.disagreement)
                let report = Differential.report(failure, shrunk: shrunk, disagreement: disagreement, trials: shrinker.trials, shapes: settings.shapes)
                print(report)
                Issue.record(Comment(rawValue: report))
                return
            }
            seed &+= 1
        } while settings.seed == nil && Date() < deadline
        print("Differential: \(programs) programs of \(settings.steps) steps agreed (seeds \(settings.seed ?? settings.firstSeed)…\(seed)).")
    }
}
