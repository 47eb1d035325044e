/// walstore-example: the Engine API in one short run — open, commit, reopen, read, scan, compact.
///
///     walstore-example [--dir PATH]    (makes a temporary store under PATH, default /tmp, and removes it)
///
/// It measures nothing: the figures (commit rates, reads, open times, memory per key) come from the
/// benchmark harness, with repetitions and medians: `cd Benchmarks && swift run -c release walstore-bench`.
/// `--quick` is accepted and ignored (the demo always takes well under a second).
import Engine
import Foundation

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

func demo(in directory: String) throws {
    // Open creates the directory and takes its lock: one process at a time.
    let store = try LogStore.open(at: directory)
    defer { try? store.close() }

    // One atomic, durable commit: when `write` returns, all four puts are on disk.
    let first = try store.write { batch in
        batch.put(bytes("user:1"), bytes(#"{"name":"Ada","lang":"swift"}"#))
        batch.put(bytes("user:2"), bytes(#"{"name":"Grace","lang":"cobol"}"#))
        batch.put(bytes("user:3"), bytes(#"{"name":"Barbara","lang":"clu"}"#))
        batch.put(bytes("config:theme"), bytes("dark"))
    }
    print("commit \(first): user:1, user:2, user:3, config:theme")

    // A later put of a key replaces its value; a delete removes the key. Same batch, same frame.
    let second = try store.write { batch in
        batch.put(bytes("user:1"), bytes(#"{"name":"Ada","lang":"swift","admin":true}"#))
        batch.delete(bytes("user:2"))
    }
    print("commit \(second): user:1 replaced, user:2 deleted")

    // A value over `blobThreshold` (64 KiB) becomes a blob file of its own, made durable before
    // the commit that names it.
    try store.write { batch in batch.put(bytes("photo:1"), [UInt8](repeating: 0xAB, count: 200_000)) }
    try store.close()

    // Reopening recovers: it replays the log and rebuilds the in-memory index.
    let reopened = try LogStore.open(at: directory)
    defer { try? reopened.close() }
    for key in ["config:theme", "user:1", "user:2"] {
        print("\(key) = \(try reopened.value(forKey: bytes(key)).map(text) ?? "(absent)")")
    }
    print("photo:1 has \(try reopened.value(forKey: bytes("photo:1"))?.count ?? 0) bytes")

    // Scans go in key order; a range can be limited and walked backwards.
    for entry in try reopened.scan(prefix: bytes("user:")) {
        print("scan user: \(text(entry.key)) = \(text(try entry.value()))")
    }
    for entry in try reopened.scan(.prefix(bytes("user:")), limit: 1, reverse: true) {
        print("last user: \(text(entry.key))")
    }

    // Compaction rewrites the live records into packs with hint files; nothing visible changes.
    let compaction = try reopened.compact()
    let statistics = reopened.statistics
    print("compact(): \(compaction.recordsWritten) records into \(compaction.packsWritten) pack(s); "
        + "now \(statistics.keyCount) keys, \(statistics.bytesOnDisk) bytes on disk")
}

var parent = "/tmp"
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--dir":
        guard let path = arguments.next(), !path.isEmpty else {
            FileHandle.standardError.write(Data("walstore-example: --dir needs a path\n".utf8))
            exit(2)
        }
        parent = path
    case "--quick":
        break
    case "-h", "--help":
        print("usage: walstore-example [--dir PATH]")
        exit(0)
    default:
        FileHandle.standardError.write(Data("walstore-example: unknown argument '\(argument)'\nusage: walstore-example [--dir PATH]\n".utf8))
        exit(2)
    }
}

let directory = parent + "/walstore-example-" + UUID().uuidString
defer { try? FileManager.default.removeItem(atPath: directory) }
do {
    try demo(in: directory)
} catch {
    FileHandle.standardError.write(Data("walstore-example: \(error)\n".utf8))
    try? FileManager.default.removeItem(atPath: directory)
    exit(1)
}
