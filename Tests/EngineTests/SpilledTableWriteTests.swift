#if canImport(Glibc)
    import Glibc
#endif
@testable import Engine
import EngineTestSupport
import Testing

/// A table write holds a constant of metadata whatever the table's size: the builder hands each
/// cut partition out, the writer keeps them in a scratch file beside the table once they pass
/// its spill limit and copies them in after the data. The table is the one the builder makes in
/// memory, byte for byte; the scratch file goes on success, on failure, and at open after a
/// crash; and power loss or an I/O error at any operation of a flush or merge that spills loses
/// nothing.
@Suite struct SpilledTableWriteTests {
    static let dir = "/spill"

    /// Entries whose table has many partitions of `partitionSize` 256.
    static func entries(_ count: Int, seed: UInt64) -> [TableEntry] {
        TableTests.randomEntries(count, seed: seed)
    }

    /// `written` is `expected`, byte for byte (reported by length and first difference).
    static func expectSame(_ written: [UInt8], _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let difference =
            zip(written, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? (written.count == expected.count ? nil : min(written.count, expected.count))
        #expect(
            difference == nil, "\(written.count) bytes written, \(expected.count) expected; first difference at \(difference ?? 0)",
            sourceLocation: sourceLocation)
    }

    /// Writes `entries` with a ``TableWriter`` of `limits` on `fs`; returns the table's bytes,
    /// its record, and whether a scratch file was there before the table ended.
    static func write(
        _ entries: [TableEntry], limits: TableWriter.Limits, fs: FaultInjectingFileSystem, options: LogStore.Options = LogStore.Options()
    ) throws -> (bytes: [UInt8], record: Manifest.Table, scratchSeen: Bool, mostHeld: Int) {
        _ = try fs.createDirectory(dir)
        var writer = try TableWriter(number: 7, level: 0, directory: dir, options: options, fileSystem: fs, limits: limits)
        var mostHeld = 0
        for entry in entries {
            try writer.add(entry)
            mostHeld = max(mostHeld, writer.heldMetadataBytes)
        }
        let scratchSeen = fs.names(in: dir).contains(TableFormat.scratchName(7))
        let record = try writer.finish()
        #expect(!fs.names(in: dir).contains(TableFormat.scratchName(7)), "the scratch file is removed once the table is whole")
        return (fs.contents(of: writer.temporaryPath) ?? [], record, scratchSeen, mostHeld)
    }

    @Test(arguments: [1, 300, 5_000, 1 << 20])
    func aSpilledTableIsByteForByteTheTableTheBuilderMakesInMemory(spillBytes: Int) throws {
        let entries = Self.entries(6_000, seed: UInt64(spillBytes))
        let options = LogStore.Options()
        let limits = TableWriter.Limits(partitionSize: 256, spillBytes: spillBytes, copyBytes: max(spillBytes, 700))
        let written = try Self.write(entries, limits: limits, fs: FaultInjectingFileSystem(), options: options)
        let inMemory = try TableBuilder.build(
            entries,
            options: TableBuilder.Options(
                blockSize: LogStore.tableBlockSize, compressionLevel: options.compressionLevel, partitionSize: 256))
        #expect(written.scratchSeen == (spillBytes < 1 << 20), "small limits spill; 1 MiB holds this table's partitions")
        Self.expectSame(written.bytes, inMemory)
        #expect(written.record.length == UInt64(inMemory.count))
        let reader = try TableTests.reader(written.bytes)
        let partitions = try reader.partitionCount
        #expect(partitions > 20, "\(partitions) partitions")
        #expect(try reader.entries() == entries)
    }

    @Test func theDefaultWriterSpillsNothingForATableWhosePartitionsFitItsLimit() throws {
        let entries = Self.entries(2_000, seed: 9)
        let options = LogStore.Options()
        let written = try Self.write(entries, limits: TableWriter.Limits(), fs: FaultInjectingFileSystem(), options: options)
        #expect(!written.scratchSeen)
        let inMemory = try TableBuilder.build(
            entries, options: TableBuilder.Options(blockSize: LogStore.tableBlockSize, compressionLevel: options.compressionLevel))
        Self.expectSame(written.bytes, inMemory)
    }

    /// The builder, its partitions taken after each entry, holds at most its bound however many
    /// partitions the table has; a builder that keeps them holds more and more.
    @Test(arguments: [256, 4096])
    func theBuildersHeldMetadataStaysUnderItsBoundWhateverTheTablesSize(partitionSize: Int) throws {
        let options = TableBuilder.Options(partitionSize: partitionSize)
        let bound = TableBuilder.heldMetadataBound(options)
        var taking = TableBuilder(options: options)
        var keeping = TableBuilder(options: options)
        var mostHeld = 0
        var taken: [UInt8] = []
        let count = partitionSize == 256 ? 40_000 : 150_000
        for i in 0..<count {
            let entry = TableEntry(key: bytes("user/\(10_000_000 + i)/name"), sequence: UInt64(i + 1), value: .value(bytes("v\(i % 100)")))
            try taking.add(entry)
            try keeping.add(entry)
            _ = taking.takeBytes()
            _ = keeping.takeBytes()
            taken += taking.takePartitionBytes()
            mostHeld = max(mostHeld, taking.heldMetadataBytes)
            #expect(taking.heldMetadataBytes <= bound)
        }
        #expect(taking.partitionCount > 40, "a table of many partitions")
        // Each entry: a separator (at most a key: 18 bytes here) and four varints (the
        // separator's length, two stored lengths and a data offset: at most 10 bytes here).
        #expect(taking.topLevelEntryBytes <= (18 + 10) * taking.partitionCount, "\(taking.topLevelEntryBytes) bytes of top-level entries")
        #expect(mostHeld <= bound, "held \(mostHeld) of a bound of \(bound)")
        #expect(keeping.heldMetadataBytes > 4 * mostHeld, "a builder that keeps its partitions grows with the table")
        let ending = taking.finishTakingPartitions()
        let kept = keeping.finish()
        Self.expectSame(ending.data + taken + ending.partitions + ending.trailer, kept)
    }

    /// A writer's held partitions stay under its spill limit plus the builder's bound, however
    /// long the table.
    @Test func aTableWritersHeldMetadataStaysUnderItsSpillLimitAndTheBuildersBound() throws {
        let limits = TableWriter.Limits(partitionSize: 512, spillBytes: 16 << 10, copyBytes: 16 << 10)
        var entries: [TableEntry] = []
        for i in 0..<60_000 {
            entries.append(TableEntry(key: bytes("key/\(1_000_000 + i)"), sequence: UInt64(i + 1), value: .value(bytes("\(i)"))))
        }
        let fs = FaultInjectingFileSystem()
        let written = try Self.write(entries, limits: limits, fs: fs)
        #expect(written.scratchSeen)
        let bound = limits.spillBytes + TableBuilder.heldMetadataBound(TableBuilder.Options(partitionSize: 512))
        #expect(written.mostHeld <= bound, "held \(written.mostHeld) of a bound of \(bound)")
        let reader = try TableTests.reader(written.bytes)
        let partitions = try reader.partitionCount
        #expect(partitions > 50, "\(partitions) partitions")
        #expect(UInt64(written.bytes.count) == written.record.length)
    }

    /// A read of the scratch file that fails, or finds it cut short, fails the table; the
    /// writer's discard removes both its files.
    @Test(arguments: ["read fails", "cut short"])
    func aScratchThatCannotBeReadBackFailsTheTable(damage: String) throws {
        let fs = FaultInjectingFileSystem()
        _ = try fs.createDirectory(Self.dir)
        var writer = try TableWriter(
            number: 3, level: 0, directory: Self.dir, options: LogStore.Options(), fileSystem: fs,
            limits: TableWriter.Limits(partitionSize: 256, spillBytes: 100, copyBytes: 1000))
        for entry in Self.entries(3_000, seed: 4) { try writer.add(entry) }
        let scratch = Self.dir + "/" + TableFormat.scratchName(3)
        if damage == "read fails" {
            fs.failReads(ofPathsEndingWith: TableFormat.scratchName(3))
        } else {
            fs.setContents(Array((fs.contents(of: scratch) ?? []).dropLast(7)), of: scratch)
        }
        do {
            _ = try writer.finish()
            Issue.record("a table was finished from a scratch file that could not be read back")
        } catch {
            #expect(error.code == .io)
        }
        writer.discard()
        #expect(fs.names(in: Self.dir).isEmpty)
    }

    @Test func aScratchFileNameIsATableLeftoverName() {
        #expect(TableFormat.scratchName(0x2A) == "000000000000002a.sst-partitions-tmp")
        #expect(StoreTable.number(fromName: TableFormat.scratchName(0x2A)) == 0x2A)
        #expect(StoreTable.number(fromName: "000000000000002a.sst-partitions") == nil)
        #expect(StoreTable.number(fromName: "000000000000002a.sst-other-tmp") == nil)
    }

    // MARK: In the store

    static func hooks() -> LogStore.TestHooks {
        LogStore.TestHooks(flushWindowBytes: 8 << 10, tablePartitionBytes: 32, tableSpillBytes: 1, tableCopyBytes: 256)
    }

    static func open(_ fs: FaultInjectingFileSystem, hooks: LogStore.TestHooks = hooks()) throws -> LogStore {
        let store = try LogStore.open(at: dir, options: StreamedFlushTests.options(flushBytes: 64 << 10), fileSystem: fs, testHooks: hooks)
        store.collectBlobsFoundAtOpen()
        return store
    }

    /// A store with a table and a tail of two runs or more to flush, closed; returns its contents.
    static func store(_ fs: FaultInjectingFileSystem) throws -> [[UInt8]: [UInt8]] {
        var model: [[UInt8]: [UInt8]] = [:]
        let store = try open(fs)
        var random = SeededGenerator(seed: 33)
        try StreamedFlushTests.commit(store, &model, &random, count: 30)
        try store.flushForTesting()
        try StreamedFlushTests.commit(store, &model, &random, count: 120)
        try store.close()
        return model
    }

    static let scratchMark = TableFormat.scratchInfix + LogFormat.temporarySuffix

    /// The operations `step` performs on a clone of `base`, checked to write a scratch file.
    static func operations(_ base: FaultInjectingFileSystem, _ step: (LogStore) throws -> Void) throws -> [FaultInjectingFileSystem.Operation] {
        let probe = base.clone()
        let store = try open(probe)
        let start = probe.operationCount
        try step(store)
        let operations = Array(probe.operationLog[start...])
        try store.close()
        #expect(operations.filter { $0.kind == .write && $0.path.hasSuffix(scratchMark) }.count > 3, "the step spills")
        #expect(operations.contains { $0.kind == .remove && $0.path.hasSuffix(scratchMark) })
        return operations
    }

    /// Power loss (or, `processOnly`, a process crash, which keeps what was not synced: the
    /// scratch file too) at every operation of `step`: the reopened store holds exactly
    /// `expected`, no temporary or scratch file is left, and every table file is one the manifest
    /// lists.
    static func crashEverywhere(
        _ base: FaultInjectingFileSystem, expected: [[UInt8]: [UInt8]], processOnly: Bool, _ step: (LogStore) throws -> Void
    ) throws {
        let operations = try Self.operations(base, step)
        for crashAt in 1...operations.count {
            let fs = base.clone()
            let store = try open(fs)
            fs.crash(atOperation: crashAt)
            _ = try? step(store)
            if processOnly { fs.processCrash() } else { fs.powerLoss() }
            let label = "\(processOnly ? "process crash" : "power loss") at operation \(crashAt) of \(operations.count) (\(operations[crashAt - 1]))"
            let reopened = try open(fs)
            #expect(try reopened.contents() == expected, "\(label)")
            let names = fs.names(in: dir)
            #expect(!names.contains { $0.hasSuffix(LogFormat.temporarySuffix) }, "\(label): \(names)")
            #expect(names.filter { $0.hasSuffix(".sst") }.count == reopened.statistics.tables.count, "\(label): \(names)")
            try reopened.write { $0.put(bytes("after"), bytes("1")) }
            try reopened.close()
        }
    }

    @Test(arguments: [false, true])
    func aCrashAtEveryOperationOfAFlushThatSpillsLosesNothingAndLeavesNoScratch(processOnly: Bool) throws {
        let base = FaultInjectingFileSystem()
        let expected = try Self.store(base)
        try Self.crashEverywhere(base, expected: expected, processOnly: processOnly) { store in try store.flushForTesting() }
    }

    @Test(arguments: [false, true])
    func aCrashAtEveryOperationOfACompactionThatSpillsLosesNothingAndLeavesNoScratch(processOnly: Bool) throws {
        let base = FaultInjectingFileSystem()
        let expected = try Self.store(base)
        try Self.crashEverywhere(base, expected: expected, processOnly: processOnly) { store in _ = try store.compact() }
    }

    /// A write, sync or any other operation of a flush that spills fails (EIO, or ENOSPC): the
    /// store holds what it held; a failed flush leaves no file of its table behind (unless the
    /// failed operation is a removal: then open removes it), and reopening finds everything.
    @Test(arguments: [EIO, ENOSPC])
    func anIOErrorAtEveryOperationOfAFlushThatSpillsLosesNothingAndLeavesNoScratch(errno code: Int32) throws {
        let base = FaultInjectingFileSystem()
        let expected = try Self.store(base)
        let operations = try Self.operations(base) { store in try store.flushForTesting() }
        for failAt in 1...operations.count {
            let fs = base.clone()
            let store = try Self.open(fs)
            fs.fail(failAt, errno: code)
            let label = "errno \(code) at operation \(failAt) of \(operations.count) (\(operations[failAt - 1]))"
            let flushed = (try? store.flushForTesting()) != nil
            #expect(try store.contents() == expected, "\(label)")
            let names = fs.names(in: Self.dir)
            if !flushed, operations[failAt - 1].kind != .remove {
                #expect(!names.contains { $0.hasSuffix(Self.scratchMark) || $0.hasSuffix(".sst-tmp") }, "\(label): \(names)")
            }
            var next = expected
            if (try? store.write({ $0.put(bytes("after"), bytes("1")) })) != nil { next[bytes("after")] = bytes("1") }
            try? store.close()
            let reopened = try Self.open(fs)
            #expect(try reopened.contents() == next, "\(label): reopen")
            #expect(!fs.names(in: Self.dir).contains { $0.hasSuffix(LogFormat.temporarySuffix) }, "\(label)")
            try reopened.close()
        }
    }

    /// A scratch file a crash left (with its unfinished table) is removed by open, as a leftover.
    @Test func openRemovesAScratchFileACrashLeft() throws {
        let fs = FaultInjectingFileSystem()
        let expected = try Self.store(fs)
        let store = try Self.open(fs)
        // Power loss in the middle of the flush's table, its scratch file written and synced
        // (durable: the worst case for open).
        fs.crash(atOccurrence: 1, of: .rename)
        _ = try? store.flushForTesting()
        fs.processCrash()
        let scratch = fs.names(in: Self.dir).filter { $0.hasSuffix(Self.scratchMark) }
        #expect(scratch.isEmpty, "the writer removed its scratch before the rename")
        // Put one back, as power loss mid-spill leaves it.
        let name = TableFormat.scratchName(0x99)
        let file = try fs.openFile(Self.dir + "/" + name, create: true)
        try file.write([1, 2, 3, 4], at: 0)
        try file.sync()
        try fs.syncDirectory(Self.dir)
        let reopened = try Self.open(fs)
        #expect(!fs.names(in: Self.dir).contains { $0.hasSuffix(LogFormat.temporarySuffix) })
        #expect(reopened.statistics.recovery.removedLeftovers >= 1)
        #expect(try reopened.contents() == expected)
        // The next table is numbered past it: open counts a scratch file's number as taken.
        try reopened.flushForTesting()
        #expect(reopened.statistics.tables.contains { $0.number > 0x99 })
        try reopened.close()
    }
}
