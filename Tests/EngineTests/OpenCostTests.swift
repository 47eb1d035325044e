@testable import Engine
import EngineTestSupport
import Testing

/// What open, a first read and a blob's write and read cost, and that none of it grows with the
/// store: close flushes a non-trivial tail into a table (so the next open replays and holds no
/// index of it), a table opens with its footer alone (filter and index read at first use), a
/// blob is read into one buffer, and a blob commit syncs no more than the blob procedure needs.
@Suite struct OpenCostTests {
    static let dir = "/cost"

    static func options(flushAtClose: Int = 8 << 10) -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.preallocationSize = 0
        options.blobThreshold = 4000
        // One table per flush (runs of up to 1 GiB of segments), never a background flush.
        options.compaction = LogStore.CompactionPolicy(flushBytes: 1 << 30, flushAtCloseBytes: flushAtClose)
        // Segment hints are written by a background job whose file operations would interleave
        // with the counted ones.
        options.writesSegmentHints = false
        return options
    }

    /// A closed store of `count` keys (fixed-width, 200-byte values), some overwritten and some
    /// deleted; returns its contents.
    @discardableResult
    static func filled(_ fs: FaultInjectingFileSystem, count: Int, options: LogStore.Options = options()) throws -> [[UInt8]: [UInt8]] {
        let store = try LogStore.open(at: dir, options: options, fileSystem: fs)
        var model: [[UInt8]: [UInt8]] = [:]
        var random = SeededGenerator(seed: UInt64(count))
        var next = 0
        while next < count {
            try store.write { batch in
                for _ in 0..<min(50, count - next) {
                    let key = bytes("key/\(100_000 + next)")
                    let value = random.bytes(200)
                    batch.put(key, value)
                    model[key] = value
                    if next % 7 == 3 {
                        let earlier = bytes("key/\(100_000 + next / 2)")
                        batch.delete(earlier)
                        model[earlier] = nil
                    }
                    next += 1
                }
            }
        }
        try store.close()
        return model
    }

    /// After a close that flushed the tail, open reads the manifest, the newest segment's header
    /// and each table's footer: the same reads and bytes for a store four times larger. The first
    /// point read then reads the table's top-level index, its first and last data blocks and the
    /// index partitions naming them (the check of the manifest's key range, once per table), and
    /// the key's filter partition; the key's block and index partition are among those (it is
    /// the last key) or one more of each.
    @Test func openReadsTheSameFewBytesWhateverTheStoreHolds() throws {
        var figures: [(reads: Int, bytes: Int)] = []
        for count in [1_000, 4_000] {
            let fs = FaultInjectingFileSystem()
            let model = try Self.filled(fs, count: count)
            let (reads, read) = (fs.readCount, fs.bytesRead)
            let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            figures.append((fs.readCount - reads, fs.bytesRead - read))
            let statistics = store.statistics
            #expect(statistics.tailKeyCount == 0, "close flushed the tail")
            #expect(statistics.tables.count == 1)
            #expect(statistics.recovery.replayedBytes == 0)
            let tables = store.state.withLock { $0.tables }
            #expect(tables.allSatisfy { !$0.reader.isMetadataLoaded })
            let before = fs.readCount
            let key = bytes("key/\(100_000 + count - 1)")
            #expect(try store.value(forKey: key) == model[key])
            let partitions = try #require(try tables.first?.reader.partitionCount)
            // One partition: its index and the two edge blocks (one, when the table has one block).
            #expect(fs.readCount - before == (partitions == 1 ? 5 : 6), "top-level index, edge blocks and their index partitions, filter")
            #expect(tables.allSatisfy { $0.reader.isMetadataLoaded })
            #expect(try store.contents() == model)
            try store.close()
        }
        #expect(figures[0].reads == figures[1].reads)
        #expect(figures[0].bytes == figures[1].bytes)
        #expect(figures[1].bytes < 1024, "\(figures)")
    }

    /// A tail below ``LogStore/CompactionPolicy/flushAtCloseBytes``, or any tail of a store
    /// with a manual policy, is left in the log at close: the next open loads its index.
    @Test(arguments: [false, true])
    func closeLeavesASmallTailOrAManualStoresTailInTheLog(manual: Bool) throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.options(flushAtClose: manual ? 0 : 1 << 30)
        if manual { options.compaction.isAutomatic = false }
        let model = try Self.filled(fs, count: 500, options: options)
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        #expect(store.statistics.tables.isEmpty)
        #expect(store.statistics.tailKeyCount == model.count + 500 / 7)
        #expect(try store.contents() == model)
        try store.close()
    }

    /// Each close that flushes adds a level-0 table; an open that finds a level holding
    /// ``LogStore/CompactionPolicy/mergeFanIn`` tables starts their merge in the background.
    @Test func openMergesTheTablesClosesLeftWhenALevelIsFull() throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.options()
        options.compaction.mergeFanIn = 2
        var model = try Self.filled(fs, count: 300, options: options)
        var store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        #expect(store.statistics.tables.count == 1)
        var random = SeededGenerator(seed: 9)
        try store.write { batch in
            for i in 0..<300 {
                let value = random.bytes(100)
                batch.put(bytes("more/\(i)"), value)
                model[bytes("more/\(i)")] = value
            }
        }
        try store.close()
        store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        // Open marked the job scheduled before returning; wait for it to end.
        while store.catalog.withLock({ $0.scheduled }) { Syscall.pause(microseconds: 1000) }
        #expect(store.statistics.tables.count == 1)
        #expect(store.statistics.tables.first?.level == 1)
        #expect(try store.contents() == model)
        try store.close()
    }

    /// Power loss at every I/O operation of a close that flushes the tail: the reopened store
    /// has every commit, no temporary file is left, and every table in the directory is listed.
    @Test func powerLossAtEveryOperationOfClosesFlushLosesNothing() throws {
        let base = FaultInjectingFileSystem()
        let expected = try Self.filled(base, count: 600, options: Self.options(flushAtClose: 1 << 30))
        let probe = base.clone()
        let counted = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: probe)
        let start = probe.operationCount
        try counted.close()
        let total = probe.operationCount - start
        #expect(probe.names(in: Self.dir).contains { $0.hasSuffix(".sst") }, "the close flushed")
        #expect(total > 8)
        for crashAt in 1...total {
            let fs = base.clone()
            let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            fs.crash(atOperation: crashAt)
            try? store.close()
            fs.powerLoss()
            let label = "power loss at operation \(crashAt) of \(total)"
            let reopened = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            #expect(try reopened.contents() == expected, "\(label)")
            let names = fs.names(in: Self.dir)
            #expect(!names.contains { $0.hasSuffix("-tmp") }, "\(label): \(names)")
            #expect(names.filter { $0.hasSuffix(".sst") }.count == reopened.statistics.tables.count, "\(label): \(names)")
            try reopened.write { $0.put(bytes("after"), bytes("1")) }
            try reopened.close()
        }
    }

    /// A table read that fails (the disk returns an error) while the filter and index are being
    /// loaded is an error naming the table, not a trap; the next read loads them and answers.
    @Test func aFailedLazyLoadOfATableIsAnErrorAndTheNextReadLoadsIt() throws {
        let fs = FaultInjectingFileSystem()
        let model = try Self.filled(fs, count: 800)
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        let table = try #require(store.state.withLock { $0.tables.first })
        fs.failReads(ofPathsEndingWith: ".sst")
        let key = bytes("key/100799")
        let error = #expect(throws: EngineError.self) { try store.value(forKey: key) }
        #expect(error?.code == .io)
        #expect(error?.path == Self.dir + "/" + TableFormat.name(table.number))
        #expect(!table.reader.isMetadataLoaded)
        fs.failReads(ofPathsEndingWith: nil)
        #expect(try store.value(forKey: key) == model[key])
        #expect(try store.contents() == model)
        try store.close()
    }

    /// A durable commit holding one blob syncs the blob file once, the blob directory once and
    /// the log once (FORMAT.md, "Writing a blob", then "Writing").
    @Test func aDurableBlobCommitSyncsTheBlobItsDirectoryAndTheLogOnceEach() throws {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        var random = SeededGenerator(seed: 5)
        let value = random.bytes(3 << 20)
        let (syncs, directorySyncs) = (fs.count(of: .sync), fs.count(of: .syncDirectory))
        try store.write { $0.put(bytes("asset"), value) }
        #expect(fs.count(of: .sync) - syncs == 2, "the blob file and the segment")
        #expect(fs.count(of: .syncDirectory) - directorySyncs == 1, "blobs/")
        #expect(try store.valueBuffer(forKey: bytes("asset")).map { Array($0.bytes) } == value)
        try store.close()
    }

    /// ``LogStore/valueBuffer(forKey:)`` holds exactly the value, whatever its kind (inline,
    /// raw blob, compressed blob, empty), nil for an absent key; a damaged blob chunk is
    /// corruption naming the blob file, never bytes.
    @Test func aValueBufferHoldsTheValueOfEveryKindAndNeverDamagedBytes() throws {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        var random = SeededGenerator(seed: 6)
        let values: [String: [UInt8]] = [
            "inline": random.bytes(300), "empty": [], "raw": random.bytes((2 << 20) + 77),
            "compressed": [UInt8]((0..<((1 << 20) + 5000)).map { UInt8(truncatingIfNeeded: $0 % 251 / 7) }),
        ]
        try store.write { batch in for (key, value) in values { batch.put(bytes(key), value) } }
        for (key, value) in values {
            let buffer = try #require(try store.valueBuffer(forKey: bytes(key)), "\(key)")
            #expect(Array(buffer.bytes) == value, "\(key)")
            #expect(buffer.bytes.baseAddress != nil, "\(key)")
        }
        #expect(try store.valueBuffer(forKey: bytes("absent")) == nil)
        let blobs = fs.names(in: Self.dir + "/blobs").map { Self.dir + "/blobs/" + $0 }
        #expect(blobs.count == 2)
        for blob in blobs { fs.flipBit(in: blob, atByte: 44 + 1000) }
        for key in ["raw", "compressed"] {
            let error = #expect(throws: EngineError.self, "\(key)") { try store.valueBuffer(forKey: bytes(key)) }
            #expect(error?.code == .corruption, "\(key)")
            #expect(blobs.contains(error?.path ?? ""), "\(key)")
        }
        try store.close()
    }
}
