// walstore-migration-bench: WALDataStore's schema migrations on the blog model (Post,
// Attachment, Tag; two tags per post): adding an attribute with a default, renaming an entity,
// and both at once. Each migration runs in a child process (so its peak memory is its own) on a
// copy of one built store; the parent samples the store directory's size meanwhile.
//
//     swift run -c release walstore-migration-bench [--posts N]
//
// `--build PATH N` only builds a store of N posts at PATH, and `--migrate PATH SCENARIO` only
// migrates one (printing `seconds peakKiB posts closeSeconds`): to profile a migration on its own.
//
// The time is the open's, which the migration runs in. The sweep of the old generation runs
// after the open returns, in the background; the close that follows the count stops it (the
// next open goes on with it) and flushes the log's tail: its time is the close column, and
// what the sweep did not delete shows in "extra disk after".
import Engine
import Foundation
import Snapshot

#if canImport(Glibc)
import Glibc
#endif

struct BenchFailure: Error, CustomStringConvertible { var description: String }

func blog(renamed: Bool, views: Bool) throws -> Schema {
    let post = renamed ? "Article" : "Post"
    var attributes: [Schema.Attribute] = [.init("title", .string), .init("content", .string, isOptional: true), .init("date", .date)]
    if views { attributes.append(.init("views", .int, defaultValue: .int(0))) }
    return try Schema([
        .init(
            post, attributes: attributes,
            relationships: [
                .init("attachments", destination: "Attachment", .toMany, inverse: "post", deleteRule: .cascade),
                .init("tags", destination: "Tag", .toMany, inverse: "posts"),
            ],
            indexes: [["date"]], originalName: renamed ? "Post" : nil),
        .init("Attachment", attributes: [.init("imageData", .data, options: .externalStorage)], relationships: [.init("post", destination: post, inverse: "attachments")]),
        .init(
            "Tag", attributes: [.init("name", .string, options: .unique), .init("colour", .string, isOptional: true)],
            relationships: [.init("posts", destination: post, .toMany, inverse: "tags")]),
    ])
}

func configuration(_ schema: Schema, _ path: String) -> WALStoreConfiguration {
    WALStoreConfiguration(name: "Blog", schema: schema, path: path)
}

func directoryBytes(_ path: String) -> Int {
    var total = 0
    let enumerator = FileManager.default.enumerator(atPath: path)
    while let name = enumerator?.nextObject() as? String {
        if let size = try? FileManager.default.attributesOfItem(atPath: path + "/" + name)[.size] as? Int { total += size }
    }
    return total
}

func peakResidentKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ")[1]) ?? -1
    }
    return -1
}

/// Builds the store: `posts` posts in saves of 1,000, each with two of 100 tags; one attachment
/// of 256 bytes per 100 posts.
func build(_ path: String, posts: Int) throws {
    let store = try WALDataStore(configuration(try blog(renamed: false, views: false), path))
    var tags: [PersistentIdentifier] = []
    do {
        let inserted = (0..<100).map { DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Tag"), values: ["name": .string("tag\($0)"), "colour": .null, "posts": .toMany([])]) }
        let result = try store.save(DataStoreSaveChangesRequest(inserted: inserted))
        tags = inserted.map { result.remappedIdentifiers[$0.persistentIdentifier]! }
    }
    let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)
    for start in stride(from: 0, to: posts, by: 1000) {
        var inserted: [DefaultSnapshot] = []
        for i in start..<min(posts, start + 1000) {
            let post = DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: "Post"),
                values: [
                    "title": .string("Post number \(i)"), "content": .string(String(repeating: "lorem ipsum ", count: 8)),
                    "date": .date(epoch.addingTimeInterval(Double(i))), "attachments": .toMany([]),
                    "tags": .toMany([tags[i % 100], tags[(i * 7 + 1) % 100]]),
                ])
            inserted.append(post)
            if i % 100 == 0 {
                inserted.append(DefaultSnapshot(
                    persistentIdentifier: .temporary(entityName: "Attachment"),
                    values: ["imageData": .data(Data(repeating: UInt8(i % 251), count: 256)), "post": .toOne(post.persistentIdentifier)]))
            }
        }
        _ = try store.save(DataStoreSaveChangesRequest(inserted: inserted))
    }
    try store.close()
}

/// The child: opens `path` with the scenario's schema (migrating), counts, closes, and prints
/// `seconds peakKiB posts closeSeconds`.
func migrate(_ path: String, scenario: String) throws {
    let schema = try blog(renamed: scenario != "add-default", views: scenario != "rename-entity")
    let started = Date()
    let store = try WALDataStore(configuration(schema, path))
    let seconds = Date().timeIntervalSince(started)
    let entity = scenario == "add-default" ? "Post" : "Article"
    let count = try store.fetchCount(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: entity)))
    let closing = Date()
    try store.close()
    print("\(seconds) \(peakResidentKiB()) \(count) \(Date().timeIntervalSince(closing))")
}

func main() throws {
    var arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == "--migrate", arguments.count == 3 { return try migrate(arguments[1], scenario: arguments[2]) }
    if arguments.first == "--build", arguments.count == 3, let n = Int(arguments[2]) { return try build(arguments[1], posts: n) }
    var posts = 100_000
    if arguments.first == "--posts", arguments.count == 2, let n = Int(arguments[1]) { posts = n; arguments.removeAll() }
    guard arguments.isEmpty else { throw BenchFailure(description: "usage: walstore-migration-bench [--posts N]") }

    let root = NSTemporaryDirectory() + "walstore-migration-bench-\(getpid())"
    try? FileManager.default.removeItem(atPath: root)
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    let built = root + "/built"
    let buildStart = Date()
    try build(built, posts: posts)
    let storeBytes = directoryBytes(built)
    print("built \(posts) posts (2 tags each, 1 attachment per 100) in \(String(format: "%.1f", Date().timeIntervalSince(buildStart))) s: \(storeBytes / 1024) KiB on disk")
    print("| migration | time (s) | close (s) | peak RSS (VmHWM, MiB) | extra disk at peak (MiB) | × store | extra disk after (MiB) |")
    print("|---|---|---|---|---|---|---|")
    for scenario in ["add-default", "rename-entity", "both"] {
        let path = root + "/" + scenario
        try FileManager.default.copyItem(atPath: built, toPath: path)
        // The copy's own writeback is not the migration's cost: it is done before the child starts.
        sync()
        let before = directoryBytes(path)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["--migrate", path, scenario]
        let pipe = Pipe()
        child.standardOutput = pipe
        try child.run()
        var peak = before
        // Every 50 ms: each sample lists and stats the directory, and sampling every 5 ms took
        // enough of a core to slow a migration that keeps both cores busy.
        while child.isRunning {
            peak = max(peak, directoryBytes(path))
            usleep(50_000)
        }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: " ")
        guard child.terminationStatus == 0, output.count == 4, let seconds = Double(output[0]), let kib = Int(output[1]),
            let closeSeconds = Double(output[3].trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            throw BenchFailure(description: "\(scenario): the child failed (\(child.terminationStatus)): \(output)")
        }
        guard Int(output[2]) == posts else { throw BenchFailure(description: "\(scenario): \(output[2]) posts after") }
        let after = directoryBytes(path)
        let mib = { (b: Int) in String(format: "%.1f", Double(b) / 1_048_576) }
        print("| \(scenario) | \(String(format: "%.3f", seconds)) | \(String(format: "%.3f", closeSeconds)) | \(String(format: "%.0f", Double(kib) / 1024)) | \(mib(peak - before)) | \(String(format: "%.2f", Double(peak - before) / Double(before))) | \(mib(after - before)) |")
        try? FileManager.default.removeItem(atPath: path)
    }
}

do { try main() } catch {
    FileHandle.standardError.write(Data("walstore-migration-bench: \(error)\n".utf8))
    exit(1)
}
