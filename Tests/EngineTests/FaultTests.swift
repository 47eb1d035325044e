#if canImport(Glibc)
    import Glibc
#endif
import Engine
import EngineTestSupport
import Testing

/// EIO and ENOSPC on each write and each sync of a workload: invariants 7 and 8 of ARCHITECTURE.md.
@Suite struct FaultTests {
    static let dir = CrashTests.dir

    /// The contents after committing `batches` to a fresh store.
    static func expected(_ batches: [WriteBatch]) throws -> [[UInt8]: [UInt8]] {
        var options = LogStore.Options()
        options.preallocationSize = 0
        let store = try LogStore.open(at: "/expected", options: options, fileSystem: FaultInjectingFileSystem())
        for batch in batches { try store.commit(batch) }
        return try store.contents()
    }

    static func operations(of kind: FaultInjectingFileSystem.OperationKind) -> [Int] {
        let probe = FaultInjectingFileSystem()
        _ = CrashTests.runUntilCrash(probe, CrashTests.batches(), .durable)
        // Without segment hints, close then records the log's end in the manifest, best effort:
        // a failure there fails nothing, and is left out.
        return probe.operationLog.enumerated().filter { $0.element.kind == kind && !$0.element.path.contains("MANIFEST") }
            .map { $0.offset + 1 }
    }

    @Test(arguments: [EIO, ENOSPC])
    func failedWriteIsCutOffAndTheStoreStaysUsable(errno code: Int32) throws {
        let batches = CrashTests.batches()
        // The workload's last write is close's close frame: failing it fails nothing (close
        // trims the segment and syncs as without it; the commits were durable already).
        let closeFrameWrite = Self.operations(of: .write).last
        for operation in Self.operations(of: .write) {
            let fs = FaultInjectingFileSystem()
            fs.fail(operation, errno: code, partialBytes: 7)
            let store = try? LogStore.open(at: Self.dir, options: CrashTests.options(.durable), fileSystem: fs)
            guard let store else {
                // The first write is the new store's segment header: open itself fails, cleanly.
                #expect(operation == Self.operations(of: .write)[0])
                continue
            }
            var committed: [WriteBatch] = []
            var failures = 0
            var writtenWithoutZeros = false
            for batch in batches {
                let walBefore = fs.names(in: Self.dir).filter { $0.hasSuffix(".wal") }.map { fs.contents(of: Self.dir + "/" + $0)!.count }
                do {
                    try store.commit(batch)
                    committed.append(batch)
                    if store.statistics.preallocationSuspended { writtenWithoutZeros = true }
                } catch {
                    failures += 1
                    #expect(error.code == .io)
                    #expect(error.errno == code)
                    #expect(try store.contents() == Self.expected(committed), "readable and unchanged after write \(operation) failed")
                    let walAfter = fs.names(in: Self.dir).filter { $0.hasSuffix(".wal") }.map { fs.contents(of: Self.dir + "/" + $0)!.count }
                    if walAfter.count == walBefore.count {
                        // Cut back to where the frame began (which also drops preallocated zeros).
                        #expect(zip(walAfter, walBefore).allSatisfy { $0 <= $1 }, "the partial frame is cut off")
                    }
                }
            }
            // ENOSPC on a write that carried preallocated zeros is no failure: the frames are
            // written again without them (the disk may have room for those).
            #expect(
                failures == 1 || (code == ENOSPC && failures == 0 && writtenWithoutZeros)
                    || (operation == closeFrameWrite && failures == 0), "write \(operation)")
            #expect(try store.contents() == Self.expected(committed))
            try store.close()
            fs.powerLoss()
            let reopened = try LogStore.open(at: Self.dir, options: CrashTests.options(.durable), fileSystem: fs)
            #expect(try reopened.contents() == Self.expected(committed), "after reopen, write \(operation) failed")
        }
    }

    @Test(arguments: [EIO, ENOSPC])
    func failedSyncMakesTheStoreReadOnly(errno code: Int32) throws {
        let batches = CrashTests.batches()
        for operation in Self.operations(of: .sync) {
            let fs = FaultInjectingFileSystem()
            fs.fail(operation, errno: code)
            guard let store = try? LogStore.open(at: Self.dir, options: CrashTests.options(.durable), fileSystem: fs) else {
                #expect(operation == Self.operations(of: .sync)[0])
                continue
            }
            var acknowledged: [WriteBatch] = []
            var failed: WriteBatch?
            for batch in batches {
                do {
                    try store.commit(batch)
                    acknowledged.append(batch)
                } catch {
                    if failed == nil {
                        #expect(error.code == .io)
                        #expect(error.errno == code)
                        failed = batch
                    } else {
                        #expect(error.code == .readOnly, "every write after a failed sync is refused")
                    }
                }
            }
            guard let failedBatch = failed else {
                // The workload's last sync is close's (of its close frame): close reports the
                // failure.
                #expect(throws: EngineError.self, "sync \(operation)") { try store.close() }
                continue
            }
            // Reads go on, and show only acknowledged commits.
            #expect(try store.contents() == Self.expected(acknowledged))
            #expect(throws: EngineError.self) { try store.sync() }
            try? store.close()
            // After reopen the failed commit may or may not be there; every acknowledged one is.
            fs.powerLoss()
            let reopened = try LogStore.open(at: Self.dir, options: CrashTests.options(.durable), fileSystem: fs)
            let contents = try reopened.contents()
            let possible = [try Self.expected(acknowledged), try Self.expected(acknowledged + [failedBatch])]
            #expect(possible.contains(contents), "sync \(operation)")
            try reopened.write { $0.put(bytes("writable"), bytes("again")) }
        }
    }

    /// After a failed fsync Linux keeps the pages readable but never writes them. A reopen must
    /// not find the failed commit, or a later durable commit would follow bytes that a power loss
    /// takes, and the log would be unreadable past them.
    @Test func reopenAfterAFailedSyncDoesNotFindTheUnsyncedCommit() throws {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        try store.write { $0.put(bytes("a"), bytes("acknowledged")) }
        fs.failNext(.sync, errno: EIO)
        #expect(throws: EngineError.self) { try store.write { $0.put(bytes("f"), bytes("failed sync")) } }
        try? store.close()
        fs.processCrash()  // no reboot: the page cache survives
        let reopened = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        #expect(try reopened.contents() == [bytes("a"): bytes("acknowledged")])
        try reopened.write { $0.put(bytes("g"), bytes("durable")) }
        try reopened.close()
        fs.powerLoss()
        let afterPowerLoss = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        #expect(try afterPowerLoss.contents() == [bytes("a"): bytes("acknowledged"), bytes("g"): bytes("durable")])
    }

    @Test func writeFailureWhoseCutAlsoFailsMakesTheStoreReadOnly() throws {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        try store.write { $0.put(bytes("a"), bytes("1")) }
        fs.fail(1, errno: EIO, partialBytes: 5)  // the frame's write
        fs.fail(2, errno: EIO)  // the truncate that would cut it off
        #expect(throws: EngineError.self) { try store.write { $0.put(bytes("b"), bytes("2")) } }
        let error = #expect(throws: EngineError.self) { try store.write { $0.put(bytes("c"), bytes("3")) } }
        #expect(error?.code == .readOnly)
        #expect(try store.contents() == [bytes("a"): bytes("1")])
        try? store.close()
        fs.processCrash()
        let reopened = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        #expect(try reopened.contents() == [bytes("a"): bytes("1")])
        #expect(reopened.statistics.recovery.truncatedBytes >= 5, "the 5 bytes that landed are cut off")
    }

    @Test func failedCloseSyncIsReportedInDeferredModes() throws {
        let fs = FaultInjectingFileSystem()
        var options = LogStore.Options()
        options.syncMode = .none
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        try store.write { $0.put(bytes("a"), bytes("1")) }
        fs.failNext(.sync, errno: EIO)
        let error = #expect(throws: EngineError.self) { try store.close() }
        #expect(error?.errno == EIO)
        #expect(throws: EngineError.self) { try store.value(forKey: bytes("a")) }
    }
}
