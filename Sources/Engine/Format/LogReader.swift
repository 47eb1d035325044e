/// Reads one segment file front to back, frame by frame.
///
/// The contract (FORMAT.md, "Recovery"):
/// - Every frame returned has passed its crc32 and structural checks.
/// - In the **newest** segment, a frame that is cut short by the end of the file (its header, or
///   its payload after a verified header), or that fails a checksum while every byte after it is
///   zero, is a *torn tail*: the last write before a crash.
///   ``nextFrame()`` returns nil and ``tornTail`` says where it starts; the caller truncates there.
/// - Anywhere else, the same failure is ``EngineError/Code/corruption`` naming the file and the
///   frame's offset. Nothing is skipped silently.
/// - Nothing is allocated for a declared length before the bytes are known to be in the file.
struct LogReader {
    /// Why a segment's end was not a clean frame boundary.
    struct TornTail: Sendable, Equatable {
        var offset: UInt64
        var reason: String
    }

    /// A verified frame.
    struct Frame {
        var offset: UInt64
        var sequence: UInt64
        /// Header and payload.
        var bytes: ArraySlice<UInt8>
        var payload: ArraySlice<UInt8> { bytes.dropFirst(LogFormat.frameHeaderSize) }
    }

    let file: any StoreFile
    let segmentNumber: UInt64
    let isNewest: Bool
    let fileSize: UInt64
    /// Offset just past the last verified frame (or the header): where the log continues. Any
    /// bytes between it and ``fileSize`` are preallocated zeros (unless ``tornTail`` is set).
    private(set) var validLength: UInt64 = 0
    /// Set when the segment ended in a torn frame or torn header (newest segment only).
    private(set) var tornTail: TornTail?

    private var buffer: [UInt8] = []
    private var bufferStart: UInt64 = 0
    private static let chunkSize = 1 << 20

    init(file: any StoreFile, segmentNumber: UInt64, isNewest: Bool) throws(EngineError) {
        self.file = file
        self.segmentNumber = segmentNumber
        self.isNewest = isNewest
        self.fileSize = try file.size()
    }

    /// Reads and checks the segment header. Returns false when the newest segment's header is
    /// torn (a crash while the segment was being created): the caller rewrites it.
    mutating func readHeader() throws(EngineError) -> Bool {
        let size = UInt64(LogFormat.segmentHeaderSize)
        guard fileSize >= size else {
            if isNewest {
                tornTail = TornTail(offset: 0, reason: "segment header is short (\(fileSize) bytes)")
                return false
            }
            throw .corruption("segment header is short (\(fileSize) bytes)", path: file.path, offset: 0)
        }
        let header = try bytes(at: 0, count: LogFormat.segmentHeaderSize)
        if isNewest, checksum(header.prefix(20)) != loadUInt32(header, at: header.startIndex + 20), try isZero(from: 0) {
            tornTail = TornTail(offset: 0, reason: "segment header is zero-filled")
            return false
        }
        try SegmentFile.checkHeader(Array(header), magic: LogFormat.segmentMagic, kind: "segment", number: segmentNumber, path: file.path)
        validLength = size
        return true
    }

    /// Continues reading at `offset`, a frame boundary past the header that the caller knows from
    /// a segment hint: the frames before it are not read.
    mutating func resume(at offset: UInt64) {
        validLength = offset
    }

    /// The next verified frame, or nil at the end of the segment (check ``tornTail``). Zero bytes
    /// running to the end of the file are preallocated space: the clean end of the segment.
    mutating func nextFrame() throws(EngineError) -> Frame? {
        let offset = validLength
        let remaining = fileSize - offset
        if remaining == 0 { return nil }
        let headerSize = UInt64(LogFormat.frameHeaderSize)
        let visible = try bytes(at: offset, count: Int(min(remaining, headerSize)))
        if isAllZero(visible), try isZero(from: offset) { return nil }
        guard remaining >= headerSize else {
            return try torn(at: offset, "frame header is short (\(remaining) bytes before end of file)", zeroFrom: nil)
        }
        let header = try bytes(at: offset, count: LogFormat.frameHeaderSize)
        var reader = ByteReader(header)
        let expected = reader.readUInt32()!
        let headerChecksum = reader.readUInt32()!
        guard checksum(header.dropFirst(8)) == headerChecksum else {
            // The length cannot be trusted; only zeros after the header make this a torn tail.
            return try torn(at: offset, "frame header checksum mismatch", zeroFrom: offset + headerSize)
        }
        let length = reader.readUInt32()!
        let sequence = reader.readUInt64()!
        let type = reader.readUInt8()!
        let flags = reader.readUInt8()!
        let reserved = reader.readUInt16()!
        // A sequence past the limit would leave the next commits none: no writer produces it.
        guard type == LogFormat.frameTypeCommit, flags == 0, reserved == 0,
            Int(length) <= LogFormat.maxFramePayload, sequence < LogFormat.maxSequence
        else {
            // A checksummed header that no writer produces: never a torn write.
            throw .corruption(
                "frame header is invalid (type \(type), flags \(flags), reserved \(reserved), length \(length), sequence \(sequence))",
                path: file.path, offset: offset)
        }
        guard UInt64(length) <= remaining - headerSize else {
            return try torn(at: offset, "frame of \(length) payload bytes runs past the end of the file", zeroFrom: nil)
        }
        let frameBytes = try bytes(at: offset, count: LogFormat.frameHeaderSize + Int(length))
        guard checksum(frameBytes.dropFirst(4)) == expected else {
            return try torn(at: offset, "frame checksum mismatch", zeroFrom: offset + headerSize + UInt64(length))
        }
        validLength = offset + headerSize + UInt64(length)
        return Frame(offset: offset, sequence: sequence, bytes: frameBytes)
    }

    /// A bad frame at `offset`: a torn tail if this is the newest segment and the damage is of the
    /// kind a crash leaves (cut short, or followed only by zeros from `zeroFrom`), else corruption.
    private mutating func torn(at offset: UInt64, _ reason: String, zeroFrom: UInt64?) throws(EngineError) -> Frame? {
        if isNewest {
            let zeroTail = try zeroFrom.map { start throws(EngineError) in try isZero(from: start) } ?? true
            if zeroTail {
                tornTail = TornTail(offset: offset, reason: reason)
                return nil
            }
        }
        throw .corruption(reason, path: file.path, offset: offset)
    }

    /// True when every byte from `start` to the end of the file is zero.
    private mutating func isZero(from start: UInt64) throws(EngineError) -> Bool {
        var position = start
        while position < fileSize {
            let count = Int(min(UInt64(Self.chunkSize), fileSize - position))
            let chunk = try bytes(at: position, count: count)
            if !isAllZero(chunk) { return false }
            position += UInt64(count)
        }
        return true
    }

    /// `count` bytes at `offset` (which the caller has checked lie inside the file), served from a
    /// read-ahead buffer of at least 1 MiB.
    private mutating func bytes(at offset: UInt64, count: Int) throws(EngineError) -> ArraySlice<UInt8> {
        let end = offset + UInt64(count)
        if offset < bufferStart || end > bufferStart + UInt64(buffer.count) {
            let readCount = Int(min(max(UInt64(count), UInt64(Self.chunkSize)), fileSize - offset))
            buffer = try file.read(at: offset, count: readCount)
            bufferStart = offset
            guard buffer.count >= count else {
                throw .corruption("file ended while reading \(count) bytes (it shrank during open?)", path: file.path, offset: offset)
            }
        }
        let start = Int(offset - bufferStart)
        return buffer[start..<start + count]
    }
}
