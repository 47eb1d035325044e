@testable import Engine
import EngineTestSupport
import Foundation
import Testing

/// Compaction (flush of the whole tail into a table, merge of every table into one): contents
/// unchanged, space reclaimed, the resident index emptied, damaged tables reported, every crash
/// point leaving the old state or the new one, and commits and reads going on during it.
@Suite struct CompactionTests {
    static let dir = "/compact"

    static func options() -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.blockSize = 4 << 10
        options.preallocationSize = 8 << 10
        options.blobThreshold = 2000
        options.compaction = .manual
        // Segment hints are written by a background job whose file operations would interleave
        // with the counted ones; SegmentHintTests injects faults into hint writing on its own.
        options.writesSegmentHints = false
        return options
    }

    /// A store with overwrites, deletes and blobs (some overwritten) over several segments,
    /// closed; returns its contents.
    @discardableResult
    static func fill(_ fs: FaultInjectingFileSystem, rounds: Int = 6) throws -> [[UInt8]: [UInt8]] {
        let store = try LogStore.open(at: dir, options: options(), fileSystem: fs)
        var random = SeededGenerator(seed: 11)
        for round in 0..<rounds {
            var batch = WriteBatch()
            for i in 0..<40 {
                let key = bytes("user/\((i * 7 + round) % 50)")
                if (i + round) % 9 == 0 {
                    batch.delete(key)
                } else {
                    batch.put(key, random.bytes(300).map { 97 + $0 % 16 })
                }
            }
            // A blob overwritten every round, and one written once.
            batch.put(bytes("asset/cover"), random.bytes(3000))
            if round == 0 { batch.putExternal(bytes("asset/icon"), bytes("tiny but external")) }
            try store.commit(batch)
        }
        let contents = try store.contents()
        try store.close()
        return contents
    }

    @Test func compactionKeepsTheContentsAndReclaimsDeadBytes() throws {
        let fs = FaultInjectingFileSystem()
        let expected = try Self.fill(fs, rounds: 30)
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        let before = store.statistics
        #expect(before.segments.count > 2)
        #expect(before.deadBytes > before.liveBytes)
        store.collectBlobsFoundAtOpen()  // the background collection open started, done by now
        #expect(fs.names(in: Self.dir + "/blobs").count == 2, "open's collection removed the covers that were overwritten")

        let report = try store.compact()
        let after = store.statistics
        #expect(try store.contents() == expected)
        #expect(after.deadBytes == 0 && after.liveBytes == 0, "the tail is one empty segment")
        #expect(after.tailKeyCount == 0, "the resident index holds no key of the table")
        #expect(after.keyCount == before.keyCount)
        #expect(after.bytesOnDisk < before.bytesOnDisk / 2)
        #expect(after.segments.count == 1, "only the new, empty active segment is left")
        #expect(after.tables.count == 1)
        #expect(after.tables.first?.entryCount == expected.count, "no tombstone is left in the only table")
        #expect(report.recordsWritten == expected.count)
        #expect(report.tablesWritten == 1)
        #expect(after.flushBytesWritten == after.tables.first?.bytesOnDisk)
        #expect(after.lastCompaction == report)
        #expect(fs.names(in: Self.dir).filter { $0.hasSuffix(".wal") }.count == 1, "the old segments are removed")

        try store.write { $0.put(bytes("user/after"), bytes("x")) }
        try store.close()
        let reopened = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        var next = expected
        next[bytes("user/after")] = bytes("x")
        #expect(try reopened.contents() == next)
        #expect(reopened.statistics.tables == after.tables)
        #expect(reopened.statistics.tailKeyCount == 1)
        #expect(reopened.statistics.recovery.removedLeftovers == 0)
    }

    /// A scan holds the files its entries live in: a compaction that replaces them must neither
    /// cut them down nor make their values unreadable; nor may it cut a file that has another
    /// name (a hard-linked backup). Files nobody holds are cut to nothing (in steps) before they
    /// are removed, so that no single `unlink` frees a whole segment at once.
    @Test func replacedFilesAreCutDownBeforeRemovalUnlessHeldOrHardLinked() throws {
        let fs = FaultInjectingFileSystem()
        let expected = try Self.fill(fs, rounds: 30)
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        store.collectBlobsFoundAtOpen()  // before counting: only the compaction's operations
        // A scan over a prefix written into the active segment, which the compaction seals and
        // replaces; then the prefix is overwritten.
        func late(_ i: Int) -> [UInt8] { [UInt8](repeating: UInt8(i), count: 500) }
        try store.write { batch in
            for i in 0..<40 { batch.put(bytes("late/\(i)"), late(i)) }
        }
        let segments = fs.names(in: Self.dir).filter { $0.hasSuffix(".wal") }.sorted()
        #expect(segments.count >= 3)
        let held = try #require(segments.last)
        // A hard-linked backup of the first segment: cutting it would empty the backup too.
        let linked = segments[0]
        let backup = "/backup/" + linked
        let linkedBytes = try #require(fs.contents(of: Self.dir + "/" + linked))
        fs.linkFile(Self.dir + "/" + linked, to: backup)
        let scan = (try store.scan(prefix: bytes("late/")).collect())
        #expect(scan.count == 40)
        try store.write { batch in
            for i in 0..<40 { batch.put(bytes("late/\(i)"), bytes("replaced")) }
        }

        let operationsBefore = fs.operationCount
        try store.compact()
        // From the switch on (the compaction's rollover trims the sealed segment before).
        let all = Array(fs.operationLog.dropFirst(operationsBefore))
        let switched = try #require(all.firstIndex { $0.kind == .rename && $0.path.hasSuffix("/MANIFEST-tmp") })
        let operations = Array(all[switched...])
        for name in segments {
            let path = Self.dir + "/" + name
            let cut = operations.lastIndex { $0.kind == .truncate && $0.path == path }
            let gone = operations.firstIndex { $0.kind == .remove && $0.path == path }
            #expect(gone != nil, "\(name) is removed")
            if name == held {
                #expect(cut == nil, "\(name) is held by the scan: removed whole, never cut")
            } else if name == linked {
                #expect(cut == nil, "\(name) has a second name: removed whole, never cut")
            } else {
                #expect(cut != nil && gone != nil && cut! < gone!, "\(name), held by nobody, is cut down before it is removed")
            }
        }
        let backupIntact = fs.contents(of: backup) == linkedBytes
        #expect(backupIntact, "the hard-linked backup is intact")
        // The scan reads the values it saw, from a file no longer in the directory.
        for entry in scan {
            let number = try #require(Int(String(decoding: entry.key.dropFirst(5), as: UTF8.self)))
            #expect(try entry.value() == late(number), "late/\(number)")
        }
        var next = expected
        for i in 0..<40 { next[bytes("late/\(i)")] = bytes("replaced") }
        #expect(try store.contents() == next)
        try store.close()
    }

    @Test func compactingTwiceMergesEverythingIntoOneTableAgain() throws {
        let fs = FaultInjectingFileSystem()
        var expected = try Self.fill(fs)
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        try store.compact()
        try store.write { batch in
            batch.put(bytes("user/1"), bytes("new"))
            batch.delete(bytes("user/2"))
        }
        expected[bytes("user/1")] = bytes("new")
        expected[bytes("user/2")] = nil
        #expect(store.statistics.tailKeyCount == 2, "a put and a tombstone hiding the table's version")
        #expect(try store.value(forKey: bytes("user/2")) == nil)
        let firstTable = store.statistics.tables.map(\.number)
        let report = try store.compact()
        #expect(report.tablesWritten == 2, "the flush's table and the merged one")
        #expect(store.statistics.tables.map(\.number) != firstTable)
        #expect(store.statistics.tables.count == 1)
        #expect(store.statistics.tables.first?.entryCount == expected.count, "the tombstone is dropped with the oldest table")
        #expect(store.statistics.tailKeyCount == 0)
        #expect(try store.contents() == expected)
        try store.close()
        #expect(try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs).contents() == expected)
        #expect(fs.names(in: Self.dir).filter { $0.hasSuffix(".sst") }.count == 1)
    }

    /// Open reads each table's footer, filter and index, never its data blocks: a damaged data
    /// block goes unnoticed until a key in it is read, and then it is reported, naming the table,
    /// never returned.
    @Test func openReadsNoTableDataBlockAndADamagedOneIsReportedWhenRead() throws {
        let fs = FaultInjectingFileSystem()
        try Self.fill(fs)
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        try store.compact()
        try store.close()
        let table = Self.dir + "/" + fs.names(in: Self.dir).first { $0.hasSuffix(".sst") }!
        fs.flipBit(in: table, atByte: 5)  // inside the first data block's stored bytes
        let reads = fs.readCount
        let reopened = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        // The segment's header, the table's footer, filter and index.
        #expect(fs.readCount - reads <= 6)
        let error = #expect(throws: EngineError.self) { try reopened.value(forKey: bytes("asset/cover")) }
        #expect(error?.code == .corruption)
        #expect(error?.path == table)
        #expect(try reopened.value(forKey: bytes("user/49")) != nil, "other blocks read on")
    }

    /// A table cut short (even at a block boundary), with a flipped bit in its footer, or
    /// missing, is corruption naming the table: open refuses the store and changes nothing. A
    /// flipped bit in its top-level index or a filter partition (which open does not read) is
    /// the same corruption at the first read that needs it (any read for the top-level index, a
    /// point read for a filter: a scan reads none), and again at the next. Nothing of a damaged
    /// table is ever returned as data.
    @Test(arguments: ["cut", "cut at a block", "footer", "index", "filter", "remove"])
    func aDamagedTableIsCorruptionNamingItsFile(damage: String) throws {
        let fs = FaultInjectingFileSystem()
        let model = try Self.fill(fs)
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        try store.compact()
        try store.close()
        let table = Self.dir + "/" + fs.names(in: Self.dir).first { $0.hasSuffix(".sst") }!
        let good = try #require(fs.contents(of: table))
        let footer = try TableFooter.decode(good.suffix(60), fileSize: UInt64(good.count), path: table)
        switch damage {
        case "cut": fs.setContents(Array(good.prefix(good.count - 7)), of: table)
        case "cut at a block": fs.setContents(Array(good.prefix(Int(footer.filter.offset))), of: table)
        case "footer": fs.flipBit(in: table, atByte: good.count - 30)
        case "index": fs.flipBit(in: table, atByte: Int(footer.index.offset) + 2)
        case "filter": fs.flipBit(in: table, atByte: Int(footer.filter.offset) + 2)
        default: try fs.removeFile(table)
        }
        let before = Set(fs.names(in: Self.dir))
        let error: EngineError?
        if damage == "index" || damage == "filter" {
            let reopened = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            let readAll = { () throws -> Void in
                if damage == "index" { _ = try reopened.scan().collect() }
                for key in model.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) { _ = try reopened.value(forKey: key) }
            }
            error = #expect(throws: EngineError.self, "\(damage)") { try readAll() }
            let again = #expect(throws: EngineError.self, "\(damage)") { try readAll() }
            #expect(again?.path == table, "\(damage): the next read reports it too")
            try reopened.close()
        } else {
            error = #expect(throws: EngineError.self, "\(damage)") {
                try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            }
        }
        #expect(error?.code == .corruption, "\(damage)")
        #expect(error?.path == table, "\(damage)")
        #expect(Set(fs.names(in: Self.dir)) == before, "\(damage): nothing removed")
    }

    /// A store whose table is version 4 (an older build's) reads as before, and `compact()`
    /// rewrites that lone table as version 5 even with nothing to flush or drop (FORMAT.md,
    /// "Table files": upgrade by rewrite).
    @Test func compactRewritesAVersion4TableAsVersion5() throws {
        let fs = FaultInjectingFileSystem()
        let model = try Self.fill(fs)
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        try store.compact()
        try store.close()
        // The table rewritten in version 4, the manifest's record of its length to match.
        let name = try #require(fs.names(in: Self.dir).first { $0.hasSuffix(".sst") })
        let path = Self.dir + "/" + name
        let current = try TableReader(source: MemoryTableSource(bytes: try #require(fs.contents(of: path))))
        #expect(current.footer.version == TableFormat.version, "compaction writes version 5")
        var options = TableBuilder.Options()
        options.version = TableFormat.unpartitionedVersion
        let old = try TableBuilder.build(try current.entries(), options: options)
        fs.setContents(old, of: path)
        var manifest = try Manifest(decoding: try #require(fs.contents(of: Self.dir + "/MANIFEST")), path: "MANIFEST")
        #expect(manifest.tables.count == 1)
        manifest.tables[0].length = UInt64(old.count)
        fs.setContents(manifest.encoded(), of: Self.dir + "/MANIFEST")

        let reopened = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        let version = { reopened.state.withLock { $0.tables.map(\.reader.footer.version) } }
        #expect(version() == [TableFormat.unpartitionedVersion])
        #expect(try reopened.contents() == model)
        for (key, value) in model { #expect(try reopened.value(forKey: key) == value) }
        try reopened.compact()
        #expect(version() == [TableFormat.version], "the lone version-4 table is rewritten")
        #expect(try reopened.contents() == model)
        try reopened.compact()
        #expect(version() == [TableFormat.version])
        try reopened.close()
        let again = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(try again.contents() == model)
        try again.close()
    }

    /// A table's entries are in key order: after compaction, reading a prefix's values touches a
    /// few blocks instead of one block per key.
    @Test func compactionClustersAPrefixIntoFewBlocks() throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.options()
        options.valueCacheCapacity = 0
        var store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        // Two entities written interleaved, one record per commit: each commit is its own block.
        for i in 0..<60 {
            try store.write { batch in
                batch.put(bytes("a/\(1000 + i)"), [UInt8](repeating: 97, count: 40))
                batch.put(bytes("b/\(1000 + i)"), [UInt8](repeating: 98, count: 40))
            }
        }
        func blocksReadScanning(_ prefix: String) throws -> Int {
            try store.close()
            store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
            let reads = fs.readCount
            var cursor = try store.scan(prefix: bytes(prefix))
            while let entry = try cursor.next() { _ = try entry.value() }
            return fs.readCount - reads
        }
        #expect(try blocksReadScanning("a/") == 60)
        try store.compact()
        // The table's filter and index (read at its first use), then the blocks.
        #expect(try blocksReadScanning("a/") <= 4)
    }

    /// The mutating operations a compaction of the store in `base` performs (on a clone).
    static func compactionOperations(_ base: FaultInjectingFileSystem) throws -> [FaultInjectingFileSystem.Operation] {
        let probe = base.clone()
        let store = try LogStore.open(at: dir, options: options(), fileSystem: probe)
        store.collectBlobsFoundAtOpen()  // before counting: only the compaction's operations
        let start = probe.operationCount
        try store.compact()
        return Array(probe.operationLog[start...])
    }

    /// Power loss at every I/O operation of a compaction (and, separately, a process crash there):
    /// the reopened store always has exactly the contents from before, leftovers are removed, and
    /// it accepts commits.
    @Test(arguments: [false, true])
    func aCrashAtEveryOperationOfACompactionLeavesTheContentsUnchanged(processOnly: Bool) throws {
        let base = FaultInjectingFileSystem()
        let expected = try Self.fill(base)
        let operations = try Self.compactionOperations(base)
        let total = operations.count
        #expect(total > 10)
        for crashAt in 1...total {
            let fs = base.clone()
            let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            store.collectBlobsFoundAtOpen()  // before counting: only the compaction's operations
            fs.crash(atOperation: crashAt)
            _ = try? store.compact()
            if processOnly { fs.processCrash() } else { fs.powerLoss() }
            let label = "\(processOnly ? "process crash" : "power loss") at operation \(crashAt) of \(total) (\(operations[crashAt - 1]))"
            let reopened = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            reopened.collectBlobsFoundAtOpen()  // the background collection, done by now
            #expect(try reopened.contents() == expected, "\(label)")
            let stats = reopened.statistics
            let names = fs.names(in: Self.dir)
            #expect(!names.contains { $0.hasSuffix("-tmp") }, "\(label): temporary files left: \(names)")
            #expect(names.filter { $0.hasSuffix(".sst") }.count == stats.tables.count, "\(label): \(names)")
            #expect(names.filter { $0.hasSuffix(".wal") }.count == stats.segments.count, "\(label): \(names)")
            #expect(fs.names(in: Self.dir + "/blobs").count == (try reopened.scan().collect().filter(\.isBlob).count), "\(label): blobs")
            try reopened.write { $0.put(bytes("after"), bytes("1")) }
            try reopened.close()
            var next = expected
            next[bytes("after")] = bytes("1")
            let again = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            #expect(try again.contents() == next, "\(label): second reopen")
            #expect(again.statistics.recovery.removedLeftovers == 0, "\(label)")
            try again.close()
        }
    }

    /// An I/O error at any write, sync, rename or directory sync of a compaction: before the
    /// switch the store is as it was and keeps working; after it, nothing is lost either.
    @Test func anIOErrorAnywhereInACompactionLosesNothing() throws {
        let base = FaultInjectingFileSystem()
        let expected = try Self.fill(base)
        let operations = try Self.compactionOperations(base)
        for failAt in 1...operations.count {
            let fs = base.clone()
            let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            store.collectBlobsFoundAtOpen()  // before counting: only the compaction's operations
            fs.fail(failAt, errno: 5)
            let label = "EIO at operation \(failAt) (\(operations[failAt - 1]))"
            let compacted = (try? store.compact()) != nil
            #expect(try store.contents() == expected, "\(label)")
            var next = expected
            if (try? store.write({ $0.put(bytes("after"), bytes("1")) })) != nil {
                next[bytes("after")] = bytes("1")
            } else {
                #expect(!compacted, "\(label): a successful compaction left the store read-only")
            }
            if compacted { #expect(store.statistics.deadBytes == 0, "\(label)") }
            try? store.close()
            let reopened = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            #expect(try reopened.contents() == next, "\(label): reopen")
            #expect(!fs.names(in: Self.dir).contains { $0.hasSuffix("-tmp") }, "\(label)")
            try reopened.close()
        }
    }

    /// Committers and readers run while compactions do; afterwards, and after a reopen, the store
    /// holds exactly what the committers last wrote, and every read along the way saw a value
    /// its key really had.
    @Test func commitsAndReadsDuringCompactionAgreeWithTheModel() throws {
        let fs = FaultInjectingFileSystem()
        let stable = try Self.fill(fs)
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        let writers = 3
        let rounds = 150
        let failures = Locked<[String]>([])
        let finals = Locked<[[UInt8]: [UInt8]?]>([:])
        onThreads(writers + 2) { thread in
            do {
                if thread < writers {
                    // Each writer owns its keys, so its last write of each is the expected value.
                    var mine: [[UInt8]: [UInt8]?] = [:]
                    for round in 0..<rounds {
                        let key = bytes("w\(thread)/\(round % 20)")
                        if round % 7 == 6 {
                            try store.write { $0.delete(key) }
                            mine[key] = .some(nil)
                        } else {
                            let value = bytes("w\(thread) round \(round)") + [UInt8](repeating: UInt8(round), count: round % 3 == 0 ? 2500 : 100)
                            try store.write { $0.put(key, value) }
                            mine[key] = value
                        }
                    }
                    finals.withLock { $0.merge(mine) { $1 } }
                } else if thread == writers {
                    for _ in 0..<4 { try store.compact() }
                } else {
                    // A reader of keys nobody changes: each read must give exactly the old value.
                    let keys = Array(stable.keys)
                    for i in 0..<600 {
                        let key = keys[i % keys.count]
                        let value = try store.value(forKey: key)
                        if value != stable[key] { failures.withLock { $0.append("read of \(key) gave a wrong value") } }
                    }
                }
            } catch {
                failures.withLock { $0.append("thread \(thread): \(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        var expected = stable
        for (key, value) in finals.withLock({ $0 }) { expected[key] = value }
        #expect(try store.contents() == expected)
        try store.compact()
        #expect(try store.contents() == expected)
        #expect(store.statistics.deadBytes == 0)
        try store.close()
        #expect(try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs).contents() == expected)
    }

    /// With an automatic policy, sealing segments past the flush bound starts a flush in the
    /// background, and a level reaching the fan-in is merged into the next.
    @Test func theAutomaticPolicyFlushesAndMergesInTheBackground() throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.options()
        options.compaction = LogStore.CompactionPolicy(isAutomatic: true, flushBytes: 32 << 10, mergeFanIn: 2)
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        var expected: [[UInt8]: [UInt8]] = [:]
        var commits = 0
        // Overwrite 200 keys until a merge has run (bounded: it must happen well before).
        while !store.statistics.tables.contains(where: { $0.level >= 1 }) && commits < 5000 {
            let key = bytes("k\(commits % 200)")
            let value = [UInt8](repeating: UInt8(commits % 251), count: 500)
            try store.write { $0.put(key, value) }
            expected[key] = value
            commits += 1
            if commits % 100 == 0 { Thread.sleep(forTimeInterval: 0.001) }
        }
        let statistics = store.statistics
        #expect(statistics.tables.contains { $0.level >= 1 }, "no merge after \(commits) commits")
        #expect(statistics.lastCompaction == nil, "compact() was never called")
        #expect(statistics.segments.count <= 4, "flushed segments are removed")
        #expect(statistics.mergeBytesWritten > 0 && statistics.writeAmplification > 1)
        #expect(try store.contents() == expected)
        try store.close()
        #expect(try LogStore.open(at: Self.dir, options: options, fileSystem: fs).contents() == expected)
    }

    @Test func manualPolicyNeverFlushesOnItsOwn() throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.options()
        options.compaction = LogStore.CompactionPolicy(isAutomatic: false, flushBytes: 0, mergeFanIn: 2)
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        for i in 0..<400 { try store.write { $0.put(bytes("k\(i % 5)"), [UInt8](repeating: 1, count: 500)) } }
        try store.close()
        #expect(!fs.names(in: Self.dir).contains { $0.hasSuffix(".sst") })
    }
}

/// A file system whose next rename onto `MANIFEST`, once armed, takes effect and then reports an
/// error anyway — as a rename can when the disk fails after the directory changed.
final class ManifestRenameLandsThenFails: FileSystem {
    let inner: FaultInjectingFileSystem
    let armed = Locked(false)
    init(_ inner: FaultInjectingFileSystem) { self.inner = inner }
    func createDirectory(_ path: String) throws(EngineError) -> Bool { try inner.createDirectory(path) }
    func listDirectory(_ path: String) throws(EngineError) -> [String] { try inner.listDirectory(path) }
    func openFile(_ path: String, create: Bool) throws(EngineError) -> any StoreFile { try inner.openFile(path, create: create) }
    func openFileForReading(_ path: String) throws(EngineError) -> any StoreFile { try inner.openFileForReading(path) }
    func removeFile(_ path: String) throws(EngineError) { try inner.removeFile(path) }
    func syncDirectory(_ path: String) throws(EngineError) { try inner.syncDirectory(path) }
    func lockFile(_ path: String) throws(EngineError) -> any FileLock { try inner.lockFile(path) }
    func rename(_ from: String, to: String) throws(EngineError) {
        try inner.rename(from, to: to)
        if to.hasSuffix("/MANIFEST"),
            armed.withLock({ armed in
                defer { armed = false }; return armed
            })
        {
            throw EngineError(.io, "rename reported EIO after taking effect", path: from, systemCall: "rename", errno: 5)
        }
    }
}

/// Damage that used to crash or mislead open, and races around the switch (from a review).
@Suite struct CompactionEdgeTests {
    static let dir = "/edge"

    static func compacted(_ fs: FaultInjectingFileSystem, keys: Int = 100) throws -> LogStore.Options {
        var options = LogStore.Options()
        options.compaction = .manual
        let store = try LogStore.open(at: dir, options: options, fileSystem: fs)
        for i in 0..<keys { try store.write { $0.put(bytes("k\(i)"), bytes("v\(i)")) } }
        try store.compact()
        try store.close()
        return options
    }

    /// A manifest that names a table that is not there (a partial restore) fails open with
    /// corruption — and open deletes nothing on its way.
    @Test func aManifestNamingAMissingTableFailsOpenWithoutDeletingAnything() throws {
        let fs = FaultInjectingFileSystem()
        let options = try Self.compacted(fs)
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        try store.write { $0.put(bytes("later"), bytes("1")) }
        try store.close()
        let table = fs.names(in: Self.dir).first { $0.hasSuffix(".sst") }!
        try fs.removeFile(Self.dir + "/" + table)
        let before = Set(fs.names(in: Self.dir))
        #expect {
            try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        } throws: { error in
            (error as? EngineError)?.code == .corruption && (error as? EngineError)?.path == Self.dir + "/" + table
        }
        #expect(Set(fs.names(in: Self.dir)) == before)
    }

    /// A compacted store whose MANIFEST is lost (deleted by hand, a partial restore) must not
    /// have its tables, the only copy of the flushed records, removed as leftovers of an
    /// unfinished flush: open fails as corruption naming the manifest and removes nothing.
    /// Put back, the manifest opens the store whole.
    @Test func aLostManifestFailsOpenWithoutDeletingTheTables() throws {
        let fs = FaultInjectingFileSystem()
        let options = try Self.compacted(fs)
        let manifest = try #require(fs.contents(of: Self.dir + "/MANIFEST"))
        try fs.removeFile(Self.dir + "/MANIFEST")
        let before = Set(fs.names(in: Self.dir))
        #expect(before.contains { $0.hasSuffix(".sst") })
        #expect {
            try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        } throws: { error in
            (error as? EngineError)?.code == .corruption && (error as? EngineError)?.path == Self.dir + "/MANIFEST"
        }
        #expect(Set(fs.names(in: Self.dir)) == before, "nothing removed")
        try fs.openFile(Self.dir + "/MANIFEST", create: true).write(manifest, at: 0)
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        #expect(try store.value(forKey: bytes("k7")) == bytes("v7"))
        #expect(store.statistics.keyCount == 100)
        try store.close()
    }

    /// A rename of the manifest that lands but reports an error leaves the outcome unknown: the
    /// store turns read-only and keeps every file, and the reopened store has everything.
    @Test func aManifestRenameThatLandsButFailsKeepsEveryFile() throws {
        let inner = FaultInjectingFileSystem()
        let fs = ManifestRenameLandsThenFails(inner)
        var options = LogStore.Options()
        options.compaction = .manual
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        for i in 0..<50 { try store.write { $0.put(bytes("k\(i)"), bytes("v\(i)")) } }
        fs.armed.withLock { $0 = true }
        #expect(throws: EngineError.self) { try store.compact() }
        #expect(throws: EngineError.self) { try store.write { $0.put(bytes("after"), bytes("1")) } }
        #expect(try store.value(forKey: bytes("k7")) == bytes("v7"), "reads go on")
        try? store.close()
        let reopened = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        #expect(reopened.statistics.keyCount == 50)
        #expect(try reopened.value(forKey: bytes("k49")) == bytes("v49"))
    }

    /// Commits that roll segments over while compactions run: no segment in use is ever taken
    /// as an input (and deleted), and every acknowledged commit is there after a reopen.
    @Test func rolloversDuringCompactionsLoseNothing() throws {
        let fs = FaultInjectingFileSystem()
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.preallocationSize = 0
        options.compaction = .manual
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        let model = Locked<[[UInt8]: [UInt8]]>([:])
        let stop = Locked(false)
        let errors = Locked<[String]>([])
        onThreads(3) { thread in
            do {
                if thread == 2 {
                    for _ in 0..<30 { try store.compact() }
                    stop.withLock { $0 = true }
                } else {
                    var random = SeededGenerator(seed: UInt64(thread + 1))
                    var i = 0
                    while !stop.withLock({ $0 }) {
                        let key = bytes("w\(thread)/\(i % 5)")
                        let value = random.bytes(20_000)
                        try store.write { $0.put(key, value) }
                        model.withLock { $0[key] = value }
                        i += 1
                    }
                }
            } catch {
                errors.withLock { $0.append("thread \(thread): \(error)") }
                stop.withLock { $0 = true }
            }
        }
        #expect(errors.withLock { $0 } == [])
        let names = Set(fs.names(in: Self.dir))
        let missing = store.statistics.segments.map(\.number).filter { number in
            !names.contains(String(repeating: "0", count: 16 - String(number, radix: 16).count) + String(number, radix: 16) + ".wal")
        }
        #expect(missing == [], "segments in use but gone from disk")
        try store.close()
        let reopened = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        #expect(try reopened.contents() == model.withLock { $0 })
    }
}
