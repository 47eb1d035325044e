// walstore-history-bench: what WALDataStore's history costs. save-batch (1,000 posts with 2 of
// 100 tags each per save) and save-single (one post per durable save) on stores with history
// off and on, alternated in rounds; then fetchHistory of the newest 1,000 transactions of a
// store holding many.
//
//     swift run -c release walstore-history-bench [--posts N] [--singles N] [--transactions N] [--rounds N]
import Engine
import Foundation
import Snapshot

struct Usage: Error, CustomStringConvertible {
    var description: String
}

/// `--posts` per save-batch run (default 20,000), `--singles` durable saves per save-single run
/// (default 300), `--transactions` in the fetch store (default 100,000), `--rounds` of each
/// off/on pair (default 3).
struct Settings {
    var posts = 20_000
    var singles = 300
    var transactions = 100_000
    var rounds = 3

    init(_ arguments: [String]) throws {
        var rest = arguments.dropFirst()
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst().flatMap(Int.init), value >= 1 else { throw Usage(description: "\(flag) needs a positive number") }
            switch flag {
            case "--posts": posts = value
            case "--singles": singles = value
            case "--transactions": transactions = max(value, 1_000)
            case "--rounds": rounds = value
            default: throw Usage(description: "unknown argument \(flag); use --posts, --singles, --transactions or --rounds")
            }
        }
    }
}

let schema = try Schema([
    .init(
        "Post",
        attributes: [.init("title", .string), .init("content", .string, isOptional: true), .init("date", .date)],
        relationships: [.init("tags", destination: "Tag", .toMany, inverse: "posts")],
        indexes: [["date"]]),
    .init(
        "Tag",
        attributes: [.init("name", .string, options: .unique)],
        relationships: [.init("posts", destination: "Post", .toMany, inverse: "tags")]),
])

/// The CPU seconds the process (all its threads) has used.
func cpuSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}

func elapsed(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let d = ContinuousClock.now - start
    return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
}

func store(at path: String, history: Bool, syncMode: LogStore.SyncMode = .durable) throws -> WALDataStore {
    var configuration = WALStoreConfiguration(name: "History", schema: schema, path: path)
    configuration.history = history ? .enabled() : .disabled
    configuration.options.syncMode = syncMode
    return try WALDataStore(configuration)
}

func roll(_ n: Int) -> Int { Int.random(in: 0..<n) }

func newPost(_ n: Int, tags: [PersistentIdentifier]) -> DefaultSnapshot {
    DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Post"), values: [
        "title": .string("post \(n) \(roll(1000))"), "content": .string(String(repeating: "body text ", count: 20)),
        "date": .date(Date(timeIntervalSince1970: 1_700_000_000 + Double(n))), "tags": .toMany(tags),
    ])
}

/// Posts per second of `count` posts saved 1,000 at a time, two of 100 tags each, and the CPU
/// microseconds per post (what the machine's other load and fsync latency disturb least).
func saveBatch(_ path: String, history: Bool, count: Int) throws -> (Double, Double) {
    let s = try store(at: path, history: history)
    defer { try? s.close() }
    let tagInserts = (0..<100).map { DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Tag"), values: ["name": .string("tag\($0)")]) }
    let saved = try s.save(DataStoreSaveChangesRequest(inserted: tagInserts))
    let tags = tagInserts.map { saved.remappedIdentifiers[$0.persistentIdentifier]! }
    let cpu = cpuSeconds()
    let seconds = try elapsed {
        for start in stride(from: 0, to: count, by: 1_000) {
            let posts = (start..<min(start + 1_000, count)).map { newPost($0, tags: [tags[roll(100)], tags[roll(100)]]) }
            _ = try s.save(DataStoreSaveChangesRequest(inserted: posts, editingState: EditingState(author: "bench")))
        }
    }
    return (Double(count) / seconds, (cpuSeconds() - cpu) / Double(count) * 1e6)
}

/// Durable saves of one post per second.
func saveSingle(_ path: String, history: Bool, count: Int) throws -> Double {
    let s = try store(at: path, history: history)
    defer { try? s.close() }
    let seconds = try elapsed {
        for n in 0..<count { _ = try s.save(DataStoreSaveChangesRequest(inserted: [newPost(n, tags: [])], editingState: EditingState(author: "bench"))) }
    }
    return Double(count) / seconds
}

/// A line on standard output, written at once (not buffered until exit).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func main() throws {
    let settings = try Settings(CommandLine.arguments)
    let scratch = NSTemporaryDirectory() + "walstore-history-bench-\(getpid())"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    var run = 0
    func path() -> String {
        run += 1
        return scratch + "/\(run)"
    }

    var batch: [Bool: [Double]] = [false: [], true: []], single: [Bool: [Double]] = [false: [], true: []]
    var batchCPU: [Bool: [Double]] = [false: [], true: []]
    for round in 0..<settings.rounds {
        // Alternate which goes first, so drift on the shared machine falls on both.
        for history in round % 2 == 0 ? [false, true] : [true, false] {
            let (rate, cpu) = try saveBatch(path(), history: history, count: settings.posts)
            batch[history]!.append(rate)
            batchCPU[history]!.append(cpu)
            single[history]!.append(try saveSingle(path(), history: history, count: settings.singles))
        }
    }
    for (name, figures, unit) in [("save-batch", batch, "posts/s"), ("save-single", single, "saves/s"), ("save-batch CPU", batchCPU, "µs/post")] {
        let off = median(figures[false]!), on = median(figures[true]!)
        if unit == "µs/post" {
            say(String(format: "%@: history off %.1f %@, on %.1f %@ (history costs %+.1f%%)", name, off, unit, on, unit, (on / off - 1) * 100))
            continue
        }
        say(String(format: "%@: history off %.0f %@, on %.0f %@ (history costs %+.1f%%); runs off %@, on %@", name, off, unit, on, unit, (off / on - 1) * 100,
                     figures[false]!.map { String(format: "%.0f", $0) }.joined(separator: " "), figures[true]!.map { String(format: "%.0f", $0) }.joined(separator: " ")))
    }

    // fetchHistory of the newest 1,000 of `transactions` (filled with sync mode none: one post
    // per save).
    let fetchPath = path()
    var s = try store(at: fetchPath, history: true, syncMode: .none)
    let fillSeconds = try elapsed {
        for n in 0..<settings.transactions {
            _ = try s.save(DataStoreSaveChangesRequest(
                inserted: [newPost(n, tags: [])],
                editingState: EditingState(author: n % 2 == 0 ? "even" : "odd")))
        }
    }
    try s.close()
    say(String(format: "(filling %d single-post transactions with sync mode none took %.1f s)", settings.transactions, fillSeconds))
    s = try store(at: fetchPath, history: true)
    let last = UInt64(settings.transactions)
    var newest: [Double] = [], after: [Double] = []
    for _ in 0..<7 {
        newest.append(try elapsed {
            let got = try s.fetchHistory(HistoryDescriptor(fetchLimit: 1_000, sortOrder: .newestFirst))
            guard got.count == 1_000, got.first?.token.value == last else { throw Usage(description: "fetchHistory returned \(got.count)") }
        })
        after.append(try elapsed {
            let got = try s.fetchHistory(HistoryDescriptor(after: DefaultHistoryToken(storeIdentifier: s.identifier, value: last - 1_000)))
            guard got.count == 1_000 else { throw Usage(description: "fetchHistory after a token returned \(got.count)") }
        })
    }
    say(String(format: "fetchHistory, newest 1,000 of %d transactions (fetchLimit, newestFirst): median %.2f ms", settings.transactions, median(newest) * 1e3))
    say(String(format: "fetchHistory, the 1,000 after a token of %d transactions: median %.2f ms", settings.transactions, median(after) * 1e3))
}

try main()
