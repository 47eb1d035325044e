// walstore-datastore-bench: WALDataStore against a Core Data-shaped SQLite store (FULL and
// NORMAL) and the whole-file JSON store, on the blog model (Post, Attachment, Tag) and a million
// `User`s. Every contender runs in a process of its own (this executable again, `--child`), on
// the same seeded data; the parent prints the table with WALStore's ratios, and writes JSON and
// an SVG chart when asked. Benchmarks/README.md describes every workload.
//
//     swift run -c release walstore-datastore-bench [--quick] [--posts N] [--json PATH] [--svg PATH]
import BenchSupport
import Foundation
import SQLiteSupport

#if canImport(Glibc)
import Glibc
#endif

func runChild(_ part: String, _ options: HarnessOptions) async throws {
    guard let kind = options.contender, let directory = options.directory else {
        throw BenchError("--child needs --contender and --dir")
    }
    let recorder = SuiteRecorder(contender: kind)
    switch part {
    case "suite":
        let suite = BlogSuite(kind: kind, options: options, directory: directory)
        try await suite.run()
        print(try suite.recorder.resultLine())
        return
    case "open": try await OtherSuites.open(kind, options: options, directory: directory, recorder: recorder)
    case "save-million": try await OtherSuites.saveMillion(kind, options: options, directory: directory, recorder: recorder)
    case "json-scale": try await OtherSuites.jsonScale(kind, options: options, directory: directory, recorder: recorder)
    default: throw BenchError("unknown --child part \(part)")
    }
    print(try recorder.resultLine())
}

func runParent(_ options: HarnessOptions) throws {
    let start = ContinuousClock.now
    let scratch = try ScratchDirectory(under: NSTemporaryDirectory())
    scratch.removeOnInterrupt()
    defer { scratch.remove() }
    let machine = MachineInfo(directory: scratch.path)
    let log = { (text: String) in FileHandle.standardError.write(Data((text + "\n").utf8)) }
    log(machine.line)
    log("walstore-datastore-bench: \(options.posts) posts, \(options.tags) tags, \(options.users) users; JSON store capped at \(min(options.posts, options.jsonPosts)) posts\(options.quick ? " (quick)" : "")")

    var figures: [StoreFigure] = []
    var capped: [StoreFigure] = []
    for kind in options.contenders where kind != .json {
        log("\(kind.rawValue): \(kind.setup)")
        let directory = scratch.newStorePath(kind.flag)
        try ScratchDirectory.create(directory)
        figures += try ChildProcess.run("suite", kind, directory: directory, options: options)
        figures += try ChildProcess.run("open", kind, directory: directory, options: options)
        figures += try ChildProcess.run("save-million", kind, directory: directory, options: options)
        ScratchDirectory.delete(directory)
    }
    for kind in options.contenders where kind == .wal || kind == .json {
        log("\(kind.rawValue), at the JSON store's scale: \(kind.setup)")
        let directory = scratch.newStorePath(kind.flag + "-capped")
        try ScratchDirectory.create(directory)
        capped += try ChildProcess.run("json-scale", kind, directory: directory, options: options)
        ScratchDirectory.delete(directory)
    }
    var setups: [String: String] = [:]
    for kind in options.contenders { setups[kind.rawValue] = kind.setup }
    let results = BenchResults(
        machine: machine, sqliteVersion: SQLiteDatabase.version, posts: options.posts, tags: options.tags, users: options.users,
        jsonPosts: min(options.posts, options.jsonPosts), quick: options.quick, setups: setups, figures: figures, capped: capped,
        seconds: Stopwatch.seconds(ContinuousClock.now - start))

    print("\(machine.line); SQLite \(results.sqliteVersion)")
    print("\(options.posts) posts (\(options.tags) tags), save-million of \(options.users) users; the JSON store at \(results.jsonPosts) posts (it rewrites its whole file per save); \(String(format: "%.0f", results.seconds)) s")
    print("Ratios: WALStore's figure over the other's for rates, the other's over WALStore's for times, bytes and memory; above 1 WALStore is better.\n")
    print(MarkdownReport.tables(results))
    if let path = options.jsonPath {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(results).write(to: URL(fileURLWithPath: path))
        log("wrote \(path)")
    }
    if let path = options.svgPath {
        try Data(RatioChart.svg(results, against: .sqliteFull).utf8).write(to: URL(fileURLWithPath: path))
        log("wrote \(path)")
    }
}

do {
    let options = try HarnessOptions(CommandLine.arguments)
    if let part = options.child {
        try await runChild(part, options)
    } else {
        try runParent(options)
    }
} catch {
    FileHandle.standardError.write(Data("walstore-datastore-bench: \(error)\n".utf8))
    exit(1)
}
