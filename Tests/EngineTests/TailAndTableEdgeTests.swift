#if canImport(Glibc)
    import Glibc
#endif
@testable import Engine
import EngineTestSupport
import Testing
import Foundation

/// Format 4's tail and tables at their edges: flushes of a tail loaded from segment hints, the
/// log end a clean close records, and what open refuses rather than lose durable commits.
@Suite struct TailAndTableEdgeTests {
    static let dir = TableStoreTests.dir

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
        let lastSequence = store.statistics.lastSequence
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
        // Salvage drops the record, keeps what is left and reports the durable commits it lost
        // (the missing segment's, up to the recorded last sequence); then the store opens.
        let report = try LogStore.salvage(at: Self.dir, options: Self.options(hints: false), fileSystem: fs)
        let lost = try #require(report.lostSequences)
        #expect(lost.lowerBound == report.lastKeptSequence + 1)
        #expect(lost.upperBound == lastSequence)
        #expect(report.lastKeptSequence < lastSequence)
        try LogStore.open(at: Self.dir, options: Self.options(hints: false), fileSystem: fs).close()
    }

    /// A lone table that holds tombstones (the older table whose keys they hid was dropped by
    /// salvage) is rewritten by `compact()` without them, so `keyCount` is exact afterwards.
    @Test func compactDropsTheTombstonesOfALoneTable() throws {
        let fs = FaultInjectingFileSystem()
        let options = Self.options(hints: false)
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        try store.write { batch in for i in 0..<20 { batch.put(bytes("k\(i)"), bytes("old \(i)")) } }
        try store.flushForTesting()
        try store.write { batch in
            for i in 0..<10 { batch.delete(bytes("k\(i)")) }
            for i in 20..<25 { batch.put(bytes("k\(i)"), bytes("new \(i)")) }
        }
        try store.flushForTesting()
        try store.close()
        let tables = fs.names(in: Self.dir).compactMap(StoreTable.number(fromName:)).sorted()
        try #require(tables.count == 2)
        let older = Self.dir + "/" + TableFormat.name(tables[0])
        fs.setContents([UInt8](repeating: 0xA5, count: fs.contents(of: older)!.count), of: older)
        _ = try LogStore.salvage(at: Self.dir, options: options, fileSystem: fs)

        let salvaged = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        try #require(salvaged.statistics.tables.count == 1)
        #expect(salvaged.statistics.tables[0].entryCount == 15)
        let contents = try salvaged.contents()
        #expect(contents.count == 5)
        let report = try salvaged.compact()
        #expect(report.tablesWritten == 1)
        #expect(salvaged.statistics.keyCount == 5)
        #expect(salvaged.statistics.tables.map(\.entryCount) == [5])
        #expect(try salvaged.contents() == contents)
        // Compacting again finds nothing to rewrite, and says so.
        let idle = try salvaged.compact()
        #expect(idle.tablesWritten == 0 && idle.recordsWritten == 0 && idle.blobsRemoved == 0)
        #expect(idle.bytesAfter == idle.bytesBefore && idle.bytesAfter == salvaged.statistics.bytesOnDisk, "the store's size, unchanged")
        try salvaged.close()
    }

    /// A background flush that fails stops automatic flushing until reopen, and `statistics`
    /// says so with the error; `compact()` still runs, and a reopen starts afresh.
    @Test func aFailedBackgroundFlushShowsInStatistics() throws {
        let fs = FaultInjectingFileSystem()
        var model: [[UInt8]: [UInt8]] = [:]
        let store = try LogStore.open(at: Self.dir, options: Self.options(hints: false), fileSystem: fs)
        var rounds = 0
        repeat {
            try Self.fill(store, rounds: rounds..<(rounds + 1), into: &model)
            rounds += 1
        } while store.statistics.segments.count < 3
        try store.close()

        var automatic = Self.options(hints: false)
        automatic.compaction = LogStore.CompactionPolicy(isAutomatic: true, flushBytes: 64 << 10, mergeFanIn: 2)
        // The flush started at open fails at its table's first write.
        fs.onEveryAccess { access in
            if access.kind == .open, access.path.hasSuffix(".sst" + LogFormat.temporarySuffix) {
                fs.failNext(.write, errno: EIO)
            }
        }
        let reopened = try LogStore.open(at: Self.dir, options: automatic, fileSystem: fs)
        var waits = 0
        while reopened.statistics.automaticFailure == nil, waits < 10_000 {
            Thread.sleep(forTimeInterval: 0.001)
            waits += 1
        }
        fs.onEveryAccess { _ in }
        let failure = reopened.statistics.automaticFailure
        #expect(failure?.error.code == .io && failure?.error.errno == EIO)
        #expect(reopened.statistics.tables.isEmpty)
        #expect(try reopened.contents() == model)
        try reopened.compact()
        #expect(reopened.statistics.tables.count == 1)
        try reopened.close()

        let again = try LogStore.open(at: Self.dir, options: automatic, fileSystem: fs)
        #expect(again.statistics.automaticFailure == nil)
        #expect(try again.contents() == model)
        try again.close()
    }

    /// `bytesOnDisk` counts every segment, segment hint and table file, the manifest and every
    /// file of the blob directory (less the active segment's preallocated zeros): the manifest too
    /// when it holds only the log end a clean close recorded.
    @Test(arguments: [false, true])
    func bytesOnDiskCountsEveryFileOfTheStore(compacted: Bool) throws {
        let fs = FaultInjectingFileSystem()
        var model: [[UInt8]: [UInt8]] = [:]
        let store = try LogStore.open(at: Self.dir, options: Self.options(hints: false), fileSystem: fs)
        try Self.fill(store, rounds: 0..<8, into: &model)
        if compacted { try store.compact() }
        try store.close()
        let reopened = try LogStore.open(at: Self.dir, options: Self.options(hints: false), fileSystem: fs)
        // The blob files the overwrites left are removed after open, in the background: done by
        // the time this returns, so that the statistics and the listing below see the same files.
        reopened.collectBlobsFoundAtOpen()
        let statistics = reopened.statistics
        let blobs = Self.dir + "/" + LogFormat.blobDirectoryName
        let files =
            fs.names(in: Self.dir).filter { $0 != LogFormat.lockFileName && $0 != LogFormat.blobDirectoryName }.map { Self.dir + "/" + $0 }
            + fs.names(in: blobs).map { blobs + "/" + $0 }
        #expect(files.contains(Self.dir + "/" + LogFormat.manifestName))
        #expect(files.contains { $0.hasPrefix(blobs + "/") }, "the store has blob files")
        let total = files.reduce(0) { $0 + UInt64(fs.contents(of: $1)?.count ?? 0) }
        #expect(statistics.bytesOnDisk + statistics.preallocatedBytes == total, "\(files)")
        try reopened.close()
    }

    /// Power loss at every I/O operation of `compact()` on a store with segment hints on (the
    /// flushed segments' hints are removed with them) and blobs: the reopened store has exactly
    /// the contents, and no hint outlives its segment.
    @Test func powerLossAtEveryOperationOfACompactionWithSegmentHintsLosesNothing() throws {
        let base = FaultInjectingFileSystem()
        var model: [[UInt8]: [UInt8]] = [:]
        let store = try LogStore.open(at: Self.dir, options: Self.options(hints: true), fileSystem: base)
        try Self.fill(store, rounds: 0..<10, into: &model)
        try store.flushForTesting()
        try Self.fill(store, rounds: 10..<20, into: &model)
        try store.close()
        let probe = base.clone()
        let opened = try LogStore.open(at: Self.dir, options: Self.options(hints: true), fileSystem: probe)
        let start = probe.operationCount
        try opened.compact()
        let total = probe.operationCount - start
        try opened.close()
        for crashAt in 1...total {
            let fs = base.clone()
            let store = try LogStore.open(at: Self.dir, options: Self.options(hints: true), fileSystem: fs)
            fs.crash(atOperation: crashAt)
            _ = try? store.compact()
            try? store.close()
            fs.powerLoss()
            let label = "power loss at operation \(crashAt) of \(total)"
            let reopened = try LogStore.open(at: Self.dir, options: Self.options(hints: true), fileSystem: fs)
            #expect(try reopened.contents() == model, "\(label)")
            let names = fs.names(in: Self.dir)
            let segments = Set(names.compactMap(SegmentFile.number(fromName:)))
            #expect(names.compactMap(SegmentHint.number(fromName:)).allSatisfy(segments.contains), "\(label): \(names)")
            try reopened.close()
        }
    }

    /// A disk that fills while the upgrade writes a table is an I/O error, not a damaged pack
    /// (which would send the user to salvage, setting the pack aside): open throws it, the store
    /// stays format 3, and once there is room the next open upgrades it whole.
    @Test func aFullDiskDuringTheUpgradeIsAnIOErrorAndTheStoreStaysFormat3() throws {
        let base = FaultInjectingFileSystem()
        let expected = try TableStoreTests.format3Store(base)
        let probe = base.clone()
        let start = probe.operationCount
        try LogStore.open(at: Self.dir, options: TableStoreTests.options(), fileSystem: probe).close()
        let log = probe.operationLog[start...]
        let firstTableWrite = try #require(log.firstIndex { $0.kind == .write && $0.path.hasSuffix(".sst-tmp") })
        let fs = base.clone()
        fs.fail(firstTableWrite - start + 1, errno: ENOSPC)
        #expect {
            try LogStore.open(at: Self.dir, options: TableStoreTests.options(), fileSystem: fs)
        } throws: { error in
            let error = error as? EngineError
            return error?.code == .io && error?.errno == ENOSPC
        }
        #expect(fs.contents(of: Self.dir + "/MANIFEST")?[8] == 3, "still a format-3 manifest")
        let store = try LogStore.open(at: Self.dir, options: TableStoreTests.options(), fileSystem: fs)
        #expect(store.statistics.recovery.upgradedFromFormat3)
        #expect(try store.contents() == expected)
        try store.close()
    }

    /// A table level is a `u32` read from the manifest: tables of the highest level merge into one
    /// of that level (there is no next), rather than trapping.
    @Test func tablesOfTheHighestLevelMergeWithoutTrapping() throws {
        let fs = FaultInjectingFileSystem()
        var model: [[UInt8]: [UInt8]] = [:]
        var store = try LogStore.open(at: Self.dir, options: Self.options(hints: false), fileSystem: fs)
        try Self.fill(store, rounds: 0..<3, into: &model)
        try store.flushForTesting()
        try Self.fill(store, rounds: 3..<6, into: &model)
        try store.flushForTesting()
        try store.close()
        let path = Self.dir + "/" + LogFormat.manifestName
        var manifest = try Manifest(decoding: try #require(fs.contents(of: path)), path: path)
        #expect(manifest.tables.count == 2)
        for i in manifest.tables.indices { manifest.tables[i].level = UInt32.max }
        fs.setContents(manifest.encoded(), of: path)
        store = try LogStore.open(at: Self.dir, options: Self.options(hints: false), fileSystem: fs)
        #expect(try store.mergeDueForTesting() == 1)
        #expect(store.statistics.tables.map(\.level) == [Int(UInt32.max)])
        #expect(try store.contents() == model)
        try store.close()
    }

    /// A manifest whose table entry claims more entries than the table has bytes is corruption
    /// (each entry takes bytes of the file): the count is read as a `u64`, and the store's
    /// figures must never trap on it.
    @Test func aManifestClaimingMoreEntriesThanItsTableHasBytesIsCorruption() throws {
        let fs = FaultInjectingFileSystem()
        var model: [[UInt8]: [UInt8]] = [:]
        let store = try LogStore.open(at: Self.dir, options: Self.options(hints: false), fileSystem: fs)
        try Self.fill(store, rounds: 0..<3, into: &model)
        try store.compact()
        try store.close()
        let path = Self.dir + "/" + LogFormat.manifestName
        var manifest = try Manifest(decoding: try #require(fs.contents(of: path)), path: path)
        manifest.tables[0].entryCount = manifest.tables[0].length + 1
        let bytes = manifest.encoded()
        #expect(throws: EngineError.self) { try Manifest(decoding: bytes, path: path) }
        manifest.tables[0].entryCount = UInt64.max
        fs.setContents(manifest.encoded(), of: path)
        #expect {
            try LogStore.open(at: Self.dir, options: Self.options(hints: false), fileSystem: fs)
        } throws: { error in
            (error as? EngineError)?.code == .corruption && (error as? EngineError)?.path == path
        }
    }

    /// Power loss at every I/O operation of a `close()` that records the log's end (segment hints
    /// off, commits not synced until close) on a store with tables: the end is recorded only once
    /// the commits up to it are durable, so the next open has every commit, and reopening after
    /// it again loses nothing.
    @Test func powerLossAtEveryOperationOfACloseThatRecordsTheLogEndLosesNothing() throws {
        let base = FaultInjectingFileSystem()
        var model: [[UInt8]: [UInt8]] = [:]
        var options = Self.options(hints: false)
        options.syncMode = .none
        let first = try LogStore.open(at: Self.dir, options: options, fileSystem: base)
        try Self.fill(first, rounds: 0..<4, into: &model)
        try first.flushForTesting()
        try first.close()
        let probe = base.clone()
        let opened = try LogStore.open(at: Self.dir, options: options, fileSystem: probe)
        var probeModel = model
        try Self.fill(opened, rounds: 4..<6, into: &probeModel)
        let start = probe.operationCount
        try opened.close()
        let total = probe.operationCount - start
        #expect(total >= 5)
        for crashAt in 1...total {
            let fs = base.clone()
            var expected = model
            let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
            try Self.fill(store, rounds: 4..<6, into: &expected)
            fs.crash(atOperation: crashAt)
            try? store.close()
            fs.powerLoss()
            let label = "power loss at operation \(crashAt) of \(total)"
            let reopened = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
            // Commits not yet synced when the power went may be gone: never part of one.
            let contents = try reopened.contents()
            #expect(contents == expected || contents == model, "\(label)")
            try reopened.close()
            #expect(try LogStore.open(at: Self.dir, options: options, fileSystem: fs).contents() == contents, "\(label)")
        }
    }

    /// A flush leaves out a sealed segment's record when a later commit overwrote the key; if
    /// that commit is not yet synced (`.deferred` or `.none`), a power loss takes it, and the
    /// record it replaced must still be there: the flush syncs the log before its switch. So the
    /// store keeps a prefix of the commit order.
    @Test(arguments: [false, true])
    func aFlushNeverDropsADurableVersionForAnUnsyncedOverwrite(deleting: Bool) throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.options(hints: false)
        options.syncMode = .none
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        try store.write { $0.put(bytes("key"), bytes("durable")) }
        var random = SeededGenerator(seed: 7)
        var filler = 0
        while store.statistics.segments.count < 2 {
            try store.write { $0.put(bytes("filler\(filler)"), random.bytes(1500)) }
            filler += 1
        }
        // Sealed, so synced: the first segment holds "key" = "durable".
        try store.write { batch in
            if deleting { batch.delete(bytes("key")) } else { batch.put(bytes("key"), bytes("unsynced")) }
        }
        try store.flushForTesting(sealingActive: false)
        fs.powerLoss()
        let reopened = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        let value = try reopened.value(forKey: bytes("key"))
        // A prefix of the commit order: the overwrite is gone (and the version before it is
        // there), or it survived with every commit before it.
        let everyFiller = try (0..<filler).allSatisfy { try reopened.contains(bytes("filler\($0)")) }
        let overwritten: [UInt8]? = deleting ? nil : bytes("unsynced")
        #expect(value == bytes("durable") || (value == overwritten && everyFiller), "\(String(decoding: value ?? [], as: UTF8.self))")
        try reopened.close()
    }
}
