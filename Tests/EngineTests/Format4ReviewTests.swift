@testable import Engine
import EngineTestSupport
import Testing

/// Format 4's tail and tables at their edges: flushes of a tail loaded from segment hints, the
/// log end a clean close records, and what open refuses rather than lose durable commits.
@Suite struct Format4ReviewTests {
    static let dir = "/review"

    static func options(hints: Bool) -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.preallocationSize = 4 << 10
        options.blobThreshold = 2000
        options.compaction = LogStore.CompactionPolicy(isAutomatic: false, flushBytes: 0, mergeFanIn: 2)
        options.writesSegmentHints = hints
        return options
    }

    /// Commits puts, overwrites, deletes and blobs over several segments; returns the contents.
    static func fill(_ store: LogStore, rounds: Range<Int>, into model: inout [[UInt8]: [UInt8]]) throws {
        var random = SeededGenerator(seed: UInt64(rounds.lowerBound))
        for r in rounds {
            try store.write { batch in
                for i in 0..<20 {
                    let key = bytes("k\((i * 7 + r) % 50)")
                    if (i + r) % 6 == 0 {
                        batch.delete(key)
                        model[key] = nil
                    } else {
                        let value = random.bytes(i % 9 == 0 ? 2500 : 600)
                        batch.put(key, value)
                        model[key] = value
                    }
                }
            }
        }
    }

    /// A tail whose index was loaded from segment hints (sealed segments and the newest's clean
    /// close) is flushed whole: every entry leaves the index, and the store reads the same.
    @Test func aTailLoadedFromSegmentHintsFlushesEveryEntry() throws {
        let fs = FaultInjectingFileSystem()
        var model: [[UInt8]: [UInt8]] = [:]
        let store = try LogStore.open(at: Self.dir, options: Self.options(hints: true), fileSystem: fs)
        try Self.fill(store, rounds: 0..<12, into: &model)
        try store.flushForTesting()
        try Self.fill(store, rounds: 12..<30, into: &model)
        try store.close()

        let reopened = try LogStore.open(at: Self.dir, options: Self.options(hints: true), fileSystem: fs)
        #expect(reopened.statistics.recovery.segmentHintsLoaded > 1)
        #expect(reopened.statistics.recovery.segmentsReplayed == 0)
        try Self.fill(reopened, rounds: 30..<33, into: &model)
        try reopened.compact()
        #expect(reopened.statistics.tailKeyCount == 0)
        #expect(try reopened.contents() == model)
        for (key, value) in model { #expect(try reopened.value(forKey: key) == value) }
        try reopened.close()
        let again = try LogStore.open(at: Self.dir, options: Self.options(hints: true), fileSystem: fs)
        #expect(try again.contents() == model)
        try again.close()
    }

    /// With segment hints off a clean close records the log's end in the manifest. The segment it
    /// names missing altogether (not just cut short) loses those durable commits too: open
    /// refuses it as corruption and removes nothing.
    @Test(arguments: [1, 3])
    func aMissingSegmentThatACleanCloseRecordedFailsOpen(segments: Int) throws {
        let fs = FaultInjectingFileSystem()
        var model: [[UInt8]: [UInt8]] = [:]
        let store = try LogStore.open(at: Self.dir, options: Self.options(hints: false), fileSystem: fs)
        var rounds = 0
        repeat {
            try Self.fill(store, rounds: rounds..<(rounds + 1), into: &model)
            rounds += 1
        } while store.statistics.segments.count < segments
        try store.close()
        #expect(fs.names(in: Self.dir).contains(LogFormat.manifestName))
        let newest = try #require(fs.names(in: Self.dir).compactMap(SegmentFile.number(fromName:)).max())
        try fs.removeFile(Self.dir + "/" + SegmentFile.name(newest))
        let before = fs.names(in: Self.dir)
        #expect {
            try LogStore.open(at: Self.dir, options: Self.options(hints: false), fileSystem: fs)
        } throws: { error in
            (error as? EngineError)?.code == .corruption && (error as? EngineError)?.path?.hasSuffix(SegmentFile.name(newest)) == true
        }
        #expect(fs.names(in: Self.dir) == before)
    }

    /// `bytesOnDisk` counts every segment, segment hint and table file and the manifest (less the
    /// active segment's preallocated zeros): the manifest too when it holds only the log end a
    /// clean close recorded.
    @Test(arguments: [false, true])
    func bytesOnDiskCountsEveryFileOfTheStore(compacted: Bool) throws {
        let fs = FaultInjectingFileSystem()
        var model: [[UInt8]: [UInt8]] = [:]
        let store = try LogStore.open(at: Self.dir, options: Self.options(hints: false), fileSystem: fs)
        try Self.fill(store, rounds: 0..<8, into: &model)
        if compacted { try store.compact() }
        try store.close()
        let reopened = try LogStore.open(at: Self.dir, options: Self.options(hints: false), fileSystem: fs)
        let statistics = reopened.statistics
        let files = fs.names(in: Self.dir).filter { $0 != LogFormat.lockFileName && $0 != LogFormat.blobDirectoryName }
        #expect(files.contains(LogFormat.manifestName))
        let total = files.reduce(0) { $0 + UInt64(fs.contents(of: Self.dir + "/" + $1)?.count ?? 0) }
        #expect(statistics.bytesOnDisk + statistics.preallocatedBytes == total, "\(files)")
        try reopened.close()
    }
}
