import Testing

@testable import Engine
import EngineTestSupport

/// A flush streams each run's table from the tail's index in key order, a bounded window at a
/// time: the table is the one gathering the run's records and sorting them wrote, byte for byte;
/// what it buffers stays under its window and one log block, however long the run; commits made
/// during it keep their newer versions; and power loss at any of its operations loses nothing.
@Suite struct StreamedFlushTests {
    static let dir = "/streamed"

    static func options(flushBytes: Int = 150 << 10) -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.blockSize = 4 << 10
        options.preallocationSize = 8 << 10
        options.blobThreshold = 1000
        options.compaction = LogStore.CompactionPolicy(isAutomatic: false, flushBytes: flushBytes, mergeFanIn: 64)
        // Segment hints are written by a background job whose file operations would interleave
        // with the counted ones.
        options.writesSegmentHints = false
        return options
    }

    /// A flush as it was before it streamed: each sealed segment of `run` read front to back, the
    /// records the index still names as their key's version gathered in log order, sorted by key
    /// (the first of equal keys kept: a key deleted twice in one commit), tombstones dropped
    /// unless `keepingTombstones`.
    static func gatheredAndSorted(
        _ store: LogStore, run: [(number: UInt64, file: any StoreFile)], keepingTombstones: Bool
    ) throws -> [TableEntry] {
        var gathered: [TableEntry] = []
        for (number, file) in run {
            var reader = try LogReader(file: file, segmentNumber: number, isNewest: false)
            _ = try reader.readHeader()
            while let frame = try reader.nextFrame() {
                if frame.isClose { continue }
                _ = try CommitDecoding.records(inPayload: frame.payload, frameOffset: frame.offset, path: file.path) {
                    raw, records throws(EngineError) in
                    let blockOffset = frame.offset + UInt64(records.first!.blockOffset)
                    store.state.withLock { s in
                        for record in records {
                            guard let location = s.index[record.key], location.segment == number,
                                location.sequence == frame.sequence
                            else { continue }
                            if record.valueLength == nil {
                                guard location.isTombstone else { continue }
                                gathered.append(TableEntry(key: record.key, sequence: location.sequence, value: .tombstone))
                            } else if location.blockOffset == blockOffset, location.valueOffset == UInt32(record.valueOffset) {
                                let value: TableEntry.Value =
                                    if let blob = record.blob {
                                        .blob(blob)
                                    } else {
                                        .value(Array(raw[record.valueOffset..<record.valueOffset + record.valueLength!]))
                                    }
                                gathered.append(TableEntry(key: record.key, sequence: location.sequence, value: value))
                            }
                        }
                    }
                }
            }
        }
        let order = gathered.indices.sorted { a, b in
            let order = compareBytes(gathered[a].key, gathered[b].key)
            return order != 0 ? order < 0 : a < b
        }
        var result: [TableEntry] = []
        for index in order where result.last?.key != gathered[index].key {
            if case .tombstone = gathered[index].value, !keepingTombstones { continue }
            result.append(gathered[index])
        }
        return result
    }

    /// The runs a flush of the sealed segments makes: consecutive segments of about
    /// `flushBytes` (at least one).
    static func runs(_ store: LogStore) throws -> [[(number: UInt64, file: any StoreFile)]] {
        let active = store.writer.withLock { $0.activeNumber }
        let sealed = store.state.withLock { s in s.files.filter { $0.key < active }.sorted { $0.key < $1.key } }
        let groupBytes = UInt64(max(store.options.compaction.flushBytes, store.options.segmentSize))
        var runs: [[(number: UInt64, file: any StoreFile)]] = []
        var bytes: UInt64 = 0
        for (number, file) in sealed {
            let size = try file.size()
            if runs.isEmpty || bytes + size > groupBytes {
                runs.append([])
                bytes = 0
            }
            runs[runs.count - 1].append((number, file))
            bytes += size
        }
        return runs
    }

    /// Random commits over a small key space, in no key order: inline values and blobs,
    /// overwrites, deletes of present and absent keys, a key put or deleted twice in one commit.
    static func commit(_ store: LogStore, _ model: inout [[UInt8]: [UInt8]], _ random: inout SeededGenerator, count: Int) throws {
        for _ in 0..<count {
            var batch = WriteBatch()
            for _ in 0..<Int.random(in: 1...20, using: &random) {
                let key = Array("key/\(Int.random(in: 0..<400, using: &random) * 7919 % 400)".utf8)
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<2:
                    batch.delete(key)
                    model[key] = nil
                case 2:
                    let value = random.bytes(Int.random(in: 1001...3000, using: &random))
                    batch.put(key, value)
                    model[key] = value
                case 3:
                    let value = random.bytes(Int.random(in: 0...50, using: &random))
                    batch.putExternal(key, value)
                    model[key] = value
                default:
                    let value = random.bytes(Int.random(in: 0...300, using: &random))
                    batch.put(key, value)
                    model[key] = value
                }
            }
            try store.commit(batch)
        }
    }

    /// The index's side of a flush: walked in windows, it hands out every entry of the chosen
    /// segments once, in key order, whatever the window; dropping what lies in those segments
    /// leaves the index as dropping the same entries by key and location does.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func theIndexWalkTakesEachEntryOfTheRunOnceAndDropsWhatItFlushed(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var index = KeyDirectory()
        index.finishLoading()
        for step in 0..<4_000 {
            let segment = UInt64(1 + step / 800)
            index.noteSegment(segment)
            let key = BatchedIndexTests.key(&random, space: 2_000)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<2:
                index.delete(key, tombstoneIn: segment, recordSize: 9, sequence: UInt64(step))
            case 2:
                index.put(key, at: KeyDirectoryModelTests.location(&random, file: segment, blob: true), blob: KeyDirectoryModelTests.blob(&random))
            default:
                index.put(key, at: KeyDirectoryModelTests.location(&random, file: segment, blob: false))
            }
        }
        let run: ClosedRange<UInt64> = 2...3
        let all = index.entries(in: .all, after: nil, reverse: false, limit: .max)
        for tombstones in [true, false] {
            let expected = all.filter { run.contains($0.location.segment) && (tombstones || !$0.location.isTombstone) }
            for budget in [1, 500, 20_000] {
                var taken: [IndexEntry] = []
                var cursor: [UInt8]? = nil
                var atEnd = false
                var held = 0
                while !atEnd {
                    let found = index.flushEntries(
                        after: cursor, in: run, tombstones: tombstones, holding: held, byteBudget: budget, scanLimit: 97)
                    held += found.entries.reduce(0) { $0 + $1.bufferedBytes }
                    #expect(found.entries.count <= 97)
                    if found.full { held = 0 }
                    taken += found.entries.map { IndexEntry(key: $0.key, location: $0.location, blob: $0.blob) }
                    cursor = found.last
                    atEnd = found.atEnd
                }
                #expect(taken == expected, "budget \(budget), tombstones \(tombstones)")
            }
        }
        var byKey = index
        var bySegment = index
        let flushed = all.filter { (1...3).contains($0.location.segment) }
        let dropped = KeyDirectoryModelTests.withBytes(of: flushed.map(\.key)) { keys in
            byKey.dropFlushed(ascending: Array(zip(keys, flushed.map(\.location))))
        }
        var cursor: [UInt8]? = nil
        var droppedBySegment = 0
        while true {
            let step = bySegment.dropFlushed(in: 1...3, after: cursor, scanLimit: 50)
            droppedBySegment += step.dropped
            if step.atEnd { break }
            cursor = step.last
        }
        #expect(dropped == flushed.count && droppedBySegment == dropped)
        BatchedIndexTests.expectSame(bySegment, byKey, "after the drop")
        #expect(bySegment.count == all.count - flushed.count)
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func aStreamedFlushWritesTheTablesGatheringAndSortingWroteByteForByte(seed: UInt64) throws {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(
            at: Self.dir, options: Self.options(), fileSystem: fs, testHooks: LogStore.TestHooks(flushWindowBytes: 4 << 10))
        var random = SeededGenerator(seed: seed)
        var model: [[UInt8]: [UInt8]] = [:]
        if seed % 2 == 0 {
            // An older table: the flush keeps its tombstones.
            try Self.commit(store, &model, &random, count: 40)
            try store.flushForTesting()
        }
        // Keys deleted in the first run and never touched again (one twice in its commit), and
        // absent keys deleted: tombstones the first run writes only over an older table.
        try store.write { batch in
            for i in 0..<20 {
                batch.put(bytes("gone/\(i)"), bytes("briefly"))
                batch.delete(bytes("gone/\(i)"))
                batch.delete(bytes("never/\(i)"))
            }
            batch.delete(bytes("gone/3"))
        }
        for i in 0..<20 { model[bytes("gone/\(i)")] = nil }
        try Self.commit(store, &model, &random, count: 300)
        let runs = try Self.runs(store)
        #expect(runs.count >= 2, "several runs, \(runs.map(\.count)) segments")
        var olderTablesExist = !store.state.withLock { $0.tables.isEmpty }
        var expected: [[TableEntry]] = []
        for run in runs {
            let entries = try Self.gatheredAndSorted(store, run: run, keepingTombstones: olderTablesExist)
            if !entries.isEmpty {
                expected.append(entries)
                olderTablesExist = true
            }
        }
        let before = Set(store.state.withLock { $0.tables.map(\.number) })
        try store.flushForTesting(sealingActive: false)
        let written = store.state.withLock { $0.tables }.filter { !before.contains($0.number) }.sorted { $0.number < $1.number }
        #expect(written.count == expected.count)
        _ = try fs.createDirectory("/reference")
        for (table, entries) in zip(written, expected) {
            #expect(try FlushOrderTests.entries(of: table) == entries, "table \(table.number)")
            var writer = try TableWriter(
                number: table.number, level: 0, directory: "/reference", options: store.options, fileSystem: fs)
            for entry in entries { try writer.add(entry) }
            _ = try writer.finish()
            let name = TableFormat.name(table.number)
            let streamed = try #require(fs.contents(of: Self.dir + "/" + name))
            let reference = try #require(fs.contents(of: "/reference/" + name + LogFormat.temporarySuffix))
            let identical = streamed == reference
            #expect(identical, "table \(table.number): \(streamed.count) bytes streamed, \(reference.count) gathered")
        }
        #expect(try store.contents() == model)
        try store.close()
        let reopened = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(try reopened.contents() == model)
        try reopened.close()
    }

    /// A run of about 1 MiB flushed through a 16 KiB window: the flush never holds more than its
    /// window and one log block (stored and inflated), and writes every entry.
    @Test func aFlushOfARunManyWindowsLongHoldsAtMostItsWindowAndOneLogBlock() throws {
        let fs = FaultInjectingFileSystem()
        let window = 16 << 10
        var options = Self.options(flushBytes: 4 << 20)
        options.segmentSize = 4 << 20
        let store = try LogStore.open(
            at: Self.dir, options: options, fileSystem: fs, testHooks: LogStore.TestHooks(flushWindowBytes: window))
        var random = SeededGenerator(seed: 7)
        var model: [[UInt8]: [UInt8]] = [:]
        // Keys in an order unrelated to the log's: every window reads blocks all over the run.
        for round in 0..<100 {
            var batch = WriteBatch()
            for i in 0..<100 {
                let key = Array("object/\((round * 100 + i) * 7919 % 10_000)".utf8)
                let value = random.bytes(100)
                batch.put(key, value)
                model[key] = value
            }
            try store.commit(batch)
        }
        let runBytes = model.reduce(0) { $0 + $1.key.count + $1.value.count }
        #expect(runBytes > 60 * window, "the run is many windows long")
        let written = try store.flushForTesting()
        #expect(written == model.count)
        #expect(store.state.withLock { $0.index.count } == 0)
        // One log block: at most `blockSize` of raw records plus the one that crosses it,
        // stored (never more than raw: a block deflate does not shrink is stored raw) and
        // inflated.
        let largestRecord = 16 + 20 + 100
        let block = LogFormat.blockHeaderSize + options.blockSize + largestRecord
        let peak = store.flushPeakBufferedBytes
        #expect(peak > window / 2, "the flush filled its windows (\(peak) bytes)")
        #expect(peak <= window + 2 * block, "the flush held \(peak) bytes at once")
        #expect(try store.contents() == model)
        try store.close()
    }

    /// Commits made while a flush runs, between two of its windows: an overwrite of a key it has
    /// written, an overwrite and a delete of keys it has not reached, and a new key. Each keeps its
    /// newer version in the tail; the table holds what the flush found; nothing is lost on reopen
    /// or by the next flush.
    @Test func commitsDuringAFlushKeepTheirNewerVersionsInTheTail() throws {
        let fs = FaultInjectingFileSystem()
        let holder = Locked<LogStore?>(nil)
        let committed = Locked(false)
        let hooks = LogStore.TestHooks(
            flushWindowBytes: 2 << 10,
            afterFlushWindow: {
                guard
                    committed.withLock({ done in
                        defer { done = true }; return !done
                    })
                else { return }
                let store = holder.withLock { $0 }!
                try! store.write { batch in
                    batch.put(bytes("a/first"), bytes("newer first"))
                    batch.put(bytes("z/last"), bytes("newer last"))
                    batch.delete(bytes("z/deleted"))
                    batch.put(bytes("m/new"), bytes("new"))
                }
            })
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs, testHooks: hooks)
        holder.withLock { $0 = store }
        var model: [[UInt8]: [UInt8]] = [:]
        try store.write { batch in
            for (key, value) in [("a/first", "old first"), ("z/last", "old last"), ("z/deleted", "old deleted")] {
                batch.put(bytes(key), bytes(value))
            }
        }
        for i in 0..<200 {
            let key = bytes("m/\(i)")
            let value = [UInt8](repeating: UInt8(i % 256), count: 100)
            try store.write { $0.put(key, value) }
            model[key] = value
        }
        let firstSequence: UInt64 = 1
        try store.flushForTesting()
        #expect(committed.withLock { $0 }, "the commit ran in the middle of the flush")
        model[bytes("a/first")] = bytes("newer first")
        model[bytes("z/last")] = bytes("newer last")
        model[bytes("m/new")] = bytes("new")
        #expect(try store.contents() == model)
        // The tail holds exactly the commit's four keys; the table holds the old first key and
        // none of the keys the commit reached first.
        #expect(store.state.withLock { $0.index.count } == 4)
        let table = try #require(store.state.withLock { $0.tables.first })
        let entries = try FlushOrderTests.entries(of: table)
        let first = try #require(entries.first { $0.key == bytes("a/first") })
        #expect(first.sequence == firstSequence && first.value == .value(bytes("old first")))
        #expect(!entries.contains { $0.key == bytes("z/last") || $0.key == bytes("z/deleted") || $0.key == bytes("m/new") })
        try store.close()
        let reopened = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(try reopened.contents() == model)
        try reopened.compact()
        #expect(try reopened.contents() == model)
        try reopened.close()
    }

    /// Power loss at every I/O operation of a flush many windows long, over two runs and an older
    /// table: the reopened store holds exactly what it held, and no leftover stays.
    @Test func powerLossAtEveryOperationOfAStreamedFlushLosesNothing() throws {
        let base = FaultInjectingFileSystem()
        let hooks = LogStore.TestHooks(flushWindowBytes: 8 << 10)
        var model: [[UInt8]: [UInt8]] = [:]
        do {
            let store = try LogStore.open(at: Self.dir, options: Self.options(flushBytes: 64 << 10), fileSystem: base, testHooks: hooks)
            var random = SeededGenerator(seed: 21)
            try Self.commit(store, &model, &random, count: 30)
            try store.flushForTesting()
            try Self.commit(store, &model, &random, count: 120)
            try store.close()
        }
        func run(_ fs: FaultInjectingFileSystem) throws -> LogStore {
            let store = try LogStore.open(
                at: Self.dir, options: Self.options(flushBytes: 64 << 10), fileSystem: fs, testHooks: hooks)
            store.collectBlobsFoundAtOpen()
            return store
        }
        let probe = base.clone()
        let probeStore = try run(probe)
        let start = probe.operationCount
        try probeStore.flushForTesting()
        let total = probe.operationCount - start
        #expect(probeStore.statistics.tables.count >= 3, "the flush wrote two tables or more")
        try probeStore.close()
        for crashAt in 1...total {
            let fs = base.clone()
            let store = try run(fs)
            fs.crash(atOperation: crashAt)
            _ = try? store.flushForTesting()
            fs.powerLoss()
            let label = "power loss at operation \(crashAt) of \(total)"
            let reopened = try LogStore.open(at: Self.dir, options: Self.options(flushBytes: 64 << 10), fileSystem: fs)
            #expect(try reopened.contents() == model, "\(label)")
            let names = fs.names(in: Self.dir)
            #expect(!names.contains { $0.hasSuffix("-tmp") }, "\(label): \(names)")
            #expect(names.filter { $0.hasSuffix(".sst") }.count == reopened.statistics.tables.count, "\(label): \(names)")
            try reopened.close()
        }
    }
}
