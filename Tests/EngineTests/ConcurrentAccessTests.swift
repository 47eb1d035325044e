import Engine
import EngineTestSupport
import Testing

/// `LogStore` is `Sendable`: threads and tasks may commit and read at once. (Group commit, and
/// power loss under concurrent committers, are tested in `GroupCommitTests`.)
@Suite struct ConcurrentAccessTests {
    @Test func concurrentWritersAndReadersSeeOnlyWholeCommits() async throws {
        let fs = FaultInjectingFileSystem()
        let store = try await LogStore.open(at: "/concurrent", options: LogStore.Options(), fileSystem: fs)
        let writers = 4
        let commitsPerWriter = 150
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for i in 0..<commitsPerWriter {
                        // Each commit writes the same value under two keys: a reader must never
                        // see them differ.
                        let value = bytes("w\(writer)-\(i)")
                        try store.write { batch in
                            batch.put(bytes("pair/\(writer)/a"), value)
                            batch.put(bytes("pair/\(writer)/b"), value)
                            batch.put(bytes("log/\(writer)/\(i)"), value)
                        }
                    }
                }
            }
            for reader in 0..<writers {
                group.addTask {
                    for _ in 0..<300 {
                        // A scan is one point in time: both keys of the pair come from one commit.
                        let pair = try store.scan(prefix: bytes("pair/\(reader)/")).collect().map { try $0.value() }
                        #expect(pair.isEmpty || (pair.count == 2 && pair[0] == pair[1]))
                        // Point reads are monotonic: b, read after a, is from the same commit or later.
                        let a = try store.value(forKey: bytes("pair/\(reader)/a")).map { String(decoding: $0, as: UTF8.self) }
                        let b = try store.value(forKey: bytes("pair/\(reader)/b")).map { String(decoding: $0, as: UTF8.self) }
                        if let a, let b {
                            #expect(Int(b.split(separator: "-")[1])! >= Int(a.split(separator: "-")[1])!)
                        }
                        _ = try (store.scan(prefix: bytes("log/\(reader)/")).collect()).count
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(store.statistics.lastSequence == UInt64(writers * commitsPerWriter))
        try await store.close()
        let reopened = try await LogStore.open(at: "/concurrent", options: LogStore.Options(), fileSystem: fs)
        let contents = try reopened.contents()
        #expect(contents.count == writers * (commitsPerWriter + 2))
        for writer in 0..<writers {
            let last = bytes("w\(writer)-\(commitsPerWriter - 1)")
            #expect(contents[bytes("pair/\(writer)/a")] == last)
            #expect(contents[bytes("pair/\(writer)/b")] == last)
        }
    }
}
