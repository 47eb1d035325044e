/// Reads one segment file front to back, frame by frame.
///
/// The contract (FORMAT.md, "Recovery"):
/// - Every frame returned has passed its crc32 and structural checks.
/// - In the **newest** segment, a frame that is cut short by the end of the file (its header, or
///   its payload after a verified header), or that fails a checksum while every byte after it is
///   zero, is a *torn tail*: the last write before a crash.
/// - In the newest segment, a damaged frame followed by other bytes is a torn tail too when no
///   verified frame after it proves it durable (each frame names the last commit known durable
///   when it was written): unsynced writes that reached the disk out of order. When one does, the
///   damage is to durable data: corruption.
/// - In both torn cases ``nextFrame()`` returns nil and ``tornTail`` says where the cut starts;
///   the caller truncates there.
/// - Anywhere else, the same failure is ``EngineError/Code/corruption`` naming the file and the
///   frame's offset. Nothing is skipped silently.
/// - Nothing is allocated for a declared length before the bytes are known to be in the file.
struct LogReader {
    /// Why a segment's end was not a clean frame boundary.
    struct TornTail: Sendable, Equatable {
        var offset: UInt64
        var reason: String
        /// Verified frames after the cut that had to go with it (unsynced writes that reached
        /// the disk before an earlier one did).
        var discardedFrames: Int = 0
    }

    /// A verified frame.
    struct Frame {
        var offset: UInt64
        var sequence: UInt64
        /// ``LogFormat/frameTypeCommit`` or ``LogFormat/frameTypeClose`` (which has no payload).
        var type: UInt8
        /// The last commit known durable when the frame was written.
        var durableSequence: UInt64
        /// Header and payload.
        var bytes: ArraySlice<UInt8>
        var payload: ArraySlice<UInt8> { bytes.dropFirst(LogFormat.frameHeaderSize) }
        var isClose: Bool { type == LogFormat.frameTypeClose }
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
    /// The sequence the next frame should carry: from the segment header, then each frame's
    /// successor. What a later frame's durable sequence is compared with when a frame is damaged.
    private(set) var nextSequence: UInt64 = 0

    private var buffer: [UInt8] = []
    private var bufferStart: UInt64 = 0
    private static let chunkSize = 1 << 20

    init(file: any StoreFile, segmentNumber: UInt64, isNewest: Bool) throws(EngineError) {
        self.file = file
        self.segmentNumber = segmentNumber
        self.isNewest = isNewest
        self.fileSize = try file.size()
    }

    /// Reads and checks the segment header and returns the sequence its first frame carries; nil
    /// when the newest segment's header is torn (a crash while the segment was being created):
    /// the caller rewrites it.
    mutating func readHeader() throws(EngineError) -> UInt64? {
        let size = UInt64(LogFormat.segmentHeaderSize)
        guard fileSize >= size else {
            if isNewest {
                tornTail = TornTail(offset: 0, reason: "segment header is short (\(fileSize) bytes)")
                return nil
            }
            throw .corruption("segment header is short (\(fileSize) bytes)", path: file.path, offset: 0)
        }
        let header = try bytes(at: 0, count: LogFormat.segmentHeaderSize)
        let crcAt = LogFormat.segmentHeaderChecksumOffset
        if isNewest, checksum(header.prefix(crcAt)) != loadUInt32(header, at: header.startIndex + crcAt), try isZero(from: 0) {
            tornTail = TornTail(offset: 0, reason: "segment header is zero-filled")
            return nil
        }
        let first = try SegmentFile.checkHeader(
            Array(header), magic: LogFormat.segmentMagic, kind: "segment", number: segmentNumber, path: file.path)
        validLength = size
        nextSequence = first
        return first
    }

    /// Continues reading at `offset`, a frame boundary past the header that the caller knows from
    /// a segment hint, where the frame of `sequence` starts: the frames before it are not read.
    mutating func resume(at offset: UInt64, sequence: UInt64) {
        validLength = offset
        nextSequence = sequence
    }

    /// The next verified frame, or nil at the end of the segment (check ``tornTail``). Zero bytes
    /// running to the end of the file are preallocated space: the clean end of the segment.
    mutating func nextFrame() throws(EngineError) -> Frame? {
        let offset = validLength
        let remaining = fileSize - offset
        if remaining == 0 { return nil }
        let visible = try bytes(at: offset, count: Int(min(remaining, UInt64(LogFormat.frameHeaderSize))))
        if isAllZero(visible), try isZero(from: offset) { return nil }
        switch try frame(at: offset) {
        case .frame(let frame):
            validLength = offset + UInt64(frame.bytes.count)
            if !frame.isClose { nextSequence = frame.sequence &+ 1 }
            return frame
        case .invalid(let message):
            // A checksummed header that no writer produces: never a torn write.
            throw .corruption(message, path: file.path, offset: offset)
        case .damaged(let reason, let zeroFrom):
            return try torn(at: offset, reason, zeroFrom: zeroFrom)
        }
    }

    /// What lies at `offset`: a verified frame; a header that passed its checksum but that no
    /// writer produces; or damage (cut short, or a checksum mismatch), with where the bytes after
    /// it start when they could be a torn write's zeros.
    private enum Parsed {
        case frame(Frame)
        case invalid(String)
        case damaged(String, zeroFrom: UInt64?)
    }

    private mutating func frame(at offset: UInt64) throws(EngineError) -> Parsed {
        let remaining = fileSize - offset
        let headerSize = UInt64(LogFormat.frameHeaderSize)
        guard remaining >= headerSize else {
            return .damaged("frame header is short (\(remaining) bytes before end of file)", zeroFrom: nil)
        }
        let header = try bytes(at: offset, count: LogFormat.frameHeaderSize)
        var reader = ByteReader(header)
        let expected = reader.readUInt32()!
        let headerChecksum = reader.readUInt32()!
        guard checksum(header.dropFirst(8)) == headerChecksum else {
            // The length cannot be trusted; only zeros after the header make this a torn tail.
            return .damaged("frame header checksum mismatch", zeroFrom: offset + headerSize)
        }
        let length = reader.readUInt32()!
        let sequence = reader.readUInt64()!
        let type = reader.readUInt8()!
        let flags = reader.readUInt8()!
        let reserved = reader.readUInt16()!
        let durable = reader.readUInt64()!
        // A sequence past the limit would leave the next commits none: no writer produces it. A
        // commit names an earlier commit durable; a close frame (no payload) repeats the last
        // commit's sequence, durable with every commit before it.
        let isCommit = type == LogFormat.frameTypeCommit && durable < sequence
        let isClose = type == LogFormat.frameTypeClose && length == 0 && durable == sequence
        guard isCommit || isClose, flags == 0, reserved == 0, Int(length) <= LogFormat.maxFramePayload,
            sequence < LogFormat.maxSequence
        else {
            return .invalid(
                "frame header is invalid (type \(type), flags \(flags), reserved \(reserved), length \(length), sequence \(sequence), durable sequence \(durable))"
            )
        }
        guard UInt64(length) <= remaining - headerSize else {
            return .damaged("frame of \(length) payload bytes runs past the end of the file", zeroFrom: nil)
        }
        let frameBytes = try bytes(at: offset, count: LogFormat.frameHeaderSize + Int(length))
        guard checksum(frameBytes.dropFirst(4)) == expected else {
            return .damaged("frame checksum mismatch", zeroFrom: offset + headerSize + UInt64(length))
        }
        return .frame(Frame(offset: offset, sequence: sequence, type: type, durableSequence: durable, bytes: frameBytes))
    }

    /// A bad frame at `offset`. In the newest segment it is a torn tail when the damage is of the
    /// kind a crash leaves: cut short, or followed only by zeros from `zeroFrom`, or followed by
    /// bytes among which no verified frame names it durable. Anything else is corruption.
    private mutating func torn(at offset: UInt64, _ reason: String, zeroFrom: UInt64?) throws(EngineError) -> Frame? {
        guard isNewest else { throw .corruption(reason, path: file.path, offset: offset) }
        if try zeroFrom.map({ start throws(EngineError) in try isZero(from: start) }) ?? true {
            tornTail = TornTail(offset: offset, reason: reason)
            return nil
        }
        let (later, proof) = try framesAfter(offset)
        if let proof {
            throw .corruption(
                "\(reason), but the frame at offset \(proof.offset) (sequence \(proof.sequence)) was written after commit \(nextSequence) was durable: durable data is damaged",
                path: file.path, offset: offset)
        }
        tornTail = TornTail(
            offset: offset,
            reason:
                "\(reason), and no later frame shows it durable: unsynced writes lost\(later > 0 ? " (\(later) later frames discarded with it)" : "")",
            discardedFrames: later)
        return nil
    }

    /// The verified frames after damage at `offset` (``verifiedFrames(from:)``): how many there
    /// are, and the first that names commit ``nextSequence`` (the damaged one) durable, if any.
    private mutating func framesAfter(_ offset: UInt64) throws(EngineError) -> (count: Int, proof: Frame?) {
        let frames = try verifiedFrames(from: offset + 1)
        return (frames.count, frames.first { $0.durableSequence >= nextSequence })
    }

    /// Every verified frame at or after `offset`, trying each byte offset where none was found
    /// yet: what recovery looks through after damage, and what salvage reads out of bytes it sets
    /// aside to say which commits and keys they held. Reads the rest of the file once.
    mutating func verifiedFrames(from offset: UInt64) throws(EngineError) -> [Frame] {
        var frames: [Frame] = []
        var position = offset
        while position + UInt64(LogFormat.frameHeaderSize) <= fileSize {
            guard case .frame(let frame) = try frame(at: position) else {
                position += 1
                continue
            }
            frames.append(frame)
            position += UInt64(frame.bytes.count)
        }
        return frames
    }

    /// What salvage finds at `offset` when it looks for frames past damage
    /// (``LogReader/probe(at:)``).
    enum Probe {
        /// A frame that passed every check of its header and its crc32.
        case frame(Frame)
        /// A header that passed its own crc32 and checks, whose payload did not: its sequence and
        /// its whole length (header and payload) can be trusted.
        case damagedPayload(sequence: UInt64, length: UInt64)
        /// No frame starts here (or none whose header can be trusted).
        case none
    }

    /// The frame at `offset`, if one starts there, or what its verified header says when only
    /// its payload is damaged.
    mutating func probe(at offset: UInt64) throws(EngineError) -> Probe {
        guard offset < fileSize else { return .none }
        switch try frame(at: offset) {
        case .frame(let frame):
            return .frame(frame)
        case .invalid:
            return .none
        case .damaged:
            // The header's own crc32 held when the payload's check failed: its length is true.
            let header = try bytes(at: offset, count: min(LogFormat.frameHeaderSize, Int(fileSize - offset)))
            guard header.count == LogFormat.frameHeaderSize,
                checksum(header.dropFirst(8)) == loadUInt32(header, at: header.startIndex + 4)
            else { return .none }
            var reader = ByteReader(header.dropFirst(8))
            let length = UInt64(reader.readUInt32()!)
            let sequence = reader.readUInt64()!
            return .damagedPayload(sequence: sequence, length: UInt64(LogFormat.frameHeaderSize) + length)
        }
    }

    /// Where the file's last non-zero byte ends (0 when every byte is zero): the zeros after it
    /// are preallocated space, or nothing a frame could start in.
    mutating func endOfNonZeroBytes() throws(EngineError) -> UInt64 {
        var end = fileSize
        while end > 0 {
            let count = Int(min(UInt64(Self.chunkSize), end))
            let chunk = try bytes(at: end - UInt64(count), count: count)
            if let last = chunk.lastIndex(where: { $0 != 0 }) { return end - UInt64(count) + UInt64(last - chunk.startIndex) + 1 }
            end -= UInt64(count)
        }
        return 0
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
