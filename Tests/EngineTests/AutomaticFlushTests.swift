import Dispatch
@testable import Engine
import EngineTestSupport
import Foundation
import Testing

/// The automatic policy keeps the sealed tail near its bound: segments sealed while a flush runs
/// are flushed next, without waiting for another rollover.
@Suite struct AutomaticFlushTests {
    static let dir = "/auto"

    /// The sealed segments' bytes, from the statistics (the active segment excluded).
    static func sealedBytes(_ store: LogStore) -> UInt64 {
        let segments = store.statistics.segments
        return segments.dropLast().reduce(0) { $0 + $1.bytesOnDisk }
    }

    /// A flush held at its first window while commits seal several more segments past the bound,
    /// then released, with no commit after it: the segments sealed meanwhile are flushed by the
    /// next flush, which the first one starts as it ends. Before, the next flush waited for a
    /// rollover, which a store that has gone quiet never makes.
    @Test func segmentsSealedDuringAFlushAreFlushedOnceItEndsWithoutAnotherCommit() throws {
        let fs = FaultInjectingFileSystem()
        var options = CompactionTests.options()
        options.compaction = LogStore.CompactionPolicy(isAutomatic: true, flushBytes: 128 << 10, mergeFanIn: 4)
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let first = Locked(true)
        let hooks = LogStore.TestHooks(
            flushWindowBytes: 4 << 10,
            afterFlushWindow: {
                guard
                    first.withLock({ isFirst in
                        defer { isFirst = false }; return isFirst
                    })
                else { return }
                held.signal()
                release.wait()
            })
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs, testHooks: hooks)
        var expected: [[UInt8]: [UInt8]] = [:]
        var commit = 0
        func write() throws {
            let key = Array("k\(commit % 300)".utf8)
            let value = [UInt8](repeating: UInt8(commit % 251), count: 400)
            try store.write { $0.put(key, value) }
            expected[key] = value
            commit += 1
        }
        // Until the first flush is under way (it holds at its first window)...
        while held.wait(timeout: .now()) == .timedOut {
            try write()
            #expect(commit < 10_000, "no flush started")
            if commit >= 10_000 { return }
        }
        // ... then past the bound again: these segments' rollovers find the flush busy (until
        // commits are held back at the tail's bound: the next would wait for this flush).
        let sealedAtHold = Self.sealedBytes(store)
        while Self.sealedBytes(store) < sealedAtHold + 3 * UInt64(options.compaction.flushBytes), !store.tailStall.isStalled {
            try write()
        }
        #expect(Self.sealedBytes(store) > UInt64(options.compaction.flushBytes), "segments sealed while the flush was held")
        release.signal()

        // No commit from here on. The bound: flushBytes, plus the segment a flush leaves when it
        // is one byte short of it.
        let bound = UInt64(options.compaction.flushBytes + options.segmentSize)
        let deadline = Date().addingTimeInterval(60)
        while Self.sealedBytes(store) > bound && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(Self.sealedBytes(store) <= bound, "the sealed tail stayed at \(Self.sealedBytes(store)) bytes")
        #expect(try store.contents() == expected)
        try store.close()
        #expect(try LogStore.open(at: Self.dir, options: options, fileSystem: fs).contents() == expected)
    }

    /// One writer committing without pause while every flush window is slowed down: after every
    /// commit the sealed tail is within its bound (``LogStore/stallBytes``, plus the one segment
    /// a commit already past the check may seal), because commits wait for the flush once the
    /// tail reaches it. Without the wait the writer outruns the slowed flush by many segments.
    @Test func theSealedTailStaysWithinItsBoundUnderAContinuousCommitLoad() throws {
        let fs = FaultInjectingFileSystem()
        var options = CompactionTests.options()
        options.syncMode = .none
        options.compaction = LogStore.CompactionPolicy(isAutomatic: true, flushBytes: 128 << 10, mergeFanIn: 4)
        let hooks = LogStore.TestHooks(flushWindowBytes: 4 << 10, afterFlushWindow: { Thread.sleep(forTimeInterval: 0.002) })
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs, testHooks: hooks)
        let bound = store.stallBytes + UInt64(options.segmentSize)
        var expected: [[UInt8]: [UInt8]] = [:]
        var largest: UInt64 = 0
        // About 4 MiB of commits: 32 times flushBytes.
        for commit in 0..<10_000 {
            let key = Array("k\(commit % 500)".utf8)
            let value = [UInt8](repeating: UInt8(commit % 251), count: 400)
            try store.write { $0.put(key, value) }
            expected[key] = value
            largest = max(largest, Self.sealedBytes(store))
        }
        #expect(largest <= bound, "the sealed tail reached \(largest) bytes, past \(bound)")
        #expect(store.tailStall.stalls.load(ordering: .relaxed) > 0, "the writer was held back at least once")
        #expect(try store.contents() == expected)
        try store.close()
        #expect(try LogStore.open(at: Self.dir, options: options, fileSystem: fs).contents() == expected)
    }

    /// Close runs the merges due after its flush: a store whose level 0 reaches mergeFanIn with
    /// the table the flush at close writes is left with every level below mergeFanIn tables.
    @Test func closeLeavesEveryLevelWithFewerThanFanInTables() throws {
        let fs = FaultInjectingFileSystem()
        var options = CompactionTests.options()
        // No background flush: only close flushes, writing one level-0 table per session.
        options.compaction = LogStore.CompactionPolicy(isAutomatic: true, flushBytes: Int.max, mergeFanIn: 2, flushAtCloseBytes: 1)
        var expected: [[UInt8]: [UInt8]] = [:]
        for session in 0..<5 {
            let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
            try store.write { batch in
                for i in 0..<20 {
                    let key = Array("s\(session)/\(i)".utf8)
                    batch.put(key, key)
                    expected[key] = key
                }
            }
            try store.close()
            let path = Self.dir + "/" + LogFormat.manifestName
            let manifest = try Manifest(decoding: try #require(fs.contents(of: path)), path: path)
            var perLevel: [UInt32: Int] = [:]
            for table in manifest.tables { perLevel[table.level, default: 0] += 1 }
            #expect(perLevel.values.allSatisfy { $0 < options.compaction.mergeFanIn }, "session \(session): \(perLevel)")
        }
        #expect(try LogStore.open(at: Self.dir, options: options, fileSystem: fs).contents() == expected)
    }
}
