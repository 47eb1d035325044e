/// Segment hint files (FORMAT.md, "Segment hint files"): beside a segment, the last operation on
/// each key its first frames hold (all of them, for a sealed segment; those written before the
/// last clean close, for the newest), in key order, so that open learns those keys without
/// reading or inflating the frames. Derived data: a hint that fails any check is ignored and the
/// segment is replayed instead.
struct SegmentHint: Equatable {
    /// The last operation on one key in the segment.
    struct Entry: Equatable {
        var key: [UInt8]
        var sequence: UInt64
        /// Where the value is; nil for a delete.
        var location: Location?
        var blob: BlobReference?
    }

    var segment: UInt64
    /// The hint describes the frames in the segment's first `coveredLength` bytes: the whole file
    /// for a sealed segment.
    var coveredLength: UInt64
    /// Where the last frame described starts: open checks that frame's header, so a hint never
    /// describes another segment that happens to bear the same number and size.
    var lastFrameOffset: UInt64
    var firstSequence: UInt64
    var frameCount: UInt64
    /// The raw sizes of every record in the segment, superseded ones included.
    var recordBytes: UInt64
    /// Ascending, one per key.
    var entries: [Entry]

    static func name(_ segment: UInt64) -> String { hex16(segment) + LogFormat.segmentHintSuffix }

    /// The segment number a segment hint's file name encodes (finished or temporary), or nil.
    static func number(fromName name: String) -> UInt64? {
        let stem = name.hasSuffix(LogFormat.temporarySuffix) ? String(name.dropLast(LogFormat.temporarySuffix.count)) : name
        guard stem.count == 16 + LogFormat.segmentHintSuffix.count, stem.hasSuffix(LogFormat.segmentHintSuffix) else {
            return nil
        }
        return parseFileNumber(stem.prefix(16))
    }

    /// A commit record's raw size, which the hint does not store: kind, key length, (a put) value
    /// length, key, and the value or (a blob put) the 33-byte reference.
    static func recordSize(keyLength: Int, valueLength: Int?, isBlob: Bool) -> Int {
        var size = 1 + varintSize(keyLength) + keyLength
        if isBlob {
            size += LogFormat.blobReferenceSize
        } else if let valueLength {
            size += varintSize(valueLength) + valueLength
        }
        return size
    }

    /// Reads segment `number` frame by frame, verifying each (as replay does), up to `length`
    /// bytes (a frame boundary; the whole file when nil), and returns its hint. With `previous`,
    /// a hint of the segment's first frames, only the frames after those are read. Throws what
    /// the reader throws for a damaged segment.
    static func build(
        from file: any StoreFile, number: UInt64, upTo length: UInt64? = nil, extending previous: SegmentHint? = nil
    ) throws(EngineError) -> SegmentHint {
        var reader = try LogReader(file: file, segmentNumber: number, isNewest: false)
        _ = try reader.readHeader()
        let end = length ?? reader.fileSize
        var last: [HashedKey: Entry] = [:]
        var hint = SegmentHint(
            segment: number, coveredLength: 0, lastFrameOffset: 0, firstSequence: 0, frameCount: 0,
            recordBytes: 0, entries: [])
        if let previous {
            hint = previous
            last.reserveCapacity(previous.entries.count)
            for entry in previous.entries { last[HashedKey(entry.key)] = entry }
            reader.resume(at: previous.coveredLength)
        }
        while reader.validLength < end, let frame = try reader.nextFrame() {
            if hint.frameCount == 0 { hint.firstSequence = frame.sequence }
            guard frame.sequence < LogFormat.maxSequence, frame.sequence == hint.firstSequence + hint.frameCount else {
                throw .corruption(
                    "frame sequence \(frame.sequence) where \(hint.firstSequence + hint.frameCount) was expected",
                    path: file.path, offset: frame.offset)
            }
            hint.frameCount += 1
            hint.lastFrameOffset = frame.offset
            for record in try CommitDecoding.records(inPayload: frame.payload, frameOffset: frame.offset, path: file.path) {
                hint.recordBytes += UInt64(record.recordSize)
                var entry = Entry(key: record.key, sequence: frame.sequence, location: nil, blob: record.blob)
                if record.valueLength != nil {
                    entry.location = Location(
                        record, file: number, blockOffset: frame.offset + UInt64(record.blockOffset),
                        blockLength: record.blockLength, sequence: frame.sequence)
                }
                last[HashedKey(record.key)] = entry
            }
        }
        hint.coveredLength = reader.validLength
        hint.entries = last.values.sorted { compareBytes($0.key, $1.key) < 0 }
        return hint
    }

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: LogFormat.segmentHintHeaderSize + entries.count * 32 + 4)
        writer.append(contentsOf: LogFormat.segmentHintMagic)
        writer.append(LogFormat.formatVersion)
        writer.append(UInt16(0))
        writer.append(segment)
        writer.append(coveredLength)
        writer.append(lastFrameOffset)
        writer.append(firstSequence)
        writer.append(frameCount)
        writer.append(recordBytes)
        writer.append(UInt64(entries.count))
        writer.append(UInt32(0))
        for entry in entries {
            let kind = entry.location == nil ? LogFormat.recordDelete : entry.blob == nil ? LogFormat.recordPut : LogFormat.recordBlob
            writer.append(kind)
            writer.appendVarint(entry.key.count)
            writer.append(contentsOf: entry.key)
            writer.appendVarint64(entry.sequence - firstSequence)
            guard let location = entry.location else { continue }
            writer.appendVarint64(location.blockOffset)
            writer.appendVarint(Int(location.blockLength))
            writer.appendVarint(Int(location.valueOffset))
            if let blob = entry.blob {
                blob.append(to: &writer)
            } else {
                writer.appendVarint(Int(location.valueLength))
            }
        }
        writer.append(checksum(writer.bytes[...]))
        return writer.bytes
    }

    /// Why a hint file could not be used.
    enum Unusable: Error {
        /// Damaged, stale, or not a hint: the segment is replayed and the hint written anew.
        case invalid(String)
        /// A well-formed (checksummed) hint of another format version: open refuses the store as
        /// ``EngineError/Code/unsupportedFormat`` and changes nothing.
        case unsupportedVersion(UInt16)
    }

    /// Reads and checks the hint of segment `number`, whose file is `fileSize` bytes (all of
    /// them covered by the hint, for a sealed segment; at least the covered ones, for the newest)
    /// and whose first frame must have sequence `firstSequence` (when given). Every length and offset is
    /// checked against its bound before it is used; nothing here can trap or over-allocate.
    static func load(
        _ file: any StoreFile, number: UInt64, fileSize: UInt64, isNewest: Bool, firstSequence: UInt64?
    ) throws(Unusable) -> SegmentHint {
        let headerSize = LogFormat.segmentHintHeaderSize
        guard let size = try? file.size() else { throw .invalid("hint file cannot be read") }
        guard size >= UInt64(headerSize + 4), size <= UInt64(Int32.max) * 64 else {
            throw .invalid("hint file of \(size) bytes")
        }
        guard let bytes = try? file.read(at: 0, count: Int(size)), bytes.count == Int(size) else {
            throw .invalid("hint file cannot be read whole")
        }
        // The magic first, so a foreign file is told apart from a damaged one.
        guard bytes[0..<8].elementsEqual(LogFormat.segmentHintMagic) else { throw .invalid("not a segment hint (bad magic)") }
        guard checksum(bytes.dropLast(4)) == loadUInt32(bytes[...], at: bytes.count - 4) else {
            throw .invalid("hint file checksum mismatch")
        }
        var reader = ByteReader(bytes.dropLast(4))
        _ = reader.readBytes(8)
        let version = reader.readUInt16()!
        guard version == LogFormat.formatVersion else { throw .unsupportedVersion(version) }
        let flags = reader.readUInt16()!
        let segment = reader.readUInt64()!
        let length = reader.readUInt64()!
        let lastFrame = reader.readUInt64()!
        let first = reader.readUInt64()!
        let frames = reader.readUInt64()!
        let recordBytes = reader.readUInt64()!
        let count = reader.readUInt64()!
        let reserved = reader.readUInt32()!
        guard flags == 0, reserved == 0, segment == number else { throw .invalid("hint header does not describe segment \(number)") }
        guard isNewest ? length <= fileSize : length == fileSize else {
            throw .invalid("hint describes \(length) bytes of a \(fileSize)-byte segment")
        }
        guard length >= UInt64(LogFormat.segmentHeaderSize + LogFormat.frameHeaderSize),
            lastFrame >= UInt64(LogFormat.segmentHeaderSize), lastFrame <= length - UInt64(LogFormat.frameHeaderSize)
        else {
            throw .invalid("hint's last frame at \(lastFrame) lies outside its \(length) bytes")
        }
        // Raw record bytes are at most the covered bytes inflated at deflate's largest ratio: a
        // bound that keeps every sum of them far inside `Int`.
        guard recordBytes <= length * UInt64(LogFormat.maxInflateRatio) else {
            throw .invalid("hint declares \(recordBytes) record bytes in \(length) bytes of segment")
        }
        guard first == firstSequence ?? first, frames >= 1, frames <= length, first >= 1,
            first < LogFormat.maxSequence - frames
        else {
            throw .invalid("hint's frames \(first) + \(frames) do not follow sequence \((firstSequence ?? 0) &- 1)")
        }
        // An entry is at least a kind, a key length, a key byte and a sequence step.
        guard count <= UInt64(reader.remaining / 4) else { throw .invalid("hint declares \(count) entries in \(reader.remaining) bytes") }
        var entries: [Entry] = []
        entries.reserveCapacity(Int(count))
        var sizes: UInt64 = 0
        for index in 0..<count {
            func bad(_ message: String) -> Unusable { .invalid("entry \(index): \(message)") }
            guard let kind = reader.readUInt8(),
                kind == LogFormat.recordPut || kind == LogFormat.recordDelete || kind == LogFormat.recordBlob,
                let keyLength = reader.readVarint(limit: LogFormat.maxKeyLength), keyLength >= 1,
                let key = reader.readBytes(keyLength).map(Array.init), let step = reader.readVarint64(), step < frames
            else { throw bad("invalid or short") }
            if let previous = entries.last, compareBytes(previous.key, key) >= 0 { throw bad("keys out of order") }
            var entry = Entry(key: key, sequence: first + step, location: nil, blob: nil)
            var valueLength: Int?
            if kind != LogFormat.recordDelete {
                guard let blockOffset = reader.readVarint64(),
                    let blockLength = reader.readVarint(limit: LogFormat.maxBlockRawLength + LogFormat.blockHeaderSize),
                    let valueOffset = reader.readVarint(limit: LogFormat.maxBlockRawLength),
                    blockOffset >= UInt64(LogFormat.segmentHeaderSize + LogFormat.frameHeaderSize), blockOffset <= length,
                    blockLength > LogFormat.blockHeaderSize, UInt64(blockLength) <= length - blockOffset
                else { throw bad("block lies outside the segment") }
                var stored = Location.blobMarker
                if kind == LogFormat.recordBlob {
                    guard let blob = BlobReference.read(from: &reader) else { throw bad("invalid blob reference") }
                    entry.blob = blob
                } else {
                    guard let length = reader.readVarint(limit: LogFormat.maxValueLength) else { throw bad("invalid value length") }
                    stored = UInt32(length)
                    valueLength = length
                }
                let recordSize = recordSize(keyLength: keyLength, valueLength: valueLength, isBlob: kind == LogFormat.recordBlob)
                entry.location = Location(
                    segment: number, blockOffset: blockOffset, blockLength: UInt32(blockLength),
                    valueOffset: UInt32(valueOffset), valueLength: stored, recordSize: UInt32(recordSize),
                    sequence: entry.sequence)
            }
            sizes += UInt64(recordSize(keyLength: keyLength, valueLength: valueLength, isBlob: kind == LogFormat.recordBlob))
            entries.append(entry)
        }
        guard reader.isAtEnd else { throw .invalid("bytes follow the last entry") }
        guard sizes <= recordBytes else { throw .invalid("entries hold \(sizes) record bytes of the \(recordBytes) declared") }
        // No more than the covered bytes could inflate to (and so a count that fits an Int).
        guard recordBytes / UInt64(LogFormat.maxInflateRatio) <= length else {
            throw .invalid("hint declares \(recordBytes) record bytes in \(length) bytes of segment")
        }
        return SegmentHint(
            segment: number, coveredLength: length, lastFrameOffset: lastFrame, firstSequence: first,
            frameCount: frames, recordBytes: recordBytes, entries: entries)
    }

    /// Checks that the segment holds the frame the hint names last: a verified frame header at
    /// ``lastFrameOffset`` with the hint's last sequence, ending exactly at ``coveredLength``.
    func checkLastFrame(in file: any StoreFile) throws(Unusable) {
        guard let header = try? file.read(at: lastFrameOffset, count: LogFormat.frameHeaderSize),
            header.count == LogFormat.frameHeaderSize
        else { throw .invalid("the segment's last described frame cannot be read") }
        var reader = ByteReader(header[...])
        _ = reader.readUInt32()
        let headerChecksum = reader.readUInt32()!
        let length = UInt64(reader.readUInt32()!)
        let sequence = reader.readUInt64()!
        guard checksum(header.dropFirst(8)) == headerChecksum, sequence == firstSequence + frameCount - 1,
            lastFrameOffset + UInt64(LogFormat.frameHeaderSize) + length == coveredLength
        else { throw .invalid("the segment's frame at \(lastFrameOffset) is not the one the hint describes last") }
    }
}

/// The byte count of `value` as a LEB128 varint.
func varintSize(_ value: Int) -> Int {
    var size = 1
    var v = value >> 7
    while v > 0 {
        size += 1
        v >>= 7
    }
    return size
}
