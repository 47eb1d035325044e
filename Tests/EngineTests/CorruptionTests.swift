import Engine
import EngineTestSupport
import Testing

/// Invariant 6 of ARCHITECTURE.md: corruption is detected and named by file and offset, corrupt bytes
/// are never returned, and hostile lengths allocate nothing.
@Suite struct CorruptionTests {
    static let dir = "/corrupt"
    static let segment = dir + "/0000000000000001.wal"

    /// A store of three commits (raw blocks, so every byte's role is known); returns the file
    /// system and the offsets at which the three frames start.
    /// Three commits in one segment, then a clean close (its close frame ends the segment) or,
    /// with `closes` false, a killed process (the segment ends with the third commit).
    static func threeCommits(level: Int = 0, closes: Bool = true) throws -> (FaultInjectingFileSystem, [Int]) {
        let fs = FaultInjectingFileSystem()
        var options = LogStore.Options()
        options.compressionLevel = level
        options.preallocationSize = 0  // the file's size is where the next frame starts
        // No segment hint: open replays and verifies every frame (the path these tests damage).
        // What a hint changes is in `damageUnderASegmentHintIsReportedWhenTheValueIsRead`.
        options.writesSegmentHints = false
        let store = try LogStore.open(at: dir, options: options, fileSystem: fs)
        var offsets: [Int] = []
        for i in 1...3 {
            offsets.append(fs.contents(of: segment)!.count)
            try store.write { batch in
                batch.put(bytes("key\(i)"), bytes(String(repeating: "value \(i) ", count: 30)))
                batch.put(bytes("other\(i)"), bytes("x"))
            }
        }
        if closes { try store.close() } else { fs.processCrash() }
        return (fs, offsets)
    }

    static func openError(_ fs: FaultInjectingFileSystem) -> EngineError? {
        do {
            _ = try LogStore.open(at: dir, options: LogStore.Options(), fileSystem: fs)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [0, 1])
    func flippedBitAnywhereInAnEarlierFrameIsCorruptionAtThatFrame(level: Int) throws {
        let (pristine, offsets) = try Self.threeCommits(level: level)
        let frame = offsets[1]
        for byte in offsets[0]..<offsets[1] {
            for bit in [0, 7] {
                let fs = pristine.clone()
                fs.flipBit(in: Self.segment, atByte: byte, bit: bit)
                let error = Self.openError(fs)
                #expect(error?.code == .corruption, "byte \(byte) bit \(bit)")
                #expect(error?.path == Self.segment, "byte \(byte)")
                #expect(error?.offset == UInt64(offsets[0]), "byte \(byte) names frame \(frame)")
            }
        }
    }

    @Test func flippedBitInTheSegmentHeaderIsDetected() throws {
        let (pristine, _) = try Self.threeCommits()
        for byte in 0..<FormatTesting.segmentHeaderSize {
            let fs = pristine.clone()
            fs.flipBit(in: Self.segment, atByte: byte, bit: 3)
            let error = Self.openError(fs)
            #expect(error?.code == .corruption, "header byte \(byte)")
            #expect(error?.path == Self.segment)
            #expect(error?.offset == 0)
        }
    }

    /// Versions 1 and 2 (earlier builds') and a future version 4, each with a valid header.
    @Test(arguments: [UInt8(1), 2, 4])
    func wellFormedHeaderOfAnotherVersionIsUnsupported(version: UInt8) throws {
        let (fs, _) = try Self.threeCommits()
        var file = fs.contents(of: Self.segment)!
        var header = Array(file[0..<28])
        header[8] = version
        let crc = FormatTesting.crc32(header)
        header += withUnsafeBytes(of: crc.littleEndian, Array.init)
        file.replaceSubrange(0..<32, with: header)
        fs.setContents(file, of: Self.segment)
        let error = Self.openError(fs)
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("version \(version)") == true)
    }

    @Test func flippedBitInTheLastFrameHeaderIsCorruption() throws {
        let (pristine, offsets) = try Self.threeCommits()
        // Header checksum, length, sequence, type, flags, reserved, durable sequence: the header
        // checksum catches each, and the close frame after it shows the damage is no torn write.
        for field in [4, 8, 11, 12, 20, 21, 22, 23, 24, 31] {
            let fs = pristine.clone()
            fs.flipBit(in: Self.segment, atByte: offsets[2] + field)
            let error = Self.openError(fs)
            #expect(error?.code == .corruption, "field at \(field)")
            #expect(error?.offset == UInt64(offsets[2]))
        }
    }

    /// A clean close ends the log with a close frame, which names every commit durable: damage
    /// to the last commit is then corruption, never taken for a torn write.
    @Test func aFlippedBitInTheLastCommitOfACleanlyClosedStoreIsCorruption() throws {
        let (fs, offsets) = try Self.threeCommits()
        let size = fs.contents(of: Self.segment)!.count
        fs.flipBit(in: Self.segment, atByte: size - FormatTesting.frameHeaderSize - 3)
        let error = Self.openError(fs)
        #expect(error?.code == .corruption)
        #expect(error?.offset == UInt64(offsets[2]))
        #expect(error?.message.contains("LogStore.salvage(at:)") == true, "the message says what to do next")
    }

    /// The documented downside (FORMAT.md, "Recovery"): after a crash (no close frame), damage
    /// inside the last frame of the newest segment looks exactly like a torn write, so that frame
    /// is dropped — and reported.
    @Test func withoutACloseFrameDamageInTheLastFrameIsTakenForATornWrite() throws {
        let (fs, offsets) = try Self.threeCommits(closes: false)
        let size = fs.contents(of: Self.segment)!.count
        fs.flipBit(in: Self.segment, atByte: size - 3)
        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        #expect(store.statistics.lastSequence == 2)
        #expect(store.statistics.recovery.truncatedBytes == UInt64(size - offsets[2]))
        #expect(store.statistics.recovery.reason == "frame checksum mismatch")
        #expect(!store.statistics.recovery.closedCleanly)
    }

    /// Damage to the close frame itself loses nothing: it holds no commit, and open treats the
    /// end of the log as a crash's.
    @Test func aDamagedCloseFrameIsCutAndEveryCommitKept() throws {
        let (fs, _) = try Self.threeCommits()
        let clean = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        #expect(clean.statistics.recovery.closedCleanly)
        let expected = try clean.contents()
        try clean.close()
        let size = fs.contents(of: Self.segment)!.count
        fs.flipBit(in: Self.segment, atByte: size - 5)
        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        #expect(try store.contents() == expected)
        #expect(store.statistics.lastSequence == 3)
        #expect(!store.statistics.recovery.closedCleanly)
        #expect(store.statistics.recovery.truncatedBytes == UInt64(FormatTesting.frameHeaderSize))
    }

    /// A close frame repeats the last commit's sequence: one naming another is no frame a writer
    /// makes (a checksummed one, so no torn write either).
    @Test func aCloseFrameNamingAnotherSequenceIsCorruption() throws {
        let (fs, _) = try Self.threeCommits(closes: false)
        var file = try #require(fs.contents(of: Self.segment))
        let offset = file.count
        file += FormatTesting.frame(payload: [], sequence: 2, type: 2, durableSequence: 2)
        fs.setContents(file, of: Self.segment)
        let error = Self.openError(fs)
        #expect(error?.code == .corruption)
        #expect(error?.offset == UInt64(offset))
        #expect(error?.message.contains("close frame") == true)
    }

    /// A newest segment whose header is torn is a crash during rollover only when nothing records
    /// frames in it; beside its hint (written once its frames were durable) it is corruption, and
    /// nothing is re-created.
    @Test func aTornNewestHeaderBesideItsHintIsCorruption() throws {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        try store.write { $0.put(bytes("k"), bytes("v")) }
        try store.close()
        #expect(fs.names(in: Self.dir).contains("0000000000000001.walhint"))
        let zeros = [UInt8](repeating: 0, count: try #require(fs.contents(of: Self.segment)).count)
        fs.setContents(zeros, of: Self.segment)
        let error = Self.openError(fs)
        #expect(error?.code == .corruption)
        #expect(error?.path == Self.segment)
        #expect(fs.contents(of: Self.segment) == zeros, "the segment is not re-created")
    }

    @Test func corruptBlockIsNeverReturnedByAPointRead() throws {
        let (fs, offsets) = try Self.threeCommits()
        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        // Damage commit 2's value after the index was built (bit rot while the store is open).
        let block = offsets[1] + FormatTesting.frameHeaderSize + 8
        fs.flipBit(in: Self.segment, atByte: block + FormatTesting.blockHeaderSize + 20)
        let error = #expect(throws: EngineError.self) { try store.value(forKey: bytes("key2")) }
        #expect(error?.code == .corruption)
        #expect(error?.path == Self.segment)
        #expect(error?.offset == UInt64(block))
        #expect(try store.value(forKey: bytes("key1")) == bytes(String(repeating: "value 1 ", count: 30)))
    }

    /// Writes a hand-made frame (with a correct checksum) after two good commits, followed by a
    /// good third frame so the crafted one is not the log's tail; returns the open error.
    static func openWithCraftedFrame(_ crafted: [UInt8]) throws -> (EngineError?, FaultInjectingFileSystem) {
        let (fs, offsets) = try threeCommits()
        let file = fs.contents(of: segment)!
        let third = Array(file[offsets[2]...])
        fs.setContents(Array(file[..<offsets[2]]) + crafted + third, of: segment)
        return (openError(fs), fs)
    }

    @Test func hugeLengthFieldsAllocateNothingAndFailClearly() throws {
        let zlibBlock = FormatTesting.deflate([UInt8](repeating: 7, count: 1000))
        let cases: [(String, [UInt8])] = [
            ("frame length 4 GiB", FormatTesting.frame(payload: [1, 2, 3], sequence: 3, declaredLength: .max)),
            ("frame length 1 GiB + 1", FormatTesting.frame(payload: [1, 2, 3], sequence: 3, declaredLength: 1 << 30 + 1)),
            (
                "record count 4 billion",
                FormatTesting.frame(
                    payload: FormatTesting.commitHeader(records: .max, blocks: 1)
                        + FormatTesting.block(encoding: 0, stored: [1, 1, 0, 65], rawLength: 4), sequence: 3)
            ),
            (
                "block count 4 billion",
                FormatTesting.frame(
                    payload: FormatTesting.commitHeader(records: .max, blocks: .max), sequence: 3)
            ),
            (
                "raw length 4 GiB",
                FormatTesting.frame(
                    payload: FormatTesting.commitHeader(records: 1, blocks: 1)
                        + FormatTesting.block(encoding: 1, stored: zlibBlock, rawLength: .max), sequence: 3)
            ),
            (
                "raw length past zlib's ratio",
                FormatTesting.frame(
                    payload: FormatTesting.commitHeader(records: 1, blocks: 1)
                        + FormatTesting.block(encoding: 1, stored: zlibBlock, rawLength: 1 << 29), sequence: 3)
            ),
            (
                "inflates to more than declared",
                FormatTesting.frame(
                    payload: FormatTesting.commitHeader(records: 1, blocks: 1)
                        + FormatTesting.block(encoding: 1, stored: zlibBlock, rawLength: 999), sequence: 3)
            ),
            (
                "stored length past the payload",
                FormatTesting.frame(
                    payload: FormatTesting.commitHeader(records: 1, blocks: 1)
                        + Array(FormatTesting.block(encoding: 0, stored: [1, 1, 0, 65], rawLength: 4).dropLast(2)), sequence: 3)
            ),
            (
                "value length 2^35",
                FormatTesting.frame(
                    payload: FormatTesting.commitHeader(records: 1, blocks: 1)
                        + FormatTesting.block(encoding: 0, stored: [1, 1, 0x80, 0x80, 0x80, 0x80, 0x7F, 65], rawLength: 8), sequence: 3)
            ),
            (
                "key length 0",
                FormatTesting.frame(
                    payload: FormatTesting.commitHeader(records: 1, blocks: 1)
                        + FormatTesting.block(encoding: 0, stored: [1, 0, 0], rawLength: 3), sequence: 3)
            ),
            (
                "sequence going backwards",
                FormatTesting.frame(
                    payload: FormatTesting.commitHeader(records: 1, blocks: 1)
                        + FormatTesting.block(encoding: 0, stored: [1, 1, 0, 65], rawLength: 4), sequence: 1)
            ),
            (
                "sequence skipping one",
                FormatTesting.frame(
                    payload: FormatTesting.commitHeader(records: 1, blocks: 1)
                        + FormatTesting.block(encoding: 0, stored: [1, 1, 0, 65], rawLength: 4), sequence: 4)
            ),
            (
                "sequence UInt64.max",
                FormatTesting.frame(
                    payload: FormatTesting.commitHeader(records: 1, blocks: 1)
                        + FormatTesting.block(encoding: 0, stored: [1, 1, 0, 65], rawLength: 4), sequence: .max)
            ),
            ("frame type 0", FormatTesting.frame(payload: [0, 0, 0, 0], sequence: 3, type: 0)),
        ]
        for (label, crafted) in cases {
            let (error, fs) = try Self.openWithCraftedFrame(crafted)
            #expect(error?.code == .corruption, "\(label): \(String(describing: error))")
            #expect(error?.path == Self.segment, "\(label)")
            #expect(error?.offset != nil, "\(label)")
            #expect(fs.largestRead <= 1 << 20, "\(label): read \(fs.largestRead) bytes")
        }
    }

    /// A store of `commits` 1 KB commits in 64 KiB segments (about 60 commits a segment).
    static func multiSegmentStore(commits: Int) throws -> FaultInjectingFileSystem {
        let fs = FaultInjectingFileSystem()
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.compressionLevel = 0
        options.writesSegmentHints = false
        let store = try LogStore.open(at: dir, options: options, fileSystem: fs)
        for i in 0..<commits { try store.write { $0.put(bytes("k\(i)"), [UInt8](repeating: 1, count: 1000)) } }
        try store.close()
        return fs
    }

    @Test func missingSegmentBetweenOthersIsCorruption() throws {
        let fs = try Self.multiSegmentStore(commits: 200)
        try fs.removeFile(Self.dir + "/0000000000000002.wal")
        let error = Self.openError(fs)
        #expect(error?.code == .corruption)
        #expect(error?.path == Self.dir + "/0000000000000002.wal")
    }

    /// FORMAT.md, "Downsides": if a power loss in a weaker sync mode kept a later unsynced frame
    /// but zeroed an earlier one, open reports corruption at the hole; it never returns the later
    /// commit without the earlier one.
    @Test func laterFrameSurvivingAnEarlierOneIsReportedNotReturned() throws {
        let (fs, offsets) = try Self.threeCommits()
        var file = fs.contents(of: Self.segment)!
        file.replaceSubrange(offsets[1]..<offsets[2], with: repeatElement(0, count: offsets[2] - offsets[1]))
        fs.setContents(file, of: Self.segment)
        let error = Self.openError(fs)
        #expect(error?.code == .corruption)
        #expect(error?.offset == UInt64(offsets[1]))
    }

    @Test func missingFirstSegmentIsCorruption() throws {
        let fs = try Self.multiSegmentStore(commits: 200)
        try fs.removeFile(Self.segment)
        let error = Self.openError(fs)
        #expect(error?.code == .corruption)
        #expect(error?.path == Self.segment)
    }

    @Test func damageInAnOlderSegmentsLastFrameIsCorruptionNotATornTail() throws {
        let fs = try Self.multiSegmentStore(commits: 100)
        let older = Self.segment
        let size = fs.contents(of: older)!.count
        fs.setContents(Array(fs.contents(of: older)!.dropLast(10)), of: older)
        let error = Self.openError(fs)
        #expect(error?.code == .corruption)
        #expect(error?.path == older)
        #expect(error?.offset.map { $0 < UInt64(size) } == true)
    }

    /// With the clean close's segment hint, open reads the keys from the hint and does not
    /// verify the frames it covers: a flipped bit there is found when the value is read, as
    /// corruption naming the segment and the block, and the damaged bytes are never returned.
    @Test func damageUnderASegmentHintIsReportedWhenTheValueIsRead() throws {
        let fs = FaultInjectingFileSystem()
        var options = LogStore.Options()
        options.compressionLevel = 0
        options.preallocationSize = 0
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        var offsets: [Int] = []
        for i in 1...3 {
            offsets.append(fs.contents(of: Self.segment)!.count)
            try store.write { $0.put(bytes("key\(i)"), bytes(String(repeating: "value \(i) ", count: 30))) }
        }
        try store.close()
        fs.flipBit(in: Self.segment, atByte: offsets[1] + 60)
        let reopened = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        #expect(reopened.statistics.recovery.segmentHintsLoaded == 1)
        #expect(try reopened.value(forKey: bytes("key1")) == bytes(String(repeating: "value 1 ", count: 30)))
        let error = #expect(throws: EngineError.self) { try reopened.value(forKey: bytes("key2")) }
        #expect(error?.code == .corruption)
        #expect(error?.path == Self.segment)
    }

    /// A table's data blocks have no frame around them: their own crc32 is what stands between a
    /// flipped bit and the caller. A point read, a scan, and the next merge all report the block
    /// as corruption naming the table.
    @Test func aFlippedBitInATableBlockIsCorruptionForEveryReader() throws {
        for level in [0, 3] {
            let fs = FaultInjectingFileSystem()
            var options = LogStore.Options()
            options.compressionLevel = level
            options.compaction = .manual
            let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
            try store.write { batch in
                for i in 0..<20 { batch.put(bytes("key\(i)"), bytes(String(repeating: "value \(i) ", count: 20))) }
            }
            try store.compact()
            try store.close()
            let pack = Self.dir + "/0000000000000001.sst"
            // Inside the first data block's stored bytes, which begin the table.
            fs.flipBit(in: pack, atByte: 9)
            let reopened = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
            let read = #expect(throws: EngineError.self, "level \(level)") { try reopened.value(forKey: bytes("key0")) }
            #expect(read?.code == .corruption && read?.path == pack, "level \(level): \(String(describing: read))")
            let scanned = #expect(throws: EngineError.self) { for entry in try reopened.scan().collect() { _ = try entry.value() } }
            #expect(scanned?.code == .corruption, "level \(level)")
            // A second table, so that compaction merges (and so reads) the damaged one.
            try reopened.write { $0.put(bytes("later"), bytes("1")) }
            let compacted = #expect(throws: EngineError.self) { try reopened.compact() }
            #expect(compacted?.code == .corruption && compacted?.path == pack, "level \(level)")
        }
    }
}
