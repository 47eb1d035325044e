@testable import Engine
import EngineTestSupport
import Testing

/// `LogStore.salvage(at:)`: each kind of damage that makes open refuse a store, salvaged and
/// checked against what the damage destroyed: the longest intact prefix of the commit order and
/// every intact table block are kept, every damaged or dropped byte is under `quarantine/`, and the
/// report names the commits and keys lost.
@Suite struct SalvageTests {
    static let dir = "/salvage"

    static func options() -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.compaction = .manual
        options.compressionLevel = 0
        options.blockSize = 4096
        return options
    }

    /// The model after each commit, by sequence (index 0: empty).
    typealias History = [[[UInt8]: [UInt8]]]

    /// `rounds` commits of 10 keys each (300-byte values) starting at round `from`, recorded in
    /// `history`.
    static func commit(_ store: LogStore, rounds: Range<Int>, tag: String, into history: inout History) throws {
        for round in rounds {
            var model = history.last!
            try store.write { batch in
                for index in 0..<10 {
                    let key = bytes("\(tag)\(round)-\(index)")
                    let value = [UInt8](repeating: UInt8(truncatingIfNeeded: round + index), count: 300)
                    batch.put(key, value)
                    model[key] = value
                }
            }
            history.append(model)
        }
    }

    /// A store of several segments, cleanly closed; with `compacted`, the first commits are in
    /// a table (named by the manifest) and later ones in segments.
    static func store(compacted: Bool = false, options: LogStore.Options = options()) throws -> (FaultInjectingFileSystem, History) {
        let fs = FaultInjectingFileSystem()
        var history: History = [[:]]
        let store = try LogStore.open(at: dir, options: options, fileSystem: fs)
        try commit(store, rounds: 0..<40, tag: "a", into: &history)
        if compacted { try store.compact() }
        try commit(store, rounds: 40..<80, tag: "b", into: &history)
        store.writePendingSegmentHints()
        try store.close()
        return (fs, history)
    }

    static func contents(_ fs: FaultInjectingFileSystem) throws -> [[UInt8]: [UInt8]] {
        let store = try LogStore.open(at: dir, options: options(), fileSystem: fs)
        defer { try? store.close() }
        return try store.contents()
    }

    /// The error of opening the store and reading every value (damage beneath a hint is found
    /// when its value is read), if any.
    static func openError(_ fs: FaultInjectingFileSystem) -> EngineError? {
        do throws(EngineError) {
            let store = try LogStore.open(at: dir, options: options(), fileSystem: fs)
            defer { try? store.close() }
            var cursor = try store.scan()
            while let entry = try cursor.next() { _ = try entry.value() }
            return nil
        } catch {
            return error
        }
    }

    static func segments(_ fs: FaultInjectingFileSystem) -> [String] {
        fs.names(in: dir).filter { $0.hasSuffix(".wal") }.sorted()
    }

    /// Offsets of the frames of a segment's bytes.
    static func frameOffsets(_ segment: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var offset = FormatTesting.segmentHeaderSize
        while offset + FormatTesting.frameHeaderSize <= segment.count {
            offsets.append(offset)
            let length = (0..<4).reduce(0) { $0 | Int(segment[offset + 8 + $1]) << (8 * $1) }
            offset += FormatTesting.frameHeaderSize + length
        }
        return offsets
    }

    /// Every quarantined range holds exactly the bytes the damaged file had there.
    static func checkQuarantine(_ report: LogStore.SalvageReport, against original: [String: [UInt8]], in fs: FaultInjectingFileSystem) {
        for entry in report.quarantined {
            let saved = fs.contents(of: dir + "/" + entry.savedAs)
            let before = original[entry.file].map { Array($0[Int(entry.range.lowerBound)..<Int(entry.range.upperBound)]) }
            #expect(saved != nil && saved == before, "\(entry.file) \(entry.range) saved as \(entry.savedAs)")
        }
    }

    static func files(_ fs: FaultInjectingFileSystem) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in fs.names(in: dir) { files[name] = fs.contents(of: dir + "/" + name) }
        for name in fs.names(in: dir + "/blobs") { files["blobs/" + name] = fs.contents(of: dir + "/blobs/" + name) }
        return files
    }

    @Test(arguments: [true, false])
    func aStoreWithoutDamageIsLeftAsItIs(segmentHints: Bool) throws {
        var options = Self.options()
        options.writesSegmentHints = segmentHints
        let (fs, history) = try Self.store(compacted: true, options: options)
        let report = try LogStore.salvage(at: Self.dir, options: options, fileSystem: fs)
        #expect(report.isClean)
        #expect(report.lostSequences == nil, "the hints and the recorded log end name no commit the log lacks")
        #expect(report.lastKeptSequence == UInt64(history.count - 1))
        #expect(try Self.contents(fs) == history.last!)
    }

    @Test func salvageRefusesAnOpenStoreAndADirectoryWithoutOne() throws {
        let (fs, _) = try Self.store()
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        let locked = #expect(throws: EngineError.self) { try LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: fs) }
        #expect(locked?.code == .locked)
        try store.close()
        let missing = #expect(throws: EngineError.self) {
            try LogStore.salvage(at: "/nothing-here", options: Self.options(), fileSystem: fs)
        }
        #expect(missing?.code == .notFound)
    }

    /// The sequence of the frame at `offset` of a segment's bytes.
    static func sequence(ofFrameAt offset: Int, in segment: [UInt8]) -> Int {
        (0..<8).reduce(0) { $0 | Int(segment[offset + 12 + $1]) << (8 * $1) }
    }

    /// The keys commit `sequence` wrote (each round writes keys of its own).
    static func keys(ofCommit sequence: Int, _ history: History) -> Set<[UInt8]> {
        Set(history[sequence].keys).subtracting(history[sequence - 1].keys)
    }

    /// The last model without the keys of the commits `lost`.
    static func model(_ history: History, without lost: ClosedRange<Int>) -> [[UInt8]: [UInt8]] {
        var model = history.last!
        for sequence in lost { for key in keys(ofCommit: sequence, history) { model[key] = nil } }
        return model
    }

    /// A durable commit damaged in the middle of the newest segment: open refuses (a later frame
    /// shows it was durable); salvage keeps every other commit, before and after it, sets the
    /// damaged frame aside and reports its commit and keys (which the segment hint records).
    @Test func aDamagedFrameInTheNewestSegmentCostsOnlyItsCommit() throws {
        let (fs, history) = try Self.store()
        let newest = try #require(Self.segments(fs).last)
        let path = Self.dir + "/" + newest
        let segment = try #require(fs.contents(of: path))
        let frames = Self.frameOffsets(segment)
        let damaged = frames[frames.count / 2]
        let lost = Self.sequence(ofFrameAt: damaged, in: segment)
        fs.flipBit(in: path, atByte: damaged + FormatTesting.frameHeaderSize + 40)
        let original = Self.files(fs)
        let error = try #require(Self.openError(fs))
        #expect(error.code == .corruption)
        #expect(error.message.contains("LogStore.salvage(at:)"))

        let report = try LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(try Self.contents(fs) == Self.model(history, without: lost...lost))
        #expect(report.lastKeptSequence == UInt64(history.count - 1))
        #expect(report.lostSequenceRanges == [UInt64(lost)...UInt64(lost)])
        #expect(report.laterCommitsMayDependOnLostOnes)
        #expect(report.quarantined.map(\.file) == [newest])
        #expect(report.quarantined.first?.range == UInt64(damaged)..<UInt64(frames[frames.count / 2 + 1]))
        Self.checkQuarantine(report, against: original, in: fs)
        #expect(Set(report.lostKeys) == Self.keys(ofCommit: lost, history))
        #expect(report.lostSequencesWithUnknownKeys.isEmpty)
    }

    /// Damage in a sealed segment: the commits after it, in that segment and every later one,
    /// are kept, and the salvaged store takes commits again.
    @Test func aDamagedFrameInASealedSegmentCostsOnlyItsCommit() throws {
        let (fs, history) = try Self.store()
        let names = Self.segments(fs)
        #expect(names.count >= 3)
        let path = Self.dir + "/" + names[1]
        let segment = try #require(fs.contents(of: path))
        let frames = Self.frameOffsets(segment)
        let lost = Self.sequence(ofFrameAt: frames[2], in: segment)
        fs.flipBit(in: path, atByte: frames[2] + FormatTesting.frameHeaderSize + 40)
        let original = Self.files(fs)
        #expect(Self.openError(fs)?.code == .corruption)

        let report = try LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(try Self.contents(fs) == Self.model(history, without: lost...lost))
        #expect(report.quarantined.map(\.file) == [names[1]])
        #expect(report.quarantined.first?.range == UInt64(frames[2])..<UInt64(frames[3]))
        Self.checkQuarantine(report, against: original, in: fs)
        #expect(report.lostSequenceRanges == [UInt64(lost)...UInt64(lost)])
        #expect(report.lastKeptSequence == UInt64(history.count - 1))
        // And the salvaged store takes commits again.
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        try store.write { $0.put(bytes("after"), bytes("salvage")) }
        try store.close()
        #expect(try Self.contents(fs)[bytes("after")] == bytes("salvage"))
    }

    /// A damaged table — a data block, the footer, the top-level index, an index partition, a
    /// filter partition, the file cut inside a block or at a block boundary — is rewritten from
    /// every intact data block (found by the index, or by walking the blocks when the footer or
    /// an index is unreadable): every entry of every intact block is kept, with its value; the
    /// damaged ranges are in quarantine, byte for byte; the store opens, and a second salvage
    /// finds nothing. The log is kept whole.
    @Test(arguments: [
        "damaged middle block", "damaged footer", "damaged index", "damaged index partition", "damaged filter partition",
        "cut inside a block", "cut at a block boundary",
    ])
    func aDamagedTableKeepsEveryIntactBlock(damage: String) throws {
        let (fs, history) = try Self.store(compacted: true)
        let table = try #require(fs.names(in: Self.dir).first { $0.hasSuffix(".sst") })
        let path = Self.dir + "/" + table
        var bytes = try #require(fs.contents(of: path))
        let reader = try TableReader(source: MemoryTableSource(bytes: bytes))
        #expect(try reader.dataBlockCount >= 3)
        var lostBlocks: [Int] = []
        switch damage {
        case "damaged middle block":
            lostBlocks = [1]
            bytes[Int(try reader.dataBlockHandle(1).offset) + 10] ^= 1
        case "damaged footer":
            bytes[bytes.count - 10] ^= 1
        case "damaged index":
            bytes[Int(reader.footer.index.offset) + 3] ^= 1
        case "damaged index partition":
            bytes[Int(try reader.metadataLoaded().partitions[0].index.offset) + 3] ^= 1
        case "damaged filter partition":
            bytes[Int(try reader.metadataLoaded().partitions[0].filter.offset) + 3] ^= 1
        case "cut inside a block":
            lostBlocks = Array(2..<(try reader.dataBlockCount))
            bytes = Array(bytes.prefix(Int(try reader.dataBlockHandle(2).offset) + 5))
        default:
            bytes = Array(bytes.prefix(Int(reader.footer.filter.offset)))
        }
        var lostKeys = Set<[UInt8]>()
        for block in lostBlocks { lostKeys.formUnion(try reader.entries(ofBlock: block).map(\.key)) }
        fs.setContents(bytes, of: path)
        let original = Self.files(fs)
        let store = try? LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        let readable = store.map { store in
            // A scan reads no filter: every key is read by a point read too.
            (try? store.scan().collect().allSatisfy { (try? $0.value()) != nil }) ?? false
                && history.last!.keys.allSatisfy { (try? store.value(forKey: $0)) != nil }
        }
        try store?.close()
        #expect(readable != true, "\(damage): open or a read must fail")

        let report = try LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: fs)
        var expected = history.last!
        for key in lostKeys { expected[key] = nil }
        #expect(try Self.contents(fs) == expected, "\(damage): every entry of every intact block is kept, unchanged")
        #expect(!report.quarantined.isEmpty && report.quarantined.allSatisfy { $0.file == table }, "\(damage): \(report.quarantined)")
        Self.checkQuarantine(report, against: original, in: fs)
        if let first = lostBlocks.first {
            let firstOffset = try reader.dataBlockHandle(first).offset
            #expect(report.quarantined.contains { $0.range.contains(firstOffset + 2) }, "\(damage)")
        }
        #expect(report.lostKeys.isEmpty, "\(damage): the keys of a damaged block cannot be known")
        #expect(report.lastKeptSequence == UInt64(history.count - 1))
        #expect(!fs.names(in: Self.dir).contains(table), "\(damage): the damaged table is replaced")
        let again = try LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(again.isClean, "\(damage): \(again)")
        #expect(try Self.contents(fs) == expected)
    }

    /// Power loss at every I/O operation of a salvage that rewrites a damaged table: salvage
    /// runs again afterwards, and the store then holds every entry of every intact block, with no
    /// temporary file and no table the manifest does not list.
    @Test(arguments: ["damaged middle block"])
    func powerLossAtEveryOperationOfATableRewriteLosesNoIntactEntry(damage: String) throws {
        let (base, history) = try Self.store(compacted: true)
        let table = try #require(base.names(in: Self.dir).first { $0.hasSuffix(".sst") })
        let path = Self.dir + "/" + table
        var bytes = try #require(base.contents(of: path))
        let reader = try TableReader(source: MemoryTableSource(bytes: bytes))
        var expected = history.last!
        if damage == "damaged middle block" {
            for entry in try reader.entries(ofBlock: 1) { expected[entry.key] = nil }
            bytes[Int(try reader.dataBlockHandle(1).offset) + 10] ^= 1
        } else {
            bytes[bytes.count - 10] ^= 1
        }
        base.setContents(bytes, of: path)
        let probe = base.clone()
        let start = probe.operationCount
        _ = try LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: probe)
        let total = probe.operationCount - start
        #expect(total > 10)
        for crashAt in 1...total {
            let fs = base.clone()
            fs.crash(atOperation: crashAt)
            _ = try? LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: fs)
            fs.powerLoss()
            let label = "\(damage): power loss at operation \(crashAt) of \(total)"
            _ = try LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: fs)
            let reopened = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            #expect(try reopened.contents() == expected, "\(label)")
            let names = fs.names(in: Self.dir)
            #expect(!names.contains { $0.hasSuffix("-tmp") }, "\(label): \(names)")
            #expect(names.filter { $0.hasSuffix(".sst") }.count == reopened.statistics.tables.count, "\(label): \(names)")
            try reopened.close()
        }
    }

    /// A blob whose bytes are damaged: open succeeds but the read fails; salvage deletes the key
    /// (the only way to keep the store readable), sets the blob aside and reports the key.
    @Test func aDamagedBlobIsSetAsideAndItsKeyDeleted() throws {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        try store.write { $0.putExternal(bytes("photo"), [UInt8](repeating: 7, count: 100_000)) }
        try store.write { $0.put(bytes("kept"), bytes("yes")) }
        try store.close()
        let blob = try #require(fs.names(in: Self.dir + "/blobs").first)
        fs.flipBit(in: Self.dir + "/blobs/" + blob, atByte: 5000)

        let report = try LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(report.deletedKeys == [bytes("photo")])
        #expect(report.lostKeys == [bytes("photo")])
        #expect(report.quarantined.map(\.file) == ["blobs/" + blob])
        #expect(try Self.contents(fs) == [bytes("kept"): bytes("yes")])
    }

    /// A damaged manifest is set aside and rebuilt from the tables and segments present.
    @Test func aDamagedManifestIsRebuiltFromTheTablesAndSegmentsPresent() throws {
        let (fs, history) = try Self.store(compacted: true)
        fs.flipBit(in: Self.dir + "/MANIFEST", atByte: 20)
        #expect(Self.openError(fs)?.code == .corruption)
        let report = try LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(report.quarantined.map(\.file) == ["MANIFEST"])
        #expect(try Self.contents(fs) == history.last!)
    }

    /// A damaged manifest and a table cut short beneath it: the manifest is rebuilt, and the
    /// table rewritten from every block it still holds whole.
    @Test func aDamagedManifestAndATableCutShortKeepEveryIntactBlock() throws {
        let (fs, history) = try Self.store(compacted: true)
        let table = try #require(fs.names(in: Self.dir).first { $0.hasSuffix(".sst") })
        let path = Self.dir + "/" + table
        let bytes = try #require(fs.contents(of: path))
        let reader = try TableReader(source: MemoryTableSource(bytes: bytes))
        var expected = history.last!
        for block in 2..<(try reader.dataBlockCount) { for entry in try reader.entries(ofBlock: block) { expected[entry.key] = nil } }
        fs.setContents(Array(bytes.prefix(Int(try reader.dataBlockHandle(2).offset) + 3)), of: path)
        fs.flipBit(in: Self.dir + "/MANIFEST", atByte: 20)
        let report = try LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(report.quarantined.map(\.file) == ["MANIFEST", table], "\(report.quarantined)")
        #expect(try Self.contents(fs) == expected)
        #expect(try LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: fs).isClean)
    }

    /// Without segment hints, the manifest records where the log ended at the clean close: a
    /// newest segment cut at a frame boundary is refused, and salvage keeps what is left, drops the
    /// record, and reports the commits from the cut to the recorded last one as lost.
    @Test func aNewestSegmentCutBelowTheRecordedLogEndIsSalvaged() throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.options()
        options.writesSegmentHints = false
        var history: History = [[:]]
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        try Self.commit(store, rounds: 0..<6, tag: "c", into: &history)
        try store.close()
        let path = Self.dir + "/" + Self.segments(fs).last!
        let segment = try #require(fs.contents(of: path))
        let frames = Self.frameOffsets(segment)
        fs.setContents(Array(segment.prefix(frames[frames.count - 3])), of: path)
        let refused = #expect(throws: EngineError.self) { try LogStore.open(at: Self.dir, options: options, fileSystem: fs) }
        #expect(refused?.code == .corruption && refused?.path == path)

        let report = try LogStore.salvage(at: Self.dir, options: options, fileSystem: fs)
        let kept = Int(report.lastKeptSequence)
        #expect(kept < history.count - 1)
        #expect(report.lostSequences == UInt64(kept + 1)...UInt64(history.count - 1))
        let reopened = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        #expect(try reopened.contents() == history[kept])
        try reopened.close()
    }

    /// A damaged last commit frame of the newest segment (a flipped payload byte, which open reads
    /// as a torn write and cuts): with segment hints, the hint written at the clean close records
    /// that frame; without, the manifest's recorded log end does. Either way salvage reports the
    /// last commit as lost, not a clean prefix.
    @Test(arguments: [true, false])
    func aDamagedLastCommitIsReportedLost(segmentHints: Bool) throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.options()
        options.writesSegmentHints = segmentHints
        var history: History = [[:]]
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        try Self.commit(store, rounds: 0..<6, tag: "d", into: &history)
        store.writePendingSegmentHints()
        try store.close()
        let path = Self.dir + "/" + Self.segments(fs).last!
        var segment = try #require(fs.contents(of: path))
        let last = try #require(Self.frameOffsets(segment).last { segment[$0 + 20] == 1 }, "a commit frame")
        segment[last + 32 + 5] ^= 0x08
        fs.setContents(segment, of: path)

        let report = try LogStore.salvage(at: Self.dir, options: options, fileSystem: fs)
        let lastCommit = UInt64(history.count - 1)
        #expect(report.lastKeptSequence == lastCommit - 1)
        #expect(report.lostSequences == lastCommit...lastCommit, "\(String(describing: report.lostSequences))")
        let reopened = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        #expect(try reopened.contents() == history[Int(lastCommit) - 1])
        try reopened.close()
    }

    /// A segment cut at a frame boundary beside its whole hint: the hint is set aside as the
    /// evidence, the keys of the frames it records past the cut are reported, and the commits of
    /// the later segments are kept.
    @Test func aSegmentCutBeneathItsHintReportsTheKeysTheHintRecords() throws {
        let (fs, history) = try Self.store()
        let names = Self.segments(fs)
        let path = Self.dir + "/" + names[0]
        let segment = try #require(fs.contents(of: path))
        let frames = Self.frameOffsets(segment)
        fs.setContents(Array(segment.prefix(frames[frames.count - 2])), of: path)
        #expect(Self.openError(fs)?.code == .corruption)

        let report = try LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: fs)
        // Segment 1 held commits 1 ... n; the cut took the last two.
        let lost = frames.count - 1...frames.count
        #expect(try Self.contents(fs) == Self.model(history, without: lost))
        #expect(report.quarantined.map(\.file).contains(SegmentHint.name(1)))
        #expect(report.lostSequenceRanges == [UInt64(lost.lowerBound)...UInt64(lost.upperBound)])
        #expect(report.lastKeptSequence == UInt64(history.count - 1))
        #expect(Set(report.lostKeys) == Self.keys(ofCommit: lost.lowerBound, history).union(Self.keys(ofCommit: lost.upperBound, history)))
    }
}
