@testable import Engine
import EngineTestSupport
import Testing

/// Bytes from disk the fuzz targets (Fuzz/README.md) showed could trap the process at open; each
/// is now corruption or a skipped file. Their fuzz inputs are in Fuzz/Corpus/store/crash-*.
@Suite struct FuzzFindingsTests {
    static let dir = "/fuzzed"

    /// A store of one commit closed cleanly (so the newest segment has a hint), and its key.
    static func smallStore() throws -> FaultInjectingFileSystem {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: dir, options: LogStore.Options(), fileSystem: fs)
        try store.write { $0.put(bytes("key"), bytes("value")) }
        try store.close()
        return fs
    }

    static func add(_ name: String, _ bytes: [UInt8], to fs: FaultInjectingFileSystem) throws {
        try fs.openFile(dir + "/" + name, create: true).write(bytes, at: 0)
    }

    static func expectCorruption(_ fs: FaultInjectingFileSystem, _ comment: Comment) {
        let error = #expect(throws: EngineError.self, comment) {
            _ = try LogStore.open(at: dir, options: LogStore.Options(), fileSystem: fs)
        }
        #expect(error?.code == .corruption, comment)
    }

    @Test func packAndBlobFilesNamedWithNumbersPastTheLimitAreIgnored() throws {
        let fs = try Self.smallStore()
        // Before: `number + 1` and `highest + 1` overflowed at open.
        try Self.add("ffffffffffffffff.hint", [1, 2, 3], to: fs)
        try Self.add("ffffffffffffffff.pack", [1, 2, 3], to: fs)
        try Self.add("8000000000000001.wal", [1, 2, 3], to: fs)
        try Self.add("blobs/ffffffffffffffff.blob", [1, 2, 3], to: fs)
        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        #expect(try store.value(forKey: bytes("key")) == bytes("value"))
        try store.write { $0.putExternal(bytes("blob"), [UInt8](repeating: 7, count: 100)) }
        #expect(try store.value(forKey: bytes("blob")) == [UInt8](repeating: 7, count: 100))
        try store.close()
    }

    @Test(arguments: [UInt64.max, UInt64.max - 1, UInt64(1) << 63])
    func aManifestWhoseLastSequenceIsPastTheLimitIsCorruption(_ lastSequence: UInt64) throws {
        let fs = FaultInjectingFileSystem()
        _ = try fs.createDirectory(Self.dir)
        try Self.add(LogFormat.manifestName, Manifest(logStart: 1, lastSequence: lastSequence, tables: []).encoded(), to: fs)
        // Before: open (UInt64.max) or the first commit after it (UInt64.max - 1) overflowed.
        Self.expectCorruption(fs, "the next commits would run out of sequence numbers")
    }

    @Test func aManifestListingATableNumberPastTheLimitIsCorruption() throws {
        let table = Manifest.Table(
            number: 1 << 63 | 1, level: 0, length: 100, entryCount: 1, smallestKey: [1], largestKey: [1], blobIDs: [])
        #expect(throws: EngineError.self) {
            try Manifest(decoding: Manifest(logStart: 1, lastSequence: 0, tables: [table]).encoded(), path: "m")
        }
        #expect(throws: EngineError.self) {
            try Manifest(decoding: Manifest(logStart: 1 << 63, lastSequence: 0, tables: []).encoded(), path: "m")
        }
    }

    @Test func aFrameWithASequencePastTheLimitIsCorruption() throws {
        let fs = FaultInjectingFileSystem()
        _ = try fs.createDirectory(Self.dir)
        let record: [UInt8] = [LogFormat.recordPut, 1, 1] + bytes("k") + bytes("v")
        let payload =
            FormatTesting.commitHeader(records: 1, blocks: 1)
            + FormatTesting.block(encoding: LogFormat.blockEncodingRaw, stored: record, rawLength: UInt32(record.count))
        // The first frame of the log must have sequence 1: the check that rejects this one is
        // the header's, before the sequence check (which would have said corruption too).
        try Self.add(
            SegmentFile.name(1), SegmentFile.header(number: 1, firstSequence: 1) + FormatTesting.frame(payload: payload, sequence: 1 << 63), to: fs)
        Self.expectCorruption(fs, "a frame sequence past the limit is not one a writer makes")
        var reader = try LogReader(file: fs.openFile(Self.dir + "/" + SegmentFile.name(1), create: false), segmentNumber: 1, isNewest: false)
        #expect(try reader.readHeader() == 1)
        let error = #expect(throws: EngineError.self) { _ = try reader.nextFrame() }
        #expect(error?.message.hasPrefix("frame header is invalid") == true)
    }

    @Test func aBlobReferenceWithAnIdPastTheLimitIsCorruption() throws {
        let fs = FaultInjectingFileSystem()
        _ = try fs.createDirectory(Self.dir)
        var reference = ByteWriter()
        BlobReference(id: .max, length: 1, fileLength: 100, checksum: 0, encoding: LogFormat.blobEncodingRaw).append(to: &reference)
        let record: [UInt8] = [LogFormat.recordBlob, 1] + bytes("k") + reference.bytes
        let payload =
            FormatTesting.commitHeader(records: 1, blocks: 1)
            + FormatTesting.block(encoding: LogFormat.blockEncodingRaw, stored: record, rawLength: UInt32(record.count))
        try Self.add(
            SegmentFile.name(1), SegmentFile.header(number: 1, firstSequence: 1) + FormatTesting.frame(payload: payload, sequence: 1), to: fs)
        // Before: the next blob id, one past the highest referenced, overflowed.
        Self.expectCorruption(fs, "no blob file can have that id")
    }

    @Test func aSegmentHintDeclaringMoreRecordBytesThanItsSegmentCouldHoldIsNotUsed() throws {
        let fs = try Self.smallStore()
        let path = Self.dir + "/" + SegmentHint.name(1)
        var hint = try #require(fs.contents(of: path))
        // record bytes (offset 52) = 2^63, crc32 fixed: every other check still passes.
        for i in 0..<8 { hint[52 + i] = i == 7 ? 0x80 : 0 }
        let crc = FormatTesting.crc32(Array(hint.dropLast(4)))
        for i in 0..<4 { hint[hint.count - 4 + i] = UInt8(truncatingIfNeeded: crc >> (8 * i)) }
        fs.setContents(hint, of: path)
        // Before: open converted the count to an Int and trapped. Now the segment is replayed.
        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        #expect(store.statistics.recovery.segmentHintsLoaded == 0)
        #expect(try store.value(forKey: bytes("key")) == bytes("value"))
        try store.close()
    }
}
