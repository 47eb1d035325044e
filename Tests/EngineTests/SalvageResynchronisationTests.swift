@testable import Engine
import EngineTestSupport
import Testing

/// `LogStore.salvage(at:)` keeps every intact commit, also after damage: it finds the next frame
/// past a damaged one, keeps every commit whose frame passes its checks, reports the exact
/// sequences lost and their keys, and leaves a store that opens. And it rebuilds a manifest that
/// is missing or whose last sequence is below what its tables hold.
@Suite struct SalvageResynchronisationTests {
    static let dir = "/resync"

    static func options(hints: Bool = true) -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.compaction = .manual
        options.compressionLevel = 0
        options.blockSize = 4096
        options.writesSegmentHints = hints
        return options
    }

    /// One commit's operations: a put (a value) or a delete (nil).
    typealias Batch = [(key: [UInt8], value: [UInt8]?)]

    /// The model after applying `batches`, skipping those whose index (sequence − 1) is in `lost`.
    static func model(_ batches: [Batch], without lost: Set<Int> = []) -> [[UInt8]: [UInt8]] {
        var model: [[UInt8]: [UInt8]] = [:]
        for (index, batch) in batches.enumerated() where !lost.contains(index) {
            for (key, value) in batch { model[key] = value }
        }
        return model
    }

    /// A small store: six commits in one segment, later ones overwriting and deleting keys of
    /// earlier ones, cleanly closed.
    static func smallStore(hints: Bool = true) throws -> (FaultInjectingFileSystem, [Batch]) {
        let fs = FaultInjectingFileSystem()
        let batches: [Batch] = [
            [(bytes("a"), bytes("1")), (bytes("b"), bytes("1"))],
            [(bytes("c"), bytes("2")), (bytes("a"), bytes("2"))],
            [(bytes("d"), bytes("3")), (bytes("b"), nil)],
            [(bytes("e"), bytes("4"))],
            [(bytes("a"), bytes("5")), (bytes("f"), bytes("5"))],
            [(bytes("g"), bytes("6")), (bytes("c"), nil)],
        ]
        let store = try LogStore.open(at: dir, options: options(hints: hints), fileSystem: fs)
        for batch in batches {
            try store.write { writer in
                for (key, value) in batch {
                    if let value { writer.put(key, value) } else { writer.delete(key) }
                }
            }
        }
        try store.close()
        return (fs, batches)
    }

    static func contents(_ fs: FaultInjectingFileSystem, hints: Bool = true) throws -> [[UInt8]: [UInt8]] {
        let store = try LogStore.open(at: dir, options: options(hints: hints), fileSystem: fs)
        defer { try? store.close() }
        return try store.contents()
    }

    /// The (offset, length) of each frame of a segment's bytes, commit frames and the close frame.
    static func frames(_ segment: [UInt8]) -> [(offset: Int, length: Int, isCommit: Bool)] {
        var frames: [(Int, Int, Bool)] = []
        var offset = FormatTesting.segmentHeaderSize
        while offset + FormatTesting.frameHeaderSize <= segment.count {
            let length = (0..<4).reduce(0) { $0 | Int(segment[offset + 8 + $1]) << (8 * $1) }
            frames.append((offset, FormatTesting.frameHeaderSize + length, segment[offset + 20] == 1))
            offset += FormatTesting.frameHeaderSize + length
        }
        return frames
    }

    /// The keys whose value in `full` differs from the one in `kept`: those whose latest version
    /// was lost.
    static func changedKeys(_ full: [[UInt8]: [UInt8]], _ kept: [[UInt8]: [UInt8]]) -> Set<[UInt8]> {
        Set(full.keys).union(kept.keys).filter { full[$0] != kept[$0] }
    }

    /// The small store's commits split into two segments (the first three in segment 1, the rest
    /// and the close frame in segment 2), without segment hints.
    static func twoSegments(_ fs: FaultInjectingFileSystem) throws {
        let path = dir + "/" + SegmentFile.name(1)
        let segment = try #require(fs.contents(of: path))
        let split = frames(segment)[3].offset
        try fs.removeFile(dir + "/" + SegmentHint.name(1))
        fs.setContents(Array(segment[..<split]), of: path)
        let second = try fs.openFile(dir + "/" + SegmentFile.name(2), create: true)
        try second.write(SegmentFile.header(number: 2, firstSequence: 4) + segment[split...], at: 0)
        try second.sync()
    }

    /// Every byte of a small store's segments flipped in turn: salvage keeps every commit whose
    /// frame does not hold the byte, reports exactly the one that does (with its keys, when the
    /// segment hint of the clean close records them; else as a commit of unknown keys), and the
    /// store opens with the rest and takes commits again.
    @Test(arguments: [1, 2])
    func everyFlippedByteOfASegmentCostsOnlyTheCommitHoldingIt(segments: Int) throws {
        let (base, batches) = try Self.smallStore()
        if segments == 2 { try Self.twoSegments(base) }
        #expect(try Self.contents(base.clone()) == Self.model(batches))
        let full = Self.model(batches)
        var firstSequence = 1
        for number in 1...segments {
            let name = SegmentFile.name(UInt64(number))
            let path = Self.dir + "/" + name
            let segment = try #require(base.contents(of: path))
            let frames = Self.frames(segment)
            defer { firstSequence += frames.filter(\.isCommit).count }
            for position in 0..<segment.count {
                let fs = base.clone()
                var damaged = segment
                damaged[position] ^= 0xFF
                fs.setContents(damaged, of: path)
                let label = "byte \(position) of \(name)"
                // The commit whose frame holds the byte.
                let holder = frames.filter(\.isCommit).firstIndex { ($0.offset..<$0.offset + $0.length).contains(position) }
                    .map { $0 + firstSequence }
                let report = try LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: fs)
                let expected = Self.model(batches, without: holder.map { [$0 - 1] } ?? [])
                #expect(try Self.contents(fs) == expected, "\(label)")
                let lost = holder.map { [UInt64($0)...UInt64($0)] } ?? []
                #expect(report.lostSequenceRanges == lost, "\(label): \(report)")
                if segments == 1 {
                    #expect(Set(report.lostKeys) == Self.changedKeys(full, expected), "\(label): \(report.lostKeys)")
                    #expect(report.lostSequencesWithUnknownKeys.isEmpty, "\(label)")
                } else {
                    #expect(report.lostKeys.isEmpty && report.lostSequencesWithUnknownKeys == lost, "\(label): \(report)")
                }
                #expect(report.laterCommitsMayDependOnLostOnes == (holder.map { $0 < batches.count } ?? false), "\(label)")
                #expect(report.lastKeptSequence == UInt64(holder == batches.count ? batches.count - 1 : batches.count), "\(label)")
                let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
                #expect(store.statistics.lastSequence == report.lastKeptSequence, "\(label)")
                try store.write { $0.put(bytes("after"), bytes("salvage")) }
                try store.close()
                #expect(try Self.contents(fs)[bytes("after")] == bytes("salvage"), "\(label)")
            }
        }
    }

    /// Without segment hints nothing records a damaged frame's keys: the commit is reported lost
    /// with its keys unknown, and the commits after it kept.
    @Test func withoutHintsTheKeysOfADamagedCommitAreReportedUnknown() throws {
        let (fs, batches) = try Self.smallStore(hints: false)
        let path = Self.dir + "/" + SegmentFile.name(1)
        let frames = Self.frames(try #require(fs.contents(of: path)))
        fs.flipBit(in: path, atByte: frames[2].offset + FormatTesting.frameHeaderSize + 12)
        let report = try LogStore.salvage(at: Self.dir, options: Self.options(hints: false), fileSystem: fs)
        #expect(try Self.contents(fs, hints: false) == Self.model(batches, without: [2]))
        #expect(report.lostSequenceRanges == [3...3])
        #expect(report.lostSequences == 3...3)
        #expect(report.lostSequencesWithUnknownKeys == [3...3])
        #expect(report.lostKeys.isEmpty)
        #expect(report.laterCommitsMayDependOnLostOnes)
        #expect(report.quarantined.map(\.file) == [SegmentFile.name(1)])
        #expect(report.quarantined.first?.range == UInt64(frames[2].offset)..<UInt64(frames[2].offset + frames[2].length))
    }

    /// Damage in two places of two segments: each damaged commit is lost, every other kept, and
    /// the lost ones reported as two ranges.
    @Test func damageInSeveralSegmentsIsReportedAsSeveralRanges() throws {
        let fs = FaultInjectingFileSystem()
        let options = Self.options()
        var batches: [Batch] = []
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        for round in 0..<100 {
            let batch: Batch = [
                (bytes("k\(round % 7)"), [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: 2000)), (bytes("n\(round)"), bytes("v")),
            ]
            try store.write { writer in for (key, value) in batch { writer.put(key, value!) } }
            batches.append(batch)
        }
        try store.close()
        let segments = fs.names(in: Self.dir).filter { $0.hasSuffix(".wal") }.sorted()
        #expect(segments.count >= 3)
        var lost: [UInt64] = []
        for name in [segments[0], segments[1]] {
            let path = Self.dir + "/" + name
            let segment = try #require(fs.contents(of: path))
            let frame = Self.frames(segment)[1]
            lost.append((0..<8).reduce(UInt64(0)) { $0 | UInt64(segment[frame.offset + 12 + $1]) << (8 * UInt64($1)) })
            fs.flipBit(in: path, atByte: frame.offset + FormatTesting.frameHeaderSize + 30)
        }
        let report = try LogStore.salvage(at: Self.dir, options: options, fileSystem: fs)
        #expect(report.lostSequenceRanges == lost.map { $0...$0 })
        #expect(report.lastKeptSequence == UInt64(batches.count))
        let expected = Self.model(batches, without: Set(lost.map { Int($0) - 1 }))
        #expect(try Self.contents(fs) == expected)
        #expect(Set(report.lostKeys) == Self.changedKeys(Self.model(batches), expected))
        #expect(try LogStore.salvage(at: Self.dir, options: options, fileSystem: fs).isClean)
    }

    /// Power loss at every I/O operation of a salvage that rewrites the log's intact commits:
    /// salvage runs again afterwards and keeps the same commits.
    @Test func powerLossAtEveryOperationOfALogRewriteKeepsEveryIntactCommit() throws {
        let (base, batches) = try Self.smallStore()
        let path = Self.dir + "/" + SegmentFile.name(1)
        let frames = Self.frames(try #require(base.contents(of: path)))
        base.flipBit(in: path, atByte: frames[1].offset + FormatTesting.frameHeaderSize + 12)
        let expected = Self.model(batches, without: [1])
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
            let label = "power loss at operation \(crashAt) of \(total)"
            let report = try LogStore.salvage(at: Self.dir, options: Self.options(), fileSystem: fs)
            #expect(try Self.contents(fs) == expected, "\(label): \(report)")
            let names = fs.names(in: Self.dir)
            #expect(!names.contains { $0.hasSuffix("-tmp") }, "\(label): \(names)")
        }
    }

    /// A store whose manifest is missing while its tables lie beside a log that no longer starts
    /// at segment 1: open refuses it; salvage rebuilds the manifest from the tables and segments
    /// present, and keeps every commit.
    @Test func aMissingManifestIsRebuiltFromTheTablesAndSegmentsPresent() throws {
        let (fs, history) = try SalvageTests.store(compacted: true)
        try fs.removeFile(SalvageTests.dir + "/" + LogFormat.manifestName)
        #expect(!fs.names(in: SalvageTests.dir).contains(SegmentFile.name(1)))
        #expect(SalvageTests.openError(fs)?.code == .corruption)
        let report = try LogStore.salvage(at: SalvageTests.dir, options: SalvageTests.options(), fileSystem: fs)
        #expect(try SalvageTests.contents(fs) == history.last!)
        #expect(report.lastKeptSequence == UInt64(history.count - 1))
        #expect(report.lostSequenceRanges.isEmpty)
        #expect(try LogStore.salvage(at: SalvageTests.dir, options: SalvageTests.options(), fileSystem: fs).isClean)
    }

    /// A manifest whose last sequence is one below what its table holds (checksum intact): salvage
    /// raises it to the table's, so the tables and the log stay one commit order, and keeps every
    /// commit of the log after it.
    @Test func aManifestLastSequenceBelowItsTablesIsRaisedToThem() throws {
        let (fs, history) = try SalvageTests.store(compacted: true)
        let path = SalvageTests.dir + "/" + LogFormat.manifestName
        var manifest = try Manifest(decoding: try #require(fs.contents(of: path)), path: path)
        let flushed = manifest.lastSequence
        #expect(flushed > 1)
        manifest.lastSequence = flushed - 1
        fs.setContents(manifest.encoded(), of: path)
        #expect(SalvageTests.openError(fs)?.code == .corruption)

        let report = try LogStore.salvage(at: SalvageTests.dir, options: SalvageTests.options(), fileSystem: fs)
        #expect(try SalvageTests.contents(fs) == history.last!)
        #expect(report.lastKeptSequence == UInt64(history.count - 1))
        #expect(report.lostSequenceRanges.isEmpty, "\(report)")
        #expect(report.quarantined.map(\.file) == [LogFormat.manifestName])
        let repaired = try Manifest(decoding: try #require(fs.contents(of: path)), path: path)
        #expect(repaired.lastSequence >= flushed)
        #expect(try LogStore.salvage(at: SalvageTests.dir, options: SalvageTests.options(), fileSystem: fs).isClean)
    }

    /// A manifest whose log start is one segment too high (checksum intact): open refuses it and
    /// removes nothing; salvage reads the segment the manifest disowns too, and keeps every commit.
    @Test func aManifestLogStartOneTooHighLosesNoCommit() throws {
        let (fs, history) = try SalvageTests.store(compacted: true)
        let path = SalvageTests.dir + "/" + LogFormat.manifestName
        var manifest = try Manifest(decoding: try #require(fs.contents(of: path)), path: path)
        let segments = fs.names(in: SalvageTests.dir).compactMap(SegmentFile.number(fromName:)).sorted()
        #expect(segments.count >= 2 && segments.first == manifest.logStart)
        manifest.logStart += 1
        fs.setContents(manifest.encoded(), of: path)
        #expect(SalvageTests.openError(fs)?.code == .corruption)
        #expect(fs.names(in: SalvageTests.dir).compactMap(SegmentFile.number(fromName:)).sorted() == segments)

        let report = try LogStore.salvage(at: SalvageTests.dir, options: SalvageTests.options(), fileSystem: fs)
        #expect(try SalvageTests.contents(fs) == history.last!)
        #expect(report.lastKeptSequence == UInt64(history.count - 1))
        #expect(report.lostSequenceRanges.isEmpty, "\(report)")
        #expect(try LogStore.salvage(at: SalvageTests.dir, options: SalvageTests.options(), fileSystem: fs).isClean)
    }
}
