import Engine
import EngineTestSupport
import Foundation
import Testing

/// The figures `info`, `stats` and `compact` print, each checked against the store's directory
/// itself: its files listed and their sizes read in the test.
@Suite struct ToolFiguresTests {
    /// The files of `path` (and of its subdirectories) with their sizes, by relative path.
    static func files(_ path: String) -> [String: UInt64] {
        var result: [String: UInt64] = [:]
        guard let walker = FileManager.default.enumerator(atPath: path) else { return result }
        while let name = walker.nextObject() as? String {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + name)
            guard attributes?[.type] as? FileAttributeType == .typeRegular else { continue }
            result[name] = (attributes?[.size] as? NSNumber)?.uint64Value ?? 0
        }
        return result
    }

    static func blobFiles(_ path: String) -> [String: UInt64] { files(path).filter { $0.key.hasPrefix("blobs/") } }

    /// An engine store of 20 plain keys (5 of them deleted) and 5 blob keys (one deleted), each
    /// written three times: 15 blob files on disk, of which 4 are the latest versions.
    static func makeStore(at path: String) throws {
        var options = LogStore.Options()
        options.compaction = .manual
        let store = try LogStore.open(at: path, options: options)
        for round in 0..<3 {
            _ = try store.write { batch in
                for i in 0..<5 { batch.putExternal(Array("blob\(i)".utf8), [UInt8](repeating: UInt8(round), count: 1000 + 100 * i)) }
                for i in 0..<20 { batch.put(Array("key\(i)".utf8), Array("value \(round)".utf8)) }
                if round == 2 {
                    for i in 0..<5 { batch.delete(Array("key\(i)".utf8)) }
                    batch.delete(Array("blob4".utf8))
                }
            }
        }
        try store.close()
    }

    @Test func infoCountsEveryFileOfTheStoreAndEachLiveKeyOnce() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/store"
        try Self.makeStore(at: path)
        let files = Self.files(path)
        let info = try Tool.run("info", "--json", path).json()
        #expect(info["bytesOnDisk"] as? UInt64 == files.values.reduce(0, +), "every file, blob files included")
        #expect(info["keys"] as? Int == 15 + 4 && info["tailKeys"] as? Int == 15 + 4, "live keys, not deleted ones")
        #expect(info["blobs"] as? Int == 4)

        let stats = try Tool.run("stats", "--json", path).json()
        #expect(stats["blobDirectoryFiles"] as? Int == Self.blobFiles(path).count)
        #expect(stats["blobDirectoryBytes"] as? UInt64 == Self.blobFiles(path).values.reduce(0, +))
        #expect(stats["bytesOnDisk"] as? UInt64 == files.values.reduce(0, +))
    }

    @Test func compactReportsTheBytesAndBlobFilesTheDirectoryGainedAndLost() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/store"
        try Self.makeStore(at: path)
        let before = Self.files(path)
        let run = try Tool.run("compact", "--json", "--progress", path)
        #expect(run.error.contains("compact \(path): compacting 1 segment, 0 tables, 15 blob files"), "the progress line says what it compacts")
        let compact = try run.json()
        let after = Self.files(path)
        #expect(Self.blobFiles(path).count == 4)
        #expect(compact["blobsRemoved"] as? Int == 15 - 4, "every replaced or deleted blob's file")
        #expect(compact["bytesBefore"] as? UInt64 == before.values.reduce(0, +))

        let info = try Tool.run("info", "--json", path).json()
        #expect(info["blobs"] as? Int == 4 && info["blobBytes"] as? UInt64 == Self.blobFiles(path).values.reduce(0, +))
        #expect(info["bytesOnDisk"] as? UInt64 == after.values.reduce(0, +))
        #expect(info["keys"] as? Int == 19 && info["tailKeys"] as? Int == 0, "the table holds every key")

        let again = try Tool.run("compact", "--json", path).json()
        #expect(again["bytesBefore"] as? UInt64 == after.values.reduce(0, +), "nothing to do is no reason to report 0")
        #expect(again["blobsRemoved"] as? Int == 0)

        // Keys in the table and again in the tail, and a key the tail deletes: each live key once.
        var options = LogStore.Options()
        options.compaction = .manual
        let store = try LogStore.open(at: path, options: options)
        _ = try store.write { batch in
            batch.put(Array("key10".utf8), Array("newer".utf8))
            batch.put(Array("key11".utf8), Array("newer".utf8))
            batch.delete(Array("key12".utf8))
        }
        try store.close()
        let overlapping = try Tool.run("info", "--json", path).json()
        #expect(overlapping["keys"] as? Int == 18 && overlapping["tailKeys"] as? Int == 2)
        #expect(overlapping["bytesOnDisk"] as? UInt64 == Self.files(path).values.reduce(0, +))
    }
}
