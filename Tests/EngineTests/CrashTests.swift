import Engine
import EngineTestSupport
import Testing

/// Crash at every I/O operation of a scripted workload, reopen, and check invariants 1–3 of
/// ARCHITECTURE.md: every commit present entirely or not at all, every acknowledged durable commit
/// present, and the recovered state a prefix of the commit order.
@Suite struct CrashTests {
    static let dir = "/crash"

    /// The scripted workload: commits of a few records each, with overwrites, deletes, one commit
    /// large enough to span blocks, and enough bytes to roll over small segments.
    static func batches() -> [WriteBatch] {
        var random = SeededGenerator(seed: 7)
        var result: [WriteBatch] = []
        for i in 0..<14 {
            var batch = WriteBatch()
            let large = i == 4 || i == 8  // incompressible, many blocks, rolls 64 KiB segments over
            for j in 0..<(large ? 40 : 1 + i % 3) {
                let key = bytes("k\((i * 3 + j) % 9)" + (large ? "-\(j)" : ""))
                if i % 5 == 3 && j == 0 {
                    batch.delete(bytes("k\(i % 9)"))
                } else if large {
                    batch.put(key, random.bytes(1000))
                } else {
                    batch.put(key, random.bytes(40 + 20 * j).map { 97 + $0 % 20 })
                }
            }
            result.append(batch)
        }
        return result
    }

    /// The state after each prefix of `batches`: `states[n]` is the contents after n commits.
    static func prefixStates(_ batches: [WriteBatch]) throws -> [[[UInt8]: [UInt8]]] {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: "/reference", options: options(.durable), fileSystem: fs)
        var states = [try store.contents()]
        for batch in batches {
            try store.commit(batch)
            states.append(try store.contents())
        }
        return states
    }

    static func options(_ mode: LogStore.SyncMode) -> LogStore.Options {
        var options = LogStore.Options()
        options.syncMode = mode
        options.segmentSize = 64 << 10
        options.blockSize = 4 << 10
        options.preallocationSize = 8 << 10  // small, so every segment preallocates several times
        // Segment hints are written by a background job whose file operations would interleave
        // with the counted ones; SegmentHintTests injects faults into hint writing on its own.
        options.writesSegmentHints = false
        return options
    }

    /// Runs the workload until the file system stops it; returns (acknowledged, attempted) commits.
    static func runUntilCrash(
        _ fs: FaultInjectingFileSystem, _ batches: [WriteBatch], _ mode: LogStore.SyncMode, preallocate: Bool = true
    ) -> (Int, Int) {
        var acknowledged = 0
        var options = options(mode)
        if !preallocate { options.preallocationSize = 0 }
        guard let store = try? LogStore.open(at: dir, options: options, fileSystem: fs) else { return (0, 0) }
        for batch in batches {
            do {
                try store.commit(batch)
                acknowledged += 1
            } catch {
                return (acknowledged, acknowledged + 1)
            }
        }
        return (acknowledged, acknowledged)
    }

    /// Reopens after a crash and checks the recovered state against the prefix states.
    static func checkRecovery(
        _ fs: FaultInjectingFileSystem, states: [[[UInt8]: [UInt8]]], acknowledged: Int, attempted: Int,
        mode: LogStore.SyncMode, label: String
    ) throws {
        let store = try LogStore.open(at: dir, options: options(mode), fileSystem: fs)
        let recovered = Int(store.statistics.lastSequence)
        let lowest = mode == .durable ? acknowledged : 0
        #expect(
            (lowest...attempted).contains(recovered), "\(label): recovered \(recovered) commits, acknowledged \(acknowledged), attempted \(attempted)"
        )
        guard recovered < states.count else { return }
        #expect(try store.contents() == states[recovered], "\(label): contents are not the state after \(recovered) commits")
        // The log must be appendable where recovery left it.
        try store.write { $0.put(bytes("after-recovery"), bytes(label)) }
        try store.close()
        let again = try LogStore.open(at: dir, options: options(mode), fileSystem: fs)
        var expected = states[recovered]
        expected[bytes("after-recovery")] = bytes(label)
        #expect(try again.contents() == expected, "\(label): second reopen")
        try again.close()
    }

    static func operationCount(_ batches: [WriteBatch], _ mode: LogStore.SyncMode) -> Int {
        let fs = FaultInjectingFileSystem()
        _ = runUntilCrash(fs, batches, mode)
        return fs.operationCount
    }

    @Test(arguments: [LogStore.SyncMode.durable, .none])
    func powerLossAfterEveryOperationKeepsAPrefixWithEveryAcknowledgedCommit(mode: LogStore.SyncMode) throws {
        let batches = Self.batches()
        let states = try Self.prefixStates(batches)
        let total = Self.operationCount(batches, mode)
        #expect(total > 15)
        for crashAt in 1...total + 1 {
            let fs = FaultInjectingFileSystem()
            fs.crash(atOperation: crashAt)
            let (acknowledged, attempted) = Self.runUntilCrash(fs, batches, mode)
            fs.powerLoss()
            try Self.checkRecovery(
                fs, states: states, acknowledged: acknowledged, attempted: attempted, mode: mode,
                label: "power loss at operation \(crashAt) (\(mode))")
        }
    }

    /// A write cut short at every byte (the process killed mid-write, the partial bytes kept):
    /// open cuts the partial frame off and the log stays appendable. Writes over 2 KiB are cut at
    /// every byte of their first and last 200 bytes and every 61st byte between. Preallocation is
    /// off here so that every write appends (a frame torn inside preallocated space has a test of
    /// its own).
    @Test func tornWriteAtEveryByteIsCutOffOnOpen() throws {
        let batches = Self.batches()
        let states = try Self.prefixStates(batches)
        let probe = FaultInjectingFileSystem()
        _ = Self.runUntilCrash(probe, batches, .durable, preallocate: false)
        // The log's writes (close's best-effort record of the log's end in the manifest aside).
        let writes = probe.operationLog.enumerated().filter { $0.element.kind == .write && !$0.element.path.contains("MANIFEST") }
            .map { $0.offset + 1 }
        #expect(writes.count == 17)  // two segment headers, fourteen frames and close's close frame
        var checked = 0
        for operation in writes {
            // The file system just before the write, and the file as the whole write leaves it.
            let before = FaultInjectingFileSystem()
            before.crash(atOperation: operation)
            let (acknowledged, _) = Self.runUntilCrash(before, batches, .durable, preallocate: false)
            before.processCrash()
            let whole = FaultInjectingFileSystem()
            whole.crash(atOperation: operation, tornWriteBytes: Int.max)
            _ = Self.runUntilCrash(whole, batches, .durable, preallocate: false)
            let path = probe.operationLog[operation - 1].path
            let start = before.contents(of: path) ?? []
            let full = whole.contents(of: path)!
            #expect(Array(full.prefix(start.count)) == start, "writes append")
            let size = full.count - start.count
            let cuts = size <= 2048 ? Array(0..<size) : Array(0..<200) + Array(stride(from: 200, to: size - 200, by: 61)) + Array(size - 200..<size)
            for cut in cuts {
                let fs = before.clone()
                fs.setContents(Array(full.prefix(start.count + cut)), of: path)
                let label = "write \(operation) (\(path)) cut at byte \(cut) of \(size)"
                let store = try LogStore.open(at: Self.dir, options: Self.options(.durable), fileSystem: fs)
                // The torn bytes are gone from the file itself, not just skipped: the next append's
                // zeros would otherwise hide a missing truncation. (A torn segment header makes
                // open write the header anew.)
                let cutTo = start.isEmpty ? FormatTesting.segmentHeaderSize : start.count
                #expect(fs.contents(of: path)?.count == cutTo, "\(label): the file was not cut back")
                #expect(Int(store.statistics.lastSequence) == acknowledged, "\(label)")
                #expect(try store.contents() == states[acknowledged], "\(label)")
                #expect(store.statistics.recovery.truncatedBytes == UInt64(cut), "\(label)")
                try store.write { $0.put(bytes("after"), bytes("x")) }
                try store.close()
                var expected = states[acknowledged]
                expected[bytes("after")] = bytes("x")
                #expect(try LogStore.open(at: Self.dir, options: Self.options(.durable), fileSystem: fs).contents() == expected, "\(label)")
                checked += 1
            }
        }
        #expect(checked > 2000)
    }

    /// Frames a killed process left in the page cache are synced by the next open, before any new
    /// frame: otherwise a later durable commit (here in a new segment) could survive a power loss
    /// that takes them.
    @Test func openSyncsFramesRecoveredFromThePageCache() throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.options(.none)
        options.compressionLevel = 0
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        // 62 frames of 1,063 bytes: past 64 KiB, so the next commit (after the reopen) rolls over.
        for i in 0..<62 { try store.write { $0.put(bytes("k\(i)"), [UInt8](repeating: 1, count: 1000)) } }
        #expect(store.statistics.segments.count == 1)
        fs.processCrash()
        options.syncMode = .durable
        let reopened = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        try reopened.write { $0.put(bytes("after"), bytes("x")) }  // rolls over to segment 2
        #expect(reopened.statistics.segments.count == 2)
        fs.powerLoss()
        let recovered = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        #expect(recovered.statistics.lastSequence == 63)
        #expect(try recovered.contents().count == 63)
    }

    @Test func frameTornInsidePreallocatedSpaceIsCutOnOpen() throws {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: Self.dir, options: Self.options(.durable), fileSystem: fs)
        try store.write { $0.put(bytes("a"), bytes("1")) }
        let path = Self.dir + "/0000000000000001.wal"
        try store.write { $0.put(bytes("b"), bytes("2")) }
        let withTwo = fs.contents(of: path)!
        #expect(withTwo.count >= 8 << 10, "the segment is preallocated")
        fs.processCrash()
        // Zero the second frame's last bytes, as a crash would leave a write cut short.
        let zeroAt = withTwo.lastIndex { $0 != 0 }!
        var torn = withTwo
        for i in (zeroAt - 3)...zeroAt { torn[i] = 0 }
        fs.setContents(torn, of: path)
        let reopened = try LogStore.open(at: Self.dir, options: Self.options(.durable), fileSystem: fs)
        #expect(try reopened.contents() == [bytes("a"): bytes("1")])
        #expect(reopened.statistics.recovery.truncatedBytes > 0)
        try reopened.write { $0.put(bytes("c"), bytes("3")) }
        try reopened.close()
        #expect(
            try LogStore.open(at: Self.dir, options: Self.options(.durable), fileSystem: fs).contents() == [
                bytes("a"): bytes("1"), bytes("c"): bytes("3"),
            ])
    }

    @Test func preallocatedZerosAreTheCleanEndOfTheLogAndAreTrimmedOnClose() throws {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: Self.dir, options: Self.options(.durable), fileSystem: fs)
        try store.write { $0.put(bytes("a"), bytes("1")) }
        let path = Self.dir + "/0000000000000001.wal"
        #expect(fs.contents(of: path)!.count > 8 << 10)
        fs.processCrash()  // killed with the zeros in place
        let reopened = try LogStore.open(at: Self.dir, options: Self.options(.durable), fileSystem: fs)
        #expect(reopened.statistics.recovery.truncatedBytes == 0, "zeros are not a torn tail")
        #expect(try reopened.contents() == [bytes("a"): bytes("1")])
        try reopened.close()
        #expect(fs.contents(of: path)!.count < 200, "close trims the preallocated space")
    }

    @Test func zerosAfterTheLastFrameAreNotATornTail() throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.options(.durable)
        options.preallocationSize = 0
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        try store.write { $0.put(bytes("a"), bytes("1")) }
        try store.close()
        let path = Self.dir + "/0000000000000001.wal"
        let good = fs.contents(of: path)!
        // The file grew but its data never reached the disk: zeros, read as preallocated space.
        fs.setContents(good + [UInt8](repeating: 0, count: 300), of: path)
        let reopened = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        #expect(try reopened.contents() == [bytes("a"): bytes("1")])
        #expect(reopened.statistics.recovery.truncatedBytes == 0)
        try reopened.write { $0.put(bytes("b"), bytes("2")) }
        try reopened.close()
        #expect(try LogStore.open(at: Self.dir, options: options, fileSystem: fs).contents().count == 2)
    }

}
