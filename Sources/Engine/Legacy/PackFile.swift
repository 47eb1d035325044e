/// One key's entry in the index, as compaction writes it and a hint file stores it.
struct IndexEntry: Sendable, Equatable {
    var key: [UInt8]
    var location: Location
    /// The reference when the value is a blob (then `location.isBlob`).
    var blob: BlobReference?
}

/// Pack files (FORMAT.md, "Pack files"): what compaction writes. A segment-style 32-byte header
/// (magic `WALSPACK`), then blocks in the commit-block format, whose records carry their own
/// sequence numbers and are in key order. A pack holds only live puts; no frames, no deletes.
enum PackFile {
    static func name(_ number: UInt64) -> String { hex16(number) + LogFormat.packSuffix }
    static func hintName(_ number: UInt64) -> String { hex16(number) + LogFormat.hintSuffix }

    /// The pack number a pack or hint file name encodes (finished or temporary), or nil.
    static func number(fromName name: String) -> UInt64? {
        let stem = name.hasSuffix(LogFormat.temporarySuffix) ? String(name.dropLast(LogFormat.temporarySuffix.count)) : name
        guard stem.count == 16 + LogFormat.packSuffix.count,
            stem.hasSuffix(LogFormat.packSuffix) || stem.hasSuffix(LogFormat.hintSuffix)
        else { return nil }
        return parseFileNumber(stem.prefix(16))
    }

    /// The file id of pack `number` in the index and the open-file table.
    static func fileID(_ number: UInt64) -> UInt64 { number | LogFormat.packFileBit }

    static func isPack(_ fileID: UInt64) -> Bool { fileID & LogFormat.packFileBit != 0 }

    /// The pack number behind a pack's file id.
    static func number(ofFileID fileID: UInt64) -> UInt64 { fileID & ~LogFormat.packFileBit }

    /// Reads and checks the header of pack `number` (``SegmentFile/checkHeader(_:magic:kind:number:path:)``).
    static func checkHeader(of file: any StoreFile, number: UInt64) throws(EngineError) {
        let header = try file.read(at: 0, count: LogFormat.segmentHeaderSize)
        let reserved = try SegmentFile.checkHeader(header, magic: LogFormat.packMagic, kind: "pack", number: number, path: file.path)
        guard reserved == 0 else {
            throw EngineError(.unsupportedFormat, "pack header's reserved bytes are not zero", path: file.path, offset: 20)
        }
    }

    /// The 32-byte pack header: a segment's, with magic `WALSPACK` and the first-sequence field 0.
    static func header(number: UInt64) -> [UInt8] {
        SegmentFile.header(magic: LogFormat.packMagic, number: number, firstSequence: 0)
    }

    /// Reads every block of a pack, verifying the header and each block's checksum, and returns
    /// its entries: the fallback when a hint file is missing or damaged. Never trusts a byte it
    /// has not verified; any failure is ``EngineError/Code/corruption`` naming the offset.
    static func scan(_ file: any StoreFile, number: UInt64) throws(EngineError) -> [IndexEntry] {
        var entries: [IndexEntry] = []
        try forEachBlock(of: file, number: number) { blockOffset, blockLength, _, records throws(EngineError) in
            for record in records {
                let location = Location(
                    record, file: fileID(number), blockOffset: blockOffset, blockLength: blockLength,
                    sequence: record.sequence!)
                entries.append(IndexEntry(key: record.key, location: location, blob: record.blob))
            }
        }
        return entries
    }

    /// Calls `body` with each block of pack `number`, in file order: its offset and length, its
    /// verified raw bytes, and its records (value offsets relative to the raw bytes).
    static func forEachBlock(
        of file: any StoreFile, number: UInt64,
        _ body: (UInt64, Int, [UInt8], [RecordPlacement]) throws(EngineError) -> Void
    ) throws(EngineError) {
        let size = try file.size()
        let headerSize = LogFormat.segmentHeaderSize
        guard size >= UInt64(headerSize) else {
            throw .corruption("pack is shorter than its header", path: file.path, offset: 0)
        }
        try checkHeader(of: file, number: number)
        var offset = UInt64(headerSize)
        var buffer: [UInt8] = []
        var bufferStart: UInt64 = 0
        func bytes(_ at: UInt64, _ count: Int) throws(EngineError) -> ArraySlice<UInt8> {
            guard at + UInt64(count) <= size else {
                throw .corruption("block runs past the end of the pack", path: file.path, offset: at)
            }
            if at < bufferStart || at + UInt64(count) > bufferStart + UInt64(buffer.count) {
                buffer = try file.read(at: at, count: max(count, Int(min(UInt64(1 << 20), size - at))))
                bufferStart = at
            }
            let start = Int(at - bufferStart)
            return buffer[start..<start + count]
        }
        while offset < size {
            let head = try bytes(offset, LogFormat.blockHeaderSize)
            let storedLength = Int(loadUInt32(head, at: head.startIndex + 4))
            let blockLength = LogFormat.blockHeaderSize + storedLength
            let block = try bytes(offset, blockLength)
            let raw = try CommitDecoding.block(
                header: block.prefix(LogFormat.blockHeaderSize), stored: block.dropFirst(LogFormat.blockHeaderSize),
                path: file.path, offset: offset)
            var records: [RecordPlacement] = []
            let blockOffset = offset
            try CommitDecoding.parseRecords(
                raw, blockOffset: 0, blockLength: blockLength, into: &records, limit: Int.max, withSequence: true
            ) { message, rawOffset in
                .corruption("\(message) (at byte \(rawOffset) of the block's raw bytes)", path: file.path, offset: blockOffset)
            }
            try body(offset, blockLength, raw, records)
            offset += UInt64(blockLength)
        }
    }
}

/// Writes one pack file: records added in key order are packed into compressed blocks of about
/// the store's block size, and the file is written in large sequential writes under a temporary
/// name. ``finish()`` syncs it; the caller renames it into place.
struct PackWriter {
    let number: UInt64
    let file: any StoreFile
    let temporaryPath: String
    private let level: Int
    private let blockSize: Int
    /// Bytes not yet written, which start at file offset `bufferOffset`.
    private var buffer: [UInt8]
    private var bufferOffset: UInt64 = 0
    private var raw = ByteWriter()
    /// The records of the open block (offsets relative to its raw bytes).
    private var pending: [RecordPlacement] = []
    private(set) var entries: [IndexEntry] = []

    init(number: UInt64, directory: String, level: Int, blockSize: Int, fileSystem: any FileSystem) throws(EngineError) {
        self.number = number
        self.temporaryPath = directory + "/" + PackFile.name(number) + LogFormat.temporarySuffix
        self.file = try fileSystem.openFile(temporaryPath, create: true)
        self.level = level
        self.blockSize = blockSize
        self.buffer = PackFile.header(number: number)
        try file.truncate(to: 0)
    }

    /// The pack's size so far, counting the open block's raw bytes.
    var size: UInt64 { bufferOffset + UInt64(buffer.count + raw.bytes.count) }

    /// Adds a put of `value` (or of `blob`, whose reference is the stored value) written by commit
    /// `sequence`. Keys must come in ascending order.
    mutating func add(key: [UInt8], sequence: UInt64, value: ArraySlice<UInt8>?, blob: BlobReference?) throws(EngineError) {
        let start = raw.bytes.count
        raw.append(blob == nil ? LogFormat.recordPut : LogFormat.recordBlob)
        raw.append(sequence)
        raw.appendVarint(key.count)
        if blob == nil { raw.appendVarint(value!.count) }
        raw.append(contentsOf: key)
        let valueOffset = raw.bytes.count
        if let blob { blob.append(to: &raw) } else { raw.append(contentsOf: value!) }
        pending.append(
            RecordPlacement(
                key: key, valueLength: raw.bytes.count - valueOffset, blob: blob, sequence: sequence, blockOffset: 0,
                blockLength: 0, valueOffset: valueOffset, recordSize: raw.bytes.count - start))
        if raw.bytes.count >= blockSize { try flushBlock() }
    }

    private mutating func flushBlock() throws(EngineError) {
        guard !raw.bytes.isEmpty else { return }
        let compressed = level > 0 ? Zlib.compress(raw.bytes[...], level: level) : nil
        let blockOffset = bufferOffset + UInt64(buffer.count)
        var block = ByteWriter(capacity: LogFormat.blockHeaderSize + (compressed?.count ?? raw.bytes.count))
        block.appendBlock(
            encoding: compressed == nil ? LogFormat.blockEncodingRaw : LogFormat.blockEncodingZlib,
            stored: compressed ?? raw.bytes, rawLength: UInt32(raw.bytes.count))
        buffer += block.bytes
        for record in pending {
            let location = Location(
                record, file: PackFile.fileID(number), blockOffset: blockOffset, blockLength: block.bytes.count,
                sequence: record.sequence!)
            entries.append(IndexEntry(key: record.key, location: location, blob: record.blob))
        }
        pending.removeAll(keepingCapacity: true)
        raw.bytes.removeAll(keepingCapacity: true)
        if buffer.count >= Self.syncStep { try writeBuffer() }
    }

    /// Compaction writes and syncs its files in steps of this many bytes, so the disk never holds
    /// more than this much of them unflushed: a commit's `fdatasync` meanwhile queues behind at
    /// most one step, not behind a whole pack.
    static let syncStep = 1 << 20

    private mutating func writeBuffer() throws(EngineError) {
        try file.write(buffer, at: bufferOffset)
        try file.sync()
        bufferOffset += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is left and syncs the file. Returns the pack's entries, in key order.
    mutating func finish() throws(EngineError) -> [IndexEntry] {
        try flushBlock()
        try writeBuffer()
        return entries
    }
}
