/// Segment hint files (FORMAT.md, "Segment hint files"): beside a segment, the last operation on
/// each key its first frames hold (all of them, for a sealed segment; those written before the
/// last clean close, for the newest), in key order, so that open learns those keys without
/// reading or inflating the frames. Derived data: a hint that fails any check is ignored and the
/// segment is replayed instead.
struct SegmentHint: Equatable {
    /// A key whose last record in the covered frames is a delete.
    struct Delete: Equatable {
        var key: [UInt8]
        var sequence: UInt64
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
    /// The keys whose last record is a put (or blob put), ascending, ready for the index; and
    /// those whose last record is a delete, ascending. No key is in both.
    var puts: [IndexEntry]
    var deletes: [Delete]

    /// How many entries the file holds.
    var entryCount: Int { puts.count + deletes.count }

    /// The raw size of a delete record (its tombstone).
    static func deleteSize(_ delete: Delete) -> Int {
        recordSize(keyLength: delete.key.count, valueLength: nil, isBlob: false)
    }

    /// The record bytes no entry describes: records that later records of the same frames
    /// replaced, dead in the segment from the start. Never negative for a hint that loaded
    /// (``load(_:number:fileSize:isNewest:firstSequence:)`` checks the entries' sizes against
    /// ``recordBytes``, which it bounds).
    var replacedRecordBytes: Int {
        replacedRecordBytes(putRecordBytes: puts.reduce(0) { $0 + Int($1.location.recordSize) })
    }

    /// ``replacedRecordBytes`` of a hint whose puts went to a sink (``LoadedRun``) rather than
    /// ``puts``: `putRecordBytes` is the sum of their record sizes.
    func replacedRecordBytes(putRecordBytes: Int) -> Int {
        Int(recordBytes) - putRecordBytes - deletes.reduce(0) { $0 + Self.deleteSize($1) }
    }

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
        /// Every record in log order (a put's index entry, or a delete), sorted by key below and
        /// cut to the last of each key: a list, not a table by key, so that a segment of a
        /// million records costs one entry each while the hint is built.
        var records: [Record] = []
        var hint = SegmentHint(
            segment: number, coveredLength: 0, lastFrameOffset: 0, firstSequence: 0, frameCount: 0,
            recordBytes: 0, puts: [], deletes: [])
        if let previous {
            hint = previous
            hint.puts = []
            hint.deletes = []
            records.reserveCapacity(previous.entryCount)
            // A previous hint holds one record per key: their order among themselves is moot.
            for entry in previous.puts { records.append(.put(entry)) }
            for delete in previous.deletes { records.append(.delete(delete)) }
            reader.resume(at: previous.coveredLength, sequence: previous.firstSequence + previous.frameCount)
        }
        while reader.validLength < end, let frame = try reader.nextFrame() {
            // A close frame is only ever the newest segment's last, after the covered frames.
            if frame.isClose { continue }
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
                if record.valueLength != nil {
                    let location = Location(
                        record, file: number, blockOffset: frame.offset + UInt64(record.blockOffset),
                        blockLength: record.blockLength, sequence: frame.sequence)
                    records.append(.put(IndexEntry(key: record.key, location: location, blob: record.blob)))
                } else {
                    records.append(.delete(Delete(key: record.key, sequence: frame.sequence)))
                }
            }
        }
        hint.coveredLength = reader.validLength
        // By key, and for one key in log order: the last of a run wins.
        let order = RecordOrder(records)
        for i in 0..<order.count where i + 1 == order.count || !order.sameKey(i, i + 1) {
            switch records[order.index(i)] {
            case .put(let entry): hint.puts.append(entry)
            case .delete(let delete): hint.deletes.append(delete)
            }
        }
        return hint
    }

    /// The records of a segment sorted by key, and for one key in log order, without touching
    /// the records themselves while sorting: their key tails (the bytes after the seventh) are
    /// copied once into one buffer, and the sort moves, in place, 16-byte items that carry each
    /// key's 8-byte ``KeyOrder`` prefix, which settles most comparisons, and its record's index.
    private struct RecordOrder {
        private struct Item {
            var prefix: UInt64
            var index: Int
        }
        private var items: [Item] = []
        private var tails: [UInt8] = []
        /// Where record i's tail ends in `tails`; it starts where record i - 1's ends.
        private var tailEnds: [Int] = []

        init(_ records: [Record]) {
            items.reserveCapacity(records.count)
            tailEnds.reserveCapacity(records.count)
            tails.reserveCapacity(records.reduce(0) { $0 + max($1.key.count - KeyOrder.prefixLength, 0) })
            for (index, record) in records.enumerated() {
                record.key.withUnsafeBytes { key in
                    tails.append(contentsOf: KeyOrder.tail(key))
                    tailEnds.append(tails.count)
                    items.append(Item(prefix: KeyOrder.prefix(key), index: index))
                }
            }
            let ends = tailEnds
            tails.withUnsafeBytes { bytes in
                func tail(_ index: Int) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: bytes[(index == 0 ? 0 : ends[index - 1])..<ends[index]])
                }
                items.sort { a, b in
                    if a.prefix != b.prefix { return a.prefix < b.prefix }
                    if KeyOrder.hasTail(a.prefix) {
                        let order = compareBytes(tail(a.index), tail(b.index))
                        if order != 0 { return order < 0 }
                    }
                    return a.index < b.index
                }
            }
        }

        var count: Int { items.count }

        /// The index (in the records sorted) of the record at sorted position `position`.
        func index(_ position: Int) -> Int { items[position].index }

        /// True when the records at sorted positions `a` and `b` have the same key.
        func sameKey(_ a: Int, _ b: Int) -> Bool {
            let (x, y) = (items[a], items[b])
            guard x.prefix == y.prefix else { return false }
            guard KeyOrder.hasTail(x.prefix) else { return true }
            return tails.withUnsafeBytes { bytes in
                func tail(_ index: Int) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: bytes[(index == 0 ? 0 : tailEnds[index - 1])..<tailEnds[index]])
                }
                return compareBytes(tail(x.index), tail(y.index)) == 0
            }
        }
    }

    /// One record of a segment while its hint is built.
    private enum Record {
        case put(IndexEntry)
        case delete(Delete)

        var key: [UInt8] {
            switch self {
            case .put(let entry): entry.key
            case .delete(let delete): delete.key
            }
        }
    }

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: LogFormat.segmentHintHeaderSize + entryCount * 32 + 4)
        writer.append(contentsOf: LogFormat.segmentHintMagic)
        writer.append(LogFormat.formatVersion)
        writer.append(UInt16(0))
        writer.append(segment)
        writer.append(coveredLength)
        writer.append(lastFrameOffset)
        writer.append(firstSequence)
        writer.append(frameCount)
        writer.append(recordBytes)
        writer.append(UInt64(entryCount))
        writer.append(UInt32(0))
        // The puts and the deletes, merged back into one key order.
        var p = 0
        var d = 0
        while p < puts.count || d < deletes.count {
            let isDelete = p == puts.count || (d < deletes.count && compareBytes(deletes[d].key, puts[p].key) < 0)
            if isDelete {
                let delete = deletes[d]
                d += 1
                writer.append(LogFormat.recordDelete)
                writer.appendVarint(delete.key.count)
                writer.append(contentsOf: delete.key)
                writer.appendVarint64(delete.sequence - firstSequence)
                continue
            }
            let entry = puts[p]
            p += 1
            let location = entry.location
            writer.append(entry.blob == nil ? LogFormat.recordPut : LogFormat.recordBlob)
            writer.appendVarint(entry.key.count)
            writer.append(contentsOf: entry.key)
            writer.appendVarint64(location.sequence - firstSequence)
            writer.appendVarint64(location.blockOffset)
            writer.appendVarint(Int(location.blockLength))
            writer.appendValueFields(of: entry)
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
        /// A whole, checksummed hint of this version that its segment contradicts: the segment is
        /// shorter than the bytes the hint covers, or lacks the frame it names last. Those frames
        /// were durable before the hint was written, so the segment lost them: corruption, and
        /// the hint is left as it is (the evidence of what was lost).
        case contradicted(String)
    }

    /// Reads and checks the hint of segment `number`, whose file is `fileSize` bytes (all of
    /// them covered by the hint, for a sealed segment; at least the covered ones, for the newest)
    /// and whose first frame must have sequence `firstSequence` (when given). Every length and offset is
    /// checked against its bound before it is used; nothing here can trap or over-allocate.
    static func load(
        _ file: any StoreFile, number: UInt64, fileSize: UInt64, isNewest: Bool, firstSequence: UInt64?
    ) throws(Unusable) -> SegmentHint {
        var list = IndexEntryList()
        var hint = try load(file, number: number, fileSize: fileSize, isNewest: isNewest, firstSequence: firstSequence, into: &list)
        hint.puts = list.entries
        return hint
    }

    /// ``load(_:number:fileSize:isNewest:firstSequence:)``, handing each put entry to `sink` as it
    /// is decoded (in key order) instead of collecting them in ``puts``, which stays empty. A
    /// sink must not be used when this throws: it may have taken some of the entries.
    static func load<Sink: IndexEntrySink>(
        _ file: any StoreFile, number: UInt64, fileSize: UInt64, isNewest: Bool, firstSequence: UInt64?,
        into sink: inout Sink
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
        guard length <= fileSize else {
            throw .contradicted("segment is \(fileSize) bytes but its hint describes \(length)")
        }
        guard isNewest || length == fileSize else {
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
        var deletes: [Delete] = []
        var previousKey: ArraySlice<UInt8>?
        var sizes: UInt64 = 0
        for index in 0..<count {
            func bad(_ message: String) -> Unusable { .invalid("entry \(index): \(message)") }
            guard let kind = reader.readUInt8(),
                kind == LogFormat.recordPut || kind == LogFormat.recordDelete || kind == LogFormat.recordBlob,
                let keyLength = reader.readVarint(limit: LogFormat.maxKeyLength), keyLength >= 1,
                let key = reader.readBytes(keyLength), let step = reader.readVarint64(), step < frames
            else { throw bad("invalid or short") }
            if let previousKey,
                previousKey.withUnsafeBytes({ a in key.withUnsafeBytes { b in compareBytes(a, b) } }) >= 0
            {
                throw bad("keys out of order")
            }
            previousKey = key
            var valueLength: Int?
            if kind == LogFormat.recordDelete {
                deletes.append(Delete(key: Array(key), sequence: first + step))
            } else {
                guard let blockOffset = reader.readVarint64(),
                    let blockLength = reader.readVarint(limit: LogFormat.maxBlockRawLength + LogFormat.blockHeaderSize),
                    let valueOffset = reader.readVarint(limit: LogFormat.maxBlockRawLength),
                    blockOffset >= UInt64(LogFormat.segmentHeaderSize + LogFormat.frameHeaderSize), blockOffset <= length,
                    blockLength > LogFormat.blockHeaderSize, UInt64(blockLength) <= length - blockOffset
                else { throw bad("block lies outside the segment") }
                var stored = Location.blobMarker
                var blob: BlobReference?
                if kind == LogFormat.recordBlob {
                    guard let reference = BlobReference.read(from: &reader) else { throw bad("invalid blob reference") }
                    blob = reference
                } else {
                    guard let length = reader.readVarint(limit: LogFormat.maxValueLength) else { throw bad("invalid value length") }
                    stored = UInt32(length)
                    valueLength = length
                }
                let recordSize = recordSize(keyLength: keyLength, valueLength: valueLength, isBlob: kind == LogFormat.recordBlob)
                let location = Location(
                    segment: number, blockOffset: blockOffset, blockLength: UInt32(blockLength),
                    valueOffset: UInt32(valueOffset), valueLength: stored, recordSize: UInt32(recordSize),
                    sequence: first + step)
                sink.put(key, location, blob: blob)
            }
            sizes += UInt64(recordSize(keyLength: keyLength, valueLength: valueLength, isBlob: kind == LogFormat.recordBlob))
        }
        guard reader.isAtEnd else { throw .invalid("bytes follow the last entry") }
        guard sizes <= recordBytes else { throw .invalid("entries hold \(sizes) record bytes of the \(recordBytes) declared") }
        // No more than the covered bytes could inflate to (and so a count that fits an Int).
        guard recordBytes / UInt64(LogFormat.maxInflateRatio) <= length else {
            throw .invalid("hint declares \(recordBytes) record bytes in \(length) bytes of segment")
        }
        return SegmentHint(
            segment: number, coveredLength: length, lastFrameOffset: lastFrame, firstSequence: first,
            frameCount: frames, recordBytes: recordBytes, puts: [], deletes: deletes)
    }

    /// Checks that the segment holds the frame the hint names last: a verified frame header at
    /// ``lastFrameOffset`` with the hint's last sequence, ending exactly at ``coveredLength``. A
    /// hint that loaded is whole and checksummed, and was written after the frames it describes
    /// were durable: a segment that fails this check lost them (``Unusable/contradicted(_:)``).
    func checkLastFrame(in file: any StoreFile) throws(Unusable) {
        guard let header = try? file.read(at: lastFrameOffset, count: LogFormat.frameHeaderSize),
            header.count == LogFormat.frameHeaderSize
        else { throw .contradicted("the segment's frame at \(lastFrameOffset), the last its hint describes, cannot be read") }
        var reader = ByteReader(header[...])
        _ = reader.readUInt32()
        let headerChecksum = reader.readUInt32()!
        let length = UInt64(reader.readUInt32()!)
        let sequence = reader.readUInt64()!
        let type = reader.readUInt8()!
        guard checksum(header.dropFirst(8)) == headerChecksum, type == LogFormat.frameTypeCommit,
            sequence == firstSequence + frameCount - 1,
            lastFrameOffset + UInt64(LogFormat.frameHeaderSize) + length == coveredLength
        else { throw .contradicted("the segment's frame at \(lastFrameOffset) is not the one its hint describes last") }
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
