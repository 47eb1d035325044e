import Engine
import EngineTestSupport
import Testing

/// Near a full disk: every commit that fits is written (without preallocated zeros if need be),
/// the first that does not fit fails with ENOSPC and changes nothing, and the store stays usable.
@Suite struct DiskFullTests {
    static let dir = "/full"

    static func options(preallocation: Int) -> LogStore.Options {
        var options = LogStore.Options()
        options.preallocationSize = preallocation
        options.writesSegmentHints = false  // the bytes on disk are the segment's alone
        options.compaction = .manual
        return options
    }

    static func batch(_ number: Int) -> WriteBatch {
        var batch = WriteBatch()
        for index in 0..<4 {
            batch.put(bytes("k\(number)-\(index)"), bytes(String(repeating: "value \(number) ", count: 20 + index)))
        }
        if number % 3 == 0 { batch.delete(bytes("k\(number - 1)-0")) }
        return batch
    }

    /// Bytes on the disk once the store is open and after each commit, with no preallocation:
    /// what commit `k` needs at least.
    static func bytesNeeded(commits: Int) throws -> [Int] {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: dir, options: options(preallocation: 0), fileSystem: fs)
        var used = [fs.usedBytes]
        for number in 1...commits {
            try store.commit(batch(number))
            used.append(fs.usedBytes)
        }
        return used
    }

    @Test func everyCommitThatFitsSucceedsAndTheFirstThatDoesNotChangesNothing() throws {
        let commits = 12
        let needed = try Self.bytesNeeded(commits: commits)
        for fitting in 0..<commits {
            let fs = FaultInjectingFileSystem()
            fs.setCapacity(needed[fitting])  // room for `fitting` commits, not one more
            let store = try LogStore.open(at: Self.dir, options: Self.options(preallocation: 64 << 10), fileSystem: fs)
            var model: [[UInt8]: [UInt8]] = [:]
            for number in stride(from: 1, through: fitting, by: 1) {
                try store.commit(Self.batch(number))
                model = try store.contents()
            }
            #expect(store.statistics.lastSequence == UInt64(fitting), "with room for \(fitting) commits")
            #expect(fitting == 0 || store.statistics.preallocationSuspended, "the zeros did not fit")
            let error = #expect(throws: EngineError.self, "commit \(fitting + 1) does not fit") {
                try store.commit(Self.batch(fitting + 1))
            }
            #expect(error?.errno == 28, "ENOSPC")
            #expect(try store.contents() == model, "a failed commit changes nothing")
            // The store stays usable: reads work, and a commit fits once space is freed.
            fs.setCapacity(nil)
            try store.commit(Self.batch(fitting + 1))
            let expected = try Self.contents(of: Self.batch(fitting + 1), over: model)
            #expect(try store.contents() == expected)
            try store.close()
            let reopened = try LogStore.open(at: Self.dir, options: Self.options(preallocation: 64 << 10), fileSystem: fs)
            #expect(try reopened.contents() == expected)
            #expect(!reopened.statistics.preallocationSuspended)
        }
    }

    /// `model` after `batch` is applied.
    static func contents(of batch: WriteBatch, over model: [[UInt8]: [UInt8]]) throws -> [[UInt8]: [UInt8]] {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: "/model", options: LogStore.Options(), fileSystem: fs)
        try store.write { b in for (key, value) in model { b.put(key, value) } }
        try store.commit(batch)
        return try store.contents()
    }
}
