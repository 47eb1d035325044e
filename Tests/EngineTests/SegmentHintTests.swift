@testable import Engine
import EngineTestSupport
import Testing

/// Sealed segments' hint files: open loads them instead of replaying, gets exactly the state
/// replay gets, and falls back to replay whenever a hint cannot be trusted.
@Suite struct SegmentHintTests {
    static let dir = "/hints"

    /// Small segments so a workload seals several; hints written only when the test asks
    /// (``LogStore/writePendingSegmentHints()``), so every file operation happens at a known point.
    static func options() -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.blockSize = 4 << 10
        options.preallocationSize = 8 << 10
        options.blobThreshold = 3000
        options.compaction = .manual
        options.writesSegmentHints = false
        return options
    }

    static func open(_ fs: FaultInjectingFileSystem) throws -> LogStore {
        try LogStore.open(at: dir, options: options(), fileSystem: fs)
    }

    /// Puts (some large enough to be blobs), overwrites within and across segments, deletes of
    /// present and absent keys: about six sealed segments.
    static func fill(_ store: LogStore, seed: UInt64 = 3) throws -> [[UInt8]: [UInt8]] {
        var random = SeededGenerator(seed: seed)
        var model: [[UInt8]: [UInt8]] = [:]
        for _ in 0..<80 {
            var batch = WriteBatch()
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                let key = bytes("key/\(Int.random(in: 0..<400, using: &random))")
                if Int.random(in: 0..<6, using: &random) == 0 {
                    batch.delete(key)
                    model[key] = nil
                } else {
                    let length = [10, 300, 900, 2500, 4000][Int.random(in: 0...4, using: &random)]
                    let value = random.bytes(length)  // incompressible: the segments fill up
                    batch.put(key, value)
                    model[key] = value
                }
            }
            try store.commit(batch)
        }
        #expect(store.statistics.segments.count >= 5, "the workload must seal several segments")
        return model
    }

    /// What must be the same whether open replayed the segments or read their hints.
    struct Picture: Equatable {
        var contents: [[UInt8]: [UInt8]]
        var segments: [LogStore.Statistics.Segment]
        var keyCount: Int
        var lastSequence: UInt64
        var blobCount: Int

        init(_ store: LogStore) throws {
            contents = try store.contents()
            let statistics = store.statistics
            segments = statistics.segments
            keyCount = statistics.keyCount
            lastSequence = statistics.lastSequence
            blobCount = statistics.blobCount
        }
    }

    static func hintNames(_ fs: FaultInjectingFileSystem) -> [String] {
        fs.names(in: dir).filter { $0.hasSuffix(".walhint") }.sorted()
    }

    /// A store whose sealed segments all have hints, and the picture replay gives of it.
    static func hintedStore() throws -> (FaultInjectingFileSystem, Picture, [[UInt8]: [UInt8]]) {
        let fs = FaultInjectingFileSystem()
        let store = try open(fs)
        let model = try fill(store)
        try store.close()
        let replayed = try open(fs)
        let picture = try Picture(replayed)
        #expect(picture.contents == model)
        #expect(replayed.statistics.recovery.segmentsReplayed == picture.segments.count - 1)
        replayed.writePendingSegmentHints()
        try replayed.close()
        #expect(hintNames(fs).count == picture.segments.count - 1, "one hint per sealed segment")
        return (fs, picture, model)
    }

    @Test func openLoadsSealedSegmentsFromHintsAndSeesWhatReplaySees() throws {
        let (fs, replayed, model) = try Self.hintedStore()
        let store = try Self.open(fs)
        let recovery = store.statistics.recovery
        #expect(recovery.segmentHintsLoaded == replayed.segments.count - 1)
        #expect(recovery.segmentsReplayed == 0)
        #expect(try Picture(store) == replayed, "hints must give the index replay gives, byte counts included")
        // And the store goes on: commits after a hinted open, another reopen.
        try store.write { $0.put(bytes("after"), bytes("hints")) }
        try store.close()
        let again = try Self.open(fs)
        var expected = model
        expected[bytes("after")] = bytes("hints")
        #expect(try again.contents() == expected)
    }

    /// Keys longer than the index's 7-byte prefix that share it (and more), of several lengths,
    /// put, overwritten and deleted in one segment: its hint lists each key once, in byte order,
    /// with its last operation.
    @Test func aHintListsEachKeysLastOperationInByteOrderWhenKeysShareLongPrefixes() throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.options()
        options.segmentSize = 4 << 20
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        var random = SeededGenerator(seed: 11)
        // The last operation per key: its sequence, and whether it was a put.
        var last: [[UInt8]: (sequence: UInt64, put: Bool)] = [:]
        for _ in 0..<40 {
            var batch = WriteBatch()
            var ops: [([UInt8], Bool)] = []
            for _ in 0..<50 {
                let key = bytes("entity/records/") + random.bytes(Int.random(in: 0...2, using: &random)).map { $0 % 3 }
                let put = Int.random(in: 0..<4, using: &random) != 0
                if put { batch.put(key, random.bytes(20)) } else { batch.delete(key) }
                ops.append((key, put))
            }
            let sequence = try store.commit(batch)
            for (key, put) in ops { last[key] = (sequence, put) }
        }
        let file = try fs.openFile(Self.dir + "/" + SegmentFile.name(1), create: false)
        let hint = try SegmentHint.build(from: file, number: 1)
        let expectedPuts = last.filter { $0.value.put }.keys.sorted { $0.lexicographicallyPrecedes($1) }
        let expectedDeletes = last.filter { !$0.value.put }.keys.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(hint.puts.map(\.key) == expectedPuts)
        #expect(hint.deletes.map(\.key) == expectedDeletes)
        for entry in hint.puts { #expect(entry.location.sequence == last[entry.key]?.sequence) }
        for delete in hint.deletes { #expect(delete.sequence == last[delete.key]?.sequence) }
        try store.close()
    }

    @Test func aRolloverQueuesTheSealedSegmentsHint() throws {
        let fs = FaultInjectingFileSystem()
        let store = try Self.open(fs)
        let model = try Self.fill(store)
        #expect(Self.hintNames(fs).isEmpty, "writesSegmentHints = false: nothing is written on its own")
        store.writePendingSegmentHints()
        let sealed = store.statistics.segments.dropLast().map { SegmentHint.name($0.number) }
        #expect(Self.hintNames(fs) == sealed)
        #expect(
            store.statistics.bytesOnDisk > store.statistics.segments.reduce(0) { $0 + $1.bytesOnDisk },
            "hint files count in bytesOnDisk")
        try store.close()
        let reopened = try Self.open(fs)
        #expect(reopened.statistics.recovery.segmentsReplayed == 0)
        #expect(try reopened.contents() == model)
    }

    /// Every kind of damage a hint can suffer makes open replay that segment and get the same
    /// state; the hint is then written again (but a hint of another version is left alone).
    @Test func aHintThatFailsAnyCheckIsIgnoredAndItsSegmentReplayed() throws {
        let (base, replayed, _) = try Self.hintedStore()
        let name = Self.hintNames(base)[1]
        let path = Self.dir + "/" + name
        let original = try #require(base.contents(of: path))
        let number = try #require(SegmentHint.number(fromName: name))
        let segmentLength = UInt64(try #require(base.contents(of: Self.dir + "/" + SegmentFile.name(number))).count)
        let first: UInt64 = try #require(Self.decodedFirstSequence(original))
        let hint = try SegmentHint.load(
            try base.clone().openFile(path, create: false), number: number, fileSize: segmentLength, isNewest: false,
            firstSequence: first)

        var damaged: [(String, [UInt8])] = []
        for offset in [0, 9, 13, 21, 29, 37, 45, 53, 61, 64, 70, original.count / 2, original.count - 5, original.count - 1] {
            var bytes = original
            bytes[offset] ^= 0x10
            damaged.append(("bit flipped at \(offset)", bytes))
        }
        damaged.append(("cut to 40 bytes", Array(original.prefix(40))))
        damaged.append(("cut by one byte", Array(original.dropLast())))
        damaged.append(("empty", []))
        // Well-formed (checksummed) hints that describe something else.
        var other = hint
        other.coveredLength -= 1
        damaged.append(("less than the sealed segment", other.encoded()))
        other = hint
        other.firstSequence += 1
        for index in other.puts.indices { other.puts[index].location.sequence += 1 }
        for index in other.deletes.indices { other.deletes[index].sequence += 1 }
        damaged.append(("a first sequence that does not follow", other.encoded()))
        other = hint
        other.segment += 1
        damaged.append(("another segment's number", other.encoded()))
        other = hint
        other.puts.swapAt(0, 1)
        damaged.append(("keys out of order", other.encoded()))
        other = hint
        other.recordBytes = 1
        damaged.append(("fewer record bytes than its entries", other.encoded()))
        other = hint
        other.recordBytes = 1 << 63  // made open trap converting it to Int before the bound
        damaged.append(("more record bytes than the segment could inflate to", other.encoded()))
        other = hint
        other.puts[0].location.blockOffset = segmentLength
        damaged.append(("a block outside the segment", other.encoded()))
        var foreign = other.encoded()
        foreign.replaceSubrange(0..<8, with: bytes("WALSHINT"))
        damaged.append(("a pack hint's magic", foreign))

        for (label, bytes) in damaged {
            let fs = base.clone()
            fs.setContents(bytes, of: path)
            let store = try Self.open(fs)
            #expect(store.statistics.recovery.segmentsReplayed == 1, "\(label)")
            #expect(try Picture(store) == replayed, "\(label)")
            store.writePendingSegmentHints()
            let rewritten = fs.contents(of: path) == original  // compared apart: a failure prints no bytes
            #expect(rewritten, "\(label): the hint is written again")
            try store.close()
        }
    }

    /// Compaction replaces the sealed segments and their hints; a hint left over (a crash before
    /// its removal) describes no segment of the log and open removes it, as it does a temporary
    /// hint.
    @Test func hintsOfReplacedOrNewestSegmentsAndTemporaryOnesAreRemoved() throws {
        let (fs, _, model) = try Self.hintedStore()
        let stale = Self.hintNames(fs)
        let store = try Self.open(fs)
        try store.compact()
        #expect(Self.hintNames(fs).isEmpty, "compaction removes the hints of the segments it replaced")
        try store.close()
        // Put back what a crash could leave: the old hints, a temporary one, one beside the newest.
        let newest = try #require(fs.names(in: Self.dir).compactMap(SegmentFile.number(fromName:)).max())
        let leftovers = stale + [SegmentHint.name(newest) + "-tmp"]
        for name in leftovers {
            try fs.openFile(Self.dir + "/" + name, create: true).write([1, 2, 3], at: 0)
        }
        #expect(Self.hintNames(fs).count == stale.count)
        let reopened = try Self.open(fs)
        #expect(reopened.statistics.recovery.removedLeftovers == leftovers.count)
        #expect(Self.hintNames(fs).isEmpty)
        #expect(try reopened.contents() == model)
    }

    /// Power loss at every file operation of writing the hints: the store opens whole each time,
    /// from whatever hints are complete and by replay for the rest.
    @Test func powerLossAtEveryOperationOfHintWritingLosesNothing() throws {
        let base = FaultInjectingFileSystem()
        let store = try Self.open(base)
        let model = try Self.fill(store, seed: 9)
        try store.close()
        base.powerLoss()  // everything the store wrote was synced: nothing is lost here
        let probe = base.clone()
        let counting = try Self.open(probe)
        let before = probe.operationCount
        counting.writePendingSegmentHints()
        let operations = probe.operationCount - before
        try counting.close()
        #expect(operations > 10)
        for crashAt in 1...operations {
            let fs = base.clone()
            let writer = try Self.open(fs)
            fs.crash(atOperation: crashAt)
            writer.writePendingSegmentHints()
            fs.powerLoss()
            let reopened = try Self.open(fs)
            let recovery = reopened.statistics.recovery
            #expect(try reopened.contents() == model, "power loss at operation \(crashAt)")
            #expect(recovery.segmentHintsLoaded + recovery.segmentsReplayed == reopened.statistics.segments.count - 1)
            try reopened.close()
        }
    }

    /// A hint's first sequence, read from its header (bytes 36..<44).
    static func decodedFirstSequence(_ bytes: [UInt8]) -> UInt64? {
        guard bytes.count >= 44 else { return nil }
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[36 + $1]) << (8 * UInt64($1)) }
    }

    /// A hint's covered length, read from its header (bytes 20..<28).
    static func decodedCoveredLength(_ bytes: [UInt8]) -> UInt64? {
        guard bytes.count >= 28 else { return nil }
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[20 + $1]) << (8 * UInt64($1)) }
    }

    // MARK: The newest segment

    /// Options that write hints as an app's store does (the background job included), in one
    /// segment large enough that nothing rolls over.
    static func appOptions(_ mode: LogStore.SyncMode = .durable) -> LogStore.Options {
        var options = LogStore.Options()
        options.syncMode = mode
        options.compaction = .manual
        return options
    }

    static func commitBatches(_ store: LogStore, _ range: Range<Int>, into model: inout [[UInt8]: [UInt8]]) throws {
        for round in range {
            try store.write { batch in
                for index in 0..<20 {
                    let key = bytes("k\((round * 7 + index) % 150)")
                    let value = bytes("round \(round) value \(index) " + String(repeating: "x", count: round % 50))
                    batch.put(key, value)
                    model[key] = value
                }
                if round % 5 == 0 {
                    batch.delete(bytes("k\(round % 150)"))
                    model[bytes("k\(round % 150)")] = nil
                }
            }
        }
    }

    /// A clean close leaves a hint of the active segment: the next open replays nothing. After a
    /// crash, open loads that hint and replays only the frames written since; the next clean close
    /// extends the hint.
    @Test func openAfterACleanCloseReplaysNothingAndAfterACrashOnlyWhatFollowedIt() throws {
        let fs = FaultInjectingFileSystem()
        var model: [[UInt8]: [UInt8]] = [:]
        let store = try LogStore.open(at: Self.dir, options: Self.appOptions(), fileSystem: fs)
        try Self.commitBatches(store, 0..<60, into: &model)
        try store.close()
        #expect(Self.hintNames(fs) == [SegmentHint.name(1)])

        let clean = try LogStore.open(at: Self.dir, options: Self.appOptions(), fileSystem: fs)
        #expect(clean.statistics.recovery.replayedBytes == 0)
        #expect(clean.statistics.recovery.segmentHintsLoaded == 1)
        #expect(try clean.contents() == model)
        let before = fs.contents(of: Self.dir + "/" + SegmentFile.name(1))!.count
        try Self.commitBatches(clean, 60..<90, into: &model)
        let appended = fs.contents(of: Self.dir + "/" + SegmentFile.name(1))!.count - before
        fs.processCrash()  // killed: no close, no new hint

        let crashed = try LogStore.open(at: Self.dir, options: Self.appOptions(), fileSystem: fs)
        let replayed = crashed.statistics.recovery.replayedBytes
        #expect(replayed > 0 && replayed <= UInt64(appended), "only the frames after the hint are replayed")
        #expect(crashed.statistics.recovery.segmentHintsLoaded == 1)
        #expect(try crashed.contents() == model)
        try Self.commitBatches(crashed, 90..<100, into: &model)
        try crashed.close()

        let again = try LogStore.open(at: Self.dir, options: Self.appOptions(), fileSystem: fs)
        #expect(again.statistics.recovery.replayedBytes == 0, "the close extended the hint")
        #expect(try again.contents() == model)
    }

    /// Close writes the hints the background job had not reached yet: after a clean close, open
    /// replays no frame at all, however many segments were sealed just before it.
    @Test func afterACleanCloseOpenReplaysNothingEvenRightAfterRollovers() throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.appOptions()
        options.segmentSize = 64 << 10
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        let model = try Self.fill(store)
        try store.close()
        let reopened = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        #expect(reopened.statistics.recovery.segmentsReplayed == 0)
        #expect(reopened.statistics.recovery.replayedBytes == 0)
        #expect(reopened.statistics.recovery.segmentHintsLoaded == reopened.statistics.segments.count)
        #expect(try reopened.contents() == model)
    }

    /// In `.none` mode the close hint covers only synced frames; commits after it that a power
    /// loss takes leave the hint valid, and open restores at least the closed state.
    @Test func aPowerLossAfterTheCloseHintKeepsAtLeastTheClosedState() throws {
        let fs = FaultInjectingFileSystem()
        var model: [[UInt8]: [UInt8]] = [:]
        let store = try LogStore.open(at: Self.dir, options: Self.appOptions(.none), fileSystem: fs)
        try Self.commitBatches(store, 0..<40, into: &model)
        try store.close()
        let closed = model
        let reopened = try LogStore.open(at: Self.dir, options: Self.appOptions(.none), fileSystem: fs)
        try Self.commitBatches(reopened, 40..<70, into: &model)
        fs.powerLoss()  // the unsynced commits are gone
        let recovered = try LogStore.open(at: Self.dir, options: Self.appOptions(.none), fileSystem: fs)
        #expect(recovered.statistics.recovery.segmentHintsLoaded == 1)
        #expect(try recovered.contents() == closed)
    }

    /// A whole, checksummed hint records frames that were durable before it was written: beside
    /// a segment that lacks them (another segment of the same number, cut short, or missing the
    /// frame the hint names last) it is evidence of loss, not a stale file. Open reports
    /// corruption and changes nothing: neither the segment is cut nor the hint rewritten.
    @Test func aWholeHintItsSegmentContradictsIsCorruptionAndNothingChanges() throws {
        let fs = FaultInjectingFileSystem()
        var model: [[UInt8]: [UInt8]] = [:]
        let store = try LogStore.open(at: Self.dir, options: Self.appOptions(), fileSystem: fs)
        try Self.commitBatches(store, 0..<30, into: &model)
        try store.close()
        let segment = Self.dir + "/" + SegmentFile.name(1)
        let original = try #require(fs.contents(of: segment))

        let other = FaultInjectingFileSystem()
        var otherModel: [[UInt8]: [UInt8]] = [:]
        let otherStore = try LogStore.open(at: Self.dir, options: Self.appOptions(), fileSystem: other)
        try Self.commitBatches(otherStore, 5..<45, into: &otherModel)
        try otherStore.close()
        let replacement = try #require(other.contents(of: segment))
        #expect(replacement.count >= original.count)

        // The close frame is past the hint's covered bytes: cut it and the last commit's tail.
        let hintPath = Self.dir + "/" + SegmentHint.name(1)
        let hintBytes = try #require(fs.contents(of: hintPath))
        let covered = Int(try #require(Self.decodedCoveredLength(hintBytes)))
        for (label, bytes) in [
            ("another segment of the same number", replacement),
            ("cut inside the last frame the hint describes", Array(original.prefix(covered - 1))),
            ("cut at the hint's last frame", Array(original.prefix(covered - 40))),
        ] {
            let damaged = fs.clone()
            damaged.setContents(bytes, of: segment)
            let before = VersionRuleTests.snapshot(damaged, dir: Self.dir)
            let error = #expect(throws: EngineError.self, "\(label)") {
                try LogStore.open(at: Self.dir, options: Self.appOptions(), fileSystem: damaged)
            }
            #expect(error?.code == .corruption, "\(label)")
            #expect(error?.path == segment, "\(label)")
            let unchanged = VersionRuleTests.snapshot(damaged, dir: Self.dir) == before
            #expect(unchanged, "\(label): open changed the store's files")
        }
    }
}
