@testable import Engine
import EngineTestSupport
import Testing

/// The store's compacted part in sorted tables (format 4): the resident index holds only the
/// log's tail, flushes and merges survive power loss at every I/O operation, and a format-3
/// store (packs) is upgraded at open all or nothing.
@Suite struct TableStoreTests {
    static let dir = "/tables"

    static func options() -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.preallocationSize = 8 << 10
        options.blobThreshold = 2000
        options.compaction = LogStore.CompactionPolicy(isAutomatic: false, flushBytes: 0, mergeFanIn: 2)
        // Segment hints are written by a background job whose file operations would interleave
        // with the counted ones.
        options.writesSegmentHints = false
        return options
    }

    /// A store with two tables (the newer holding tombstones and overwrites of the older's keys)
    /// and a tail holding more of both, closed; returns its contents.
    static func layered(_ fs: FaultInjectingFileSystem) throws -> [[UInt8]: [UInt8]] {
        let store = try LogStore.open(at: dir, options: options(), fileSystem: fs)
        var model: [[UInt8]: [UInt8]] = [:]
        func round(_ r: Int) throws {
            try store.write { batch in
                for i in 0..<30 {
                    let key = bytes("k\((i * 7 + r) % 60)")
                    if (i + r) % 5 == 0 {
                        batch.delete(key)
                        model[key] = nil
                    } else {
                        let value = [UInt8](repeating: UInt8(truncatingIfNeeded: r * 31 + i), count: (i % 10 == 0) ? 3000 : 100)
                        batch.put(key, value)
                        model[key] = value
                    }
                }
            }
        }
        for r in 0..<4 { try round(r) }
        try store.flushForTesting()
        for r in 4..<8 { try round(r) }
        try store.flushForTesting()
        for r in 8..<10 { try round(r) }
        #expect(store.statistics.tables.count == 2)
        #expect(try store.contents() == model)
        try store.close()
        return model
    }

    /// The mutating operations `step` performs on a clone of `base`.
    static func operations(_ base: FaultInjectingFileSystem, _ step: (LogStore) throws -> Void) throws -> Int {
        let probe = base.clone()
        let store = try LogStore.open(at: dir, options: options(), fileSystem: probe)
        store.collectBlobsFoundAtOpen()
        let start = probe.operationCount
        try step(store)
        return probe.operationCount - start
    }

    /// Power loss at every I/O operation of `step`: the reopened store has exactly `expected`,
    /// no temporary file is left, and every table the directory holds is one the manifest lists.
    static func crashEverywhere(
        _ base: FaultInjectingFileSystem, expected: [[UInt8]: [UInt8]], _ name: String, _ step: (LogStore) throws -> Void
    ) throws {
        let total = try operations(base, step)
        #expect(total > 5, "\(name)")
        for crashAt in 1...total {
            let fs = base.clone()
            let store = try LogStore.open(at: dir, options: options(), fileSystem: fs)
            store.collectBlobsFoundAtOpen()
            fs.crash(atOperation: crashAt)
            try? step(store)
            fs.powerLoss()
            let label = "\(name): power loss at operation \(crashAt) of \(total)"
            let reopened = try LogStore.open(at: dir, options: options(), fileSystem: fs)
            #expect(try reopened.contents() == expected, "\(label)")
            let names = fs.names(in: dir)
            #expect(!names.contains { $0.hasSuffix("-tmp") }, "\(label): \(names)")
            #expect(names.filter { $0.hasSuffix(".sst") }.count == reopened.statistics.tables.count, "\(label): \(names)")
            try reopened.write { $0.put(bytes("after"), bytes("1")) }
            try reopened.close()
        }
    }

    @Test func powerLossAtEveryOperationOfAFlushLosesNothing() throws {
        let base = FaultInjectingFileSystem()
        let expected = try Self.layered(base)
        try Self.crashEverywhere(base, expected: expected, "flush") { store in try store.flushForTesting() }
    }

    @Test func powerLossAtEveryOperationOfAMergeLosesNothing() throws {
        let base = FaultInjectingFileSystem()
        let expected = try Self.layered(base)
        // Two level-0 tables, fan-in 2: one merge into level 1, tombstones dropped with the oldest.
        try Self.crashEverywhere(base, expected: expected, "merge") { store in try store.mergeDueForTesting() }
    }

    /// After `compact()` the resident index holds nothing (every key is in the one table), and
    /// every read — point reads, `contains`, blobs, scans both ways — is answered by the table.
    @Test func afterCompactTheResidentIndexHoldsNoTableKeyAndReadsGoOn() throws {
        let fs = FaultInjectingFileSystem()
        let expected = try Self.layered(fs)
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        try store.compact()
        let statistics = store.statistics
        #expect(statistics.tailKeyCount == 0)
        #expect(statistics.tables.count == 1)
        #expect(statistics.keyCount == expected.count)
        for (key, value) in expected {
            #expect(try store.value(forKey: key) == value)
            #expect(try store.contains(key))
        }
        #expect(try !store.contains(bytes("absent")))
        #expect(try store.value(forKey: bytes("k99")) == nil)
        #expect(store.statistics.filterChecks > 0)
        let ascending = expected.keys.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(try store.scan().collect().map(\.key) == ascending)
        #expect(try store.scan(.all, limit: 7, reverse: true).collect().map(\.key) == Array(ascending.reversed().prefix(7)))
        try store.close()
    }

    /// A flush of a long tail writes one table per run of about `flushBytes` of segments (at
    /// least one segment), newest run first, so that it holds one run in memory at a time; reads
    /// see the newest version across them, and `compact()` merges them into one.
    @Test func aFlushOfALongTailWritesATablePerRunOfSegments() throws {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        var model: [[UInt8]: [UInt8]] = [:]
        var random = SeededGenerator(seed: 12)
        for round in 0..<12 {
            try store.write { batch in
                for i in 0..<40 {
                    let value = random.bytes(700 + i)
                    batch.put(bytes("r\(round)-\(i)"), value)
                    model[bytes("r\(round)-\(i)")] = value
                }
                // Deletes and overwrites of keys an older segment holds.
                if round > 0 {
                    batch.delete(bytes("r\(round - 1)-3"))
                    model[bytes("r\(round - 1)-3")] = nil
                    batch.put(bytes("r0-5"), bytes("round \(round)"))
                    model[bytes("r0-5")] = bytes("round \(round)")
                }
            }
        }
        let segments = store.statistics.segments.count
        #expect(segments >= 4)
        try store.flushForTesting()
        let tables = store.statistics.tables
        #expect(tables.count >= segments - 1, "one table per sealed segment (flushBytes below a segment)")
        #expect(store.statistics.tailKeyCount == 0)
        #expect(try store.contents() == model)
        try store.compact()
        #expect(store.statistics.tables.count == 1)
        #expect(store.statistics.tables.first?.entryCount == model.count)
        #expect(try store.contents() == model)
        try store.close()
    }

    /// A delete in the tail hides the table's version, in point reads and scans, and survives a
    /// reopen; a put after it shows again.
    @Test func aTombstoneInTheTailHidesTheTablesVersion() throws {
        let fs = FaultInjectingFileSystem()
        var store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        for i in 0..<20 { try store.write { $0.put(bytes("key\(i)"), bytes("v\(i)")) } }
        try store.compact()
        try store.write { $0.delete(bytes("key3")) }
        #expect(try store.value(forKey: bytes("key3")) == nil)
        #expect(try !store.contains(bytes("key3")))
        #expect(try store.scan(prefix: bytes("key3")).collect().map(\.key).isEmpty)
        #expect(store.statistics.tailKeyCount == 1)
        try store.close()
        store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(try store.value(forKey: bytes("key3")) == nil, "the tombstone is replayed")
        try store.write { $0.put(bytes("key3"), bytes("back")) }
        #expect(try store.value(forKey: bytes("key3")) == bytes("back"))
        try store.close()
    }

    // MARK: Format 3

    /// A format-3 store: a pack (with its hint) holding commits 1 ... 40, a format-3 manifest,
    /// and a log from segment 1 holding commits 41 on, some of which overwrite or delete the
    /// pack's keys. Returns its contents.
    static func format3Store(_ fs: FaultInjectingFileSystem) throws -> [[UInt8]: [UInt8]] {
        _ = try fs.createDirectory(dir)
        let packed = 40
        // The log first, as a format-4 store that continues after commit 40.
        try fs.openFile(dir + "/MANIFEST", create: true)
            .write(Manifest(logStart: 1, lastSequence: UInt64(packed), tables: []).encoded(), at: 0)
        var model: [[UInt8]: [UInt8]] = [:]
        for i in 0..<packed { model[bytes("p\(i)")] = [UInt8](repeating: UInt8(i), count: 200) }
        let store = try LogStore.open(at: dir, options: options(), fileSystem: fs)
        for i in 0..<10 {
            try store.write { batch in
                batch.put(bytes("p\(i * 3)"), bytes("new \(i)"))
                batch.delete(bytes("p\(i * 3 + 1)"))
                batch.put(bytes("q\(i)"), bytes("tail \(i)"))
            }
            model[bytes("p\(i * 3)")] = bytes("new \(i)")
            model[bytes("p\(i * 3 + 1)")] = nil
            model[bytes("q\(i)")] = bytes("tail \(i)")
        }
        try store.close()
        // Then the pack and the format-3 manifest, as a format-3 build's compaction left them.
        let records = (0..<packed).sorted { bytes("p\($0)").lexicographicallyPrecedes(bytes("p\($1)")) }.map { i in
            (key: bytes("p\(i)"), sequence: UInt64(i + 1), value: [UInt8](repeating: UInt8(i), count: 200))
        }
        let size = try DecoderHooks.writeFormat3Pack(number: 1, records: records, directory: dir, fileSystem: fs)
        fs.setContents(
            DecoderHooks.format3Manifest(logStart: 1, lastSequence: UInt64(packed), packs: [1], packSizes: [size]),
            of: dir + "/MANIFEST")
        try fs.syncDirectory(dir)
        return model
    }

    @Test func aFormat3StoreIsUpgradedAtOpen() throws {
        let fs = FaultInjectingFileSystem()
        let expected = try Self.format3Store(fs)
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(store.statistics.recovery.upgradedFromFormat3)
        #expect(try store.contents() == expected)
        #expect(store.statistics.tables.count == 1)
        let names = fs.names(in: Self.dir)
        #expect(!names.contains { $0.hasSuffix(".pack") || $0.hasSuffix(".hint") }, "\(names)")
        #expect(fs.contents(of: Self.dir + "/MANIFEST")?[8] == 4, "a format-4 manifest")
        try store.close()
        let again = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(!again.statistics.recovery.upgradedFromFormat3)
        #expect(try again.contents() == expected)
        try again.close()
    }

    /// Power loss (or a process crash) at every I/O operation of an open that upgrades: the next
    /// open finds the format-3 store or the format-4 one, finishes or redoes the upgrade, and has
    /// exactly the contents.
    @Test(arguments: [false, true])
    func aCrashAtEveryOperationOfTheUpgradeLeavesAStoreThatOpensWhole(processOnly: Bool) throws {
        let base = FaultInjectingFileSystem()
        let expected = try Self.format3Store(base)
        let probe = base.clone()
        let start = probe.operationCount
        try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: probe).close()
        let total = probe.operationCount - start
        #expect(total > 10)
        for crashAt in 1...total {
            let fs = base.clone()
            fs.crash(atOperation: crashAt)
            if let store = try? LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs) { try? store.close() }
            if processOnly { fs.processCrash() } else { fs.powerLoss() }
            let label = "\(processOnly ? "process crash" : "power loss") at operation \(crashAt) of \(total)"
            let reopened = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            #expect(try reopened.contents() == expected, "\(label)")
            let names = fs.names(in: Self.dir)
            #expect(!names.contains { $0.hasSuffix(".pack") || $0.hasSuffix("-tmp") }, "\(label): \(names)")
            try reopened.close()
        }
    }
}
