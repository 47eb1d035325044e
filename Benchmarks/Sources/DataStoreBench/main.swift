// walstore-datastore-bench: WALDataStore's figures at the DataStore level, on the blog model
// (Post, Attachment, Tag): saves, fetches with and without a declared index, identifier
// resolution, open, bytes on disk and memory per post. It prints figures; the comparison with a
// Core Data-shaped SQLite store is a separate harness.
//
//     swift run -c release walstore-datastore-bench [--posts N] [--tags N] [--quick]
import Engine
import Foundation
import Snapshot

#if canImport(Glibc)
import Glibc
#endif

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

/// Command line: `--posts N` (default 100,000), `--tags N` (how many tags the posts pick their
/// two from; default 100), `--quick` (2,000 posts: CI's smoke run).
struct Arguments {
    var posts = 100_000
    var tags = 100
    var quick = false

    init(_ arguments: [String]) throws {
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick":
                quick = true
                posts = 2_000
            case "--posts":
                guard let value = rest.popFirst().flatMap(Int.init), value >= 1_000 else {
                    throw BenchFailure(description: "--posts needs a number of at least 1000")
                }
                posts = value
            case "--tags":
                guard let value = rest.popFirst().flatMap(Int.init), value >= 2 else {
                    throw BenchFailure(description: "--tags needs a number of at least 2")
                }
                tags = value
            default:
                throw BenchFailure(description: "unknown argument \(argument); use --posts N or --quick")
            }
        }
    }
}

/// The blog model, with or without the index on `date` that the indexed fetches use.
func blogSchema(indexed: Bool) throws -> Schema {
    try Schema([
        .init(
            "Post",
            attributes: [.init("title", .string), .init("content", .string, isOptional: true), .init("date", .date)],
            relationships: [
                .init("attachments", destination: "Attachment", .toMany, inverse: "post", deleteRule: .cascade),
                .init("tags", destination: "Tag", .toMany, inverse: "posts"),
            ],
            indexes: indexed ? [["date"]] : []),
        .init(
            "Attachment",
            attributes: [.init("imageData", .data, options: .externalStorage)],
            relationships: [.init("post", destination: "Post", inverse: "attachments")]),
        .init(
            "Tag",
            attributes: [.init("name", .string, options: .unique), .init("colour", .string, isOptional: true)],
            relationships: [.init("posts", destination: "Post", .toMany, inverse: "tags")]),
    ])
}

/// SplitMix64: the same posts on every run.
struct Random {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

let words = [
    "swift", "storage", "engine", "actor", "model", "query", "index", "record", "commit", "log", "sync", "cloud",
    "shared", "local", "asset", "merge", "compact", "snapshot", "schema", "fetch", "predicate", "sort", "limit",
    "offset", "tag", "post", "image", "server", "linux", "durable",
]
let baseDate = Date(timeIntervalSince1970: 1_700_000_000)

func post(_ index: Int, tags: [PersistentIdentifier], random: inout Random) -> DefaultSnapshot {
    let title = (0..<4).map { _ in words[random.below(words.count)] }.joined(separator: " ")
    let content = (0..<30).map { _ in words[random.below(words.count)] }.joined(separator: " ")
    return DefaultSnapshot(
        persistentIdentifier: .temporary(entityName: "Post"),
        values: [
            "title": .string(title), "content": .string(content),
            "date": .date(baseDate.addingTimeInterval(Double(index) * 60 + Double(random.below(600)))),
            "attachments": .toMany([]), "tags": .toMany(tags),
        ])
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func directoryBytes(_ path: String) -> UInt64 {
    guard let walker = FileManager.default.enumerator(atPath: path) else { return 0 }
    var total: UInt64 = 0
    for case let name as String in walker {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + name)
        if attributes?[.type] as? FileAttributeType == .typeRegular { total += (attributes?[.size] as? UInt64) ?? 0 }
    }
    return total
}

/// The process's resident set, from /proc (0 where there is none).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
        let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

struct Row {
    var workload: String
    var figure: String
    var detail: String
}

func open(_ path: String, indexed: Bool) throws -> WALDataStore {
    try WALDataStore(WALStoreConfiguration(name: "Blog", schema: try blogSchema(indexed: indexed), path: path))
}

/// Fills a store with `count` posts, two of `tagCount` tags each, in saves of 1,000. Returns the
/// seconds the post saves took, and the identifiers of the posts.
func fill(_ store: WALDataStore, posts count: Int, tags tagCount: Int) throws -> (Double, [PersistentIdentifier]) {
    var random = Random(state: 42)
    let tagSnapshots = (0..<tagCount).map { index in
        DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Tag"),
            values: ["name": .string("tag\(index)"), "colour": .null, "posts": .toMany([])])
    }
    let savedTags = try store.save(DataStoreSaveChangesRequest(inserted: tagSnapshots))
    let tags = tagSnapshots.map { savedTags.remappedIdentifiers[$0.persistentIdentifier]! }
    var ids: [PersistentIdentifier] = []
    ids.reserveCapacity(count)
    var index = 0
    let time = try seconds {
        while index < count {
            let batch = (index..<min(index + 1_000, count)).map { i in
                post(i, tags: [tags[random.below(tagCount)], tags[random.below(tagCount)]], random: &random)
            }
            let result = try store.save(DataStoreSaveChangesRequest(inserted: batch))
            ids += batch.map { result.remappedIdentifiers[$0.persistentIdentifier]! }
            index += batch.count
        }
    }
    return (time, ids)
}

func run() throws {
    let arguments = try Arguments(CommandLine.arguments)
    let count = arguments.posts
    let scratch = NSTemporaryDirectory() + "walstore-datastore-bench-\(getpid())"
    try? FileManager.default.removeItem(atPath: scratch)
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    var rows: [Row] = []
    func add(_ workload: String, _ figure: String, _ detail: String = "") {
        rows.append(Row(workload: workload, figure: figure, detail: detail))
        print("\(workload): \(figure) \(detail)")
    }

    // save-batch, on the indexed store (and again without the index, for the fetches below).
    let indexedPath = scratch + "/indexed"
    let plainPath = scratch + "/plain"
    var store = try open(indexedPath, indexed: true)
    let (batchSeconds, ids) = try fill(store, posts: count, tags: arguments.tags)
    add("save-batch (1,000 posts with 2 of \(arguments.tags) tags each per save, date index)", String(format: "%.0f posts/s", Double(count) / batchSeconds),
        String(format: "(%d posts in %.2f s)", count, batchSeconds))
    let plain = try open(plainPath, indexed: false)
    let (plainSeconds, _) = try fill(plain, posts: count, tags: arguments.tags)
    add("save-batch, no declared index", String(format: "%.0f posts/s", Double(count) / plainSeconds))

    // save-single: one post per durable save, in a store of its own.
    let single = try open(scratch + "/single", indexed: true)
    var random = Random(state: 7)
    let singles = arguments.quick ? 50 : 500
    let singleSeconds = try seconds {
        for index in 0..<singles {
            _ = try single.save(DataStoreSaveChangesRequest(inserted: [post(index, tags: [], random: &random)]))
        }
    }
    try single.close()
    add("save-single (one post per durable save)", String(format: "%.0f saves/s", Double(singles) / singleSeconds),
        String(format: "(%.0f µs per save)", singleSeconds / Double(singles) * 1e6))

    // fetch-all-sorted.
    var fetched = 0
    let allSeconds = try seconds {
        fetched = try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(
            entityName: "Post", sortBy: [FetchSortDescriptor("date")]))).fetchedSnapshots.count
    }
    guard fetched == count else { throw BenchFailure(description: "fetch-all returned \(fetched) of \(count)") }
    add("fetch-all-sorted (every post by date)", String(format: "%.1f ms", allSeconds * 1e3),
        String(format: "(%.2f µs per post)", allSeconds / Double(count) * 1e6))

    // Predicate fetches with limit 50: a date range (indexed and not) and a title word.
    let from = baseDate.addingTimeInterval(Double(count / 2) * 60)
    let range = FetchDescriptor(
        entityName: "Post", predicate: .attribute("date") >= from, sortBy: [FetchSortDescriptor("date")], fetchLimit: 50)
    let word = FetchDescriptor(
        entityName: "Post", predicate: .attribute("title").contains("swift"), sortBy: [FetchSortDescriptor("date")],
        fetchLimit: 50)
    for (label, target, descriptor) in [
        ("fetch date >= x, sorted by date, limit 50, date index", store, range),
        ("fetch date >= x, sorted by date, limit 50, no index", plain, range),
        ("fetch title contains \"swift\", sorted by date, limit 50", store, word),
    ] {
        let before = target.recordsRead
        var result = 0
        let repetitions = 5
        let time = try seconds {
            for _ in 0..<repetitions {
                result = try target.fetch(DataStoreFetchRequest(descriptor: descriptor)).fetchedSnapshots.count
            }
        }
        let read = (target.recordsRead - before) / repetitions
        add(label, String(format: "%.2f ms", time / Double(repetitions) * 1e3), "(\(result) returned, \(read) records read)")
    }

    // resolve: 100 random identifiers through the identifier-set predicate.
    var pick = Random(state: 9)
    let wanted = Set((0..<100).map { _ in ids[pick.below(ids.count)] })
    var resolved = 0
    let resolveSeconds = try seconds {
        resolved = try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(
            entityName: "Post", predicate: .identifier(in: wanted)))).fetchedSnapshots.count
    }
    guard resolved == wanted.count else { throw BenchFailure(description: "resolve found \(resolved) of \(wanted.count)") }
    add("resolve (100 identifiers)", String(format: "%.2f ms", resolveSeconds * 1e3))

    // open after compaction, and open plus the first predicate fetch.
    try store.close()
    try plain.close()
    let engine = try LogStore.open(at: indexedPath)
    try engine.compact()
    try engine.close()
    let bytes = directoryBytes(indexedPath)
    let rssBefore = residentBytes()
    var openSeconds = 0.0
    let firstSeconds = try seconds {
        openSeconds = try seconds { store = try open(indexedPath, indexed: true) }
        _ = try store.fetch(DataStoreFetchRequest(descriptor: range))
    }
    let rssGrowth = residentBytes() - rssBefore
    add("open (\(count) posts, after compaction)", String(format: "%.1f ms", openSeconds * 1e3))
    add("open + first fetch (date range, limit 50)", String(format: "%.1f ms", firstSeconds * 1e3))
    add("bytes on disk per post (after compaction, tags included)", String(format: "%.0f B", Double(bytes) / Double(count)))
    add("resident memory per post (growth over open)", String(format: "%.0f B", Double(rssGrowth) / Double(count)))
    try store.close()

    print("\nMarkdown:\n\n| workload | figure | detail |\n|---|---|---|")
    for row in rows { print("| \(row.workload) | \(row.figure) | \(row.detail) |") }
}

do {
    try run()
} catch {
    FileHandle.standardError.write(Data("walstore-datastore-bench: \(error)\n".utf8))
    exit(1)
}
