import CZlib

/// Where one record of a commit lands, relative to the start of its frame.
struct RecordPlacement: Sendable {
    var key: [UInt8]
    /// nil for a delete.
    var valueLength: Int?
    /// Set for a value stored in a blob file (then the record's "value" is the reference).
    var blob: BlobReference? = nil
    /// The commit's sequence number; set only for records read from a pack file.
    var sequence: UInt64? = nil
    /// Offset of the record's block header from the frame's first byte.
    var blockOffset: Int
    /// Block header plus stored bytes.
    var blockLength: Int
    /// Offset of the value inside the block's raw (uncompressed) bytes.
    var valueOffset: Int
    /// The record's encoded size in raw bytes: what it adds to live or dead bytes.
    var recordSize: Int
}

/// A commit encoded as one frame, compressed and checksummed except for the header, which
/// depends on the sequence number, known only once the frame's place in the log is
/// (``header(sequence:)``).
struct EncodedCommit: Sendable {
    /// The whole frame, with a zero-filled header in its first 32 bytes.
    let frame: [UInt8]
    let records: [RecordPlacement]
    /// crc32 of the payload alone, so that sealing costs O(1) whatever the frame's size.
    private let payloadChecksum: UInt32

    /// Encodes `operations` (already validated) into blocks of about `blockSize` raw bytes,
    /// each compressed at `level` unless that does not make it smaller.
    init(_ operations: [WriteBatch.Operation], level: Int, blockSize: Int) {
        var payload = ByteWriter(capacity: LogFormat.frameHeaderSize + 64)
        payload.append(contentsOf: repeatElement(0, count: LogFormat.frameHeaderSize))
        payload.append(UInt32(operations.count))
        payload.append(UInt32(0))  // block count, set below
        var records: [RecordPlacement] = []
        records.reserveCapacity(operations.count)
        var blockCount: UInt32 = 0

        var raw = ByteWriter(capacity: blockSize + 64)
        var pending: [RecordPlacement] = []
        // The blocks' raw bytes and records, compressed together once all are cut.
        var rawBlocks: [[UInt8]] = []
        var blockRecords: [[RecordPlacement]] = []

        func flushBlock() {
            guard !raw.bytes.isEmpty else { return }
            rawBlocks.append(raw.bytes)
            blockRecords.append(pending)
            pending.removeAll(keepingCapacity: true)
            raw.bytes.removeAll(keepingCapacity: true)
        }

        for op in operations {
            let start = raw.bytes.count
            switch op {
            case .put(let key, let value):
                raw.append(LogFormat.recordPut)
                raw.appendVarint(key.count)
                raw.appendVarint(value.count)
                raw.append(contentsOf: key)
                let valueOffset = raw.bytes.count
                raw.append(contentsOf: value)
                pending.append(
                    RecordPlacement(
                        key: key, valueLength: value.count, blockOffset: 0, blockLength: 0,
                        valueOffset: valueOffset, recordSize: raw.bytes.count - start))
            case .blob(let key, let reference):
                raw.append(LogFormat.recordBlob)
                raw.appendVarint(key.count)
                raw.append(contentsOf: key)
                let valueOffset = raw.bytes.count
                reference.append(to: &raw)
                pending.append(
                    RecordPlacement(
                        key: key, valueLength: LogFormat.blobReferenceSize, blob: reference, blockOffset: 0,
                        blockLength: 0, valueOffset: valueOffset, recordSize: raw.bytes.count - start))
            case .putBlob:
                preconditionFailure("a blob is written before its batch is encoded")
            case .delete(let key):
                raw.append(LogFormat.recordDelete)
                raw.appendVarint(key.count)
                raw.append(contentsOf: key)
                pending.append(
                    RecordPlacement(
                        key: key, valueLength: nil, blockOffset: 0, blockLength: 0,
                        valueOffset: raw.bytes.count, recordSize: raw.bytes.count - start))
            }
            if raw.bytes.count >= blockSize { flushBlock() }
        }
        flushBlock()
        // A large commit's blocks are deflated in parallel, so one committer uses every core.
        // A block under 1 KiB (a commit of a record or two) is stored raw: deflate would cost
        // about 10 µs on the committing thread to gain a few hundred bytes.
        let worthCompressing = level > 0 && rawBlocks.reduce(0) { $0 + $1.count } >= Self.smallestCompressed
        var compressed = worthCompressing ? Zlib.compressEach(rawBlocks, level: level) : rawBlocks.map { _ in nil }
        // The frame at its final size at once, and each block's raw and compressed bytes let go
        // of as soon as they are in it: a large commit never holds its bytes three times over.
        payload.bytes.reserveCapacity(
            payload.bytes.count
                + rawBlocks.indices.reduce(0) { total, index in
                    total + LogFormat.blockHeaderSize + (compressed[index]?.count ?? rawBlocks[index].count)
                })
        for index in rawBlocks.indices {
            let rawBlock = rawBlocks[index]
            let stored = compressed[index]
            rawBlocks[index] = []
            compressed[index] = nil
            let blockStart = payload.bytes.count
            payload.appendBlock(
                encoding: stored == nil ? LogFormat.blockEncodingRaw : LogFormat.blockEncodingZlib,
                stored: stored ?? rawBlock, rawLength: UInt32(rawBlock.count))
            let blockLength = payload.bytes.count - blockStart
            for var placement in blockRecords[index] {
                placement.blockOffset = blockStart
                placement.blockLength = blockLength
                records.append(placement)
            }
            blockCount += 1
        }
        payload.set(blockCount, at: LogFormat.frameHeaderSize + 4)

        self.frame = payload.bytes
        self.records = records
        self.payloadChecksum = checksum(payload.bytes[LogFormat.frameHeaderSize...])
    }

    var payloadLength: Int { frame.count - LogFormat.frameHeaderSize }

    /// Commits of fewer raw bytes are stored uncompressed.
    static let smallestCompressed = 1024

    /// The frame's 32-byte header for `sequence`, written when every commit up to
    /// `durableSequence` is known durable: the header checksum over bytes 8..<32, then the frame
    /// checksum over bytes 4..<end (the rest of the header, then the payload), combined with the
    /// payload's checksum in O(1).
    func header(sequence: UInt64, durableSequence: UInt64) -> [UInt8] {
        frameHeader(
            type: LogFormat.frameTypeCommit, declaredLength: UInt32(payloadLength), sequence: sequence,
            durableSequence: durableSequence, payloadChecksum: payloadChecksum, payloadLength: payloadLength)
    }

    /// Appends the complete frame for `sequence` to `buffer` (``header(sequence:durableSequence:)``).
    func append(to buffer: inout [UInt8], sequence: UInt64, durableSequence: UInt64) {
        buffer.append(contentsOf: header(sequence: sequence, durableSequence: durableSequence))
        buffer.append(contentsOf: frame[LogFormat.frameHeaderSize...])
    }
}

/// A frame header (FORMAT.md, "Frame header"): the header checksum over bytes 8..<32, then the
/// frame checksum over bytes 4..<32 followed by the payload, combined with `payloadChecksum` (the
/// crc32 of the payload's `payloadLength` bytes) in O(1). `durableSequence` is the last commit
/// known durable when the frame is written (below `sequence`).
func frameHeader(
    type: UInt8, declaredLength: UInt32, sequence: UInt64, durableSequence: UInt64, payloadChecksum: UInt32,
    payloadLength: Int
) -> [UInt8] {
    var header = ByteWriter(capacity: LogFormat.frameHeaderSize)
    header.append(UInt32(0))
    header.append(UInt32(0))
    header.append(declaredLength)
    header.append(sequence)
    header.append(type)
    header.append(UInt8(0))
    header.append(UInt16(0))
    header.append(durableSequence)
    header.set(checksum(header.bytes[8...]), at: 4)
    let headerChecksum = checksum(header.bytes[4...])
    let combined = UInt32(crc32_combine(uLong(headerChecksum), uLong(payloadChecksum), off_t(payloadLength)))
    header.set(combined, at: 0)
    return header.bytes
}

/// The close frame (FORMAT.md, "Frame header"): type 2, no payload, written by a clean close
/// once every commit up to `lastSequence` is durable; its sequence and durable sequence are both
/// `lastSequence` (0 when the store holds no commit).
func closeFrame(lastSequence: UInt64) -> [UInt8] {
    frameHeader(
        type: LogFormat.frameTypeClose, declaredLength: 0, sequence: lastSequence, durableSequence: lastSequence,
        payloadChecksum: checksum([UInt8]()[...]), payloadLength: 0)
}

extension ByteWriter {
    /// Appends a block (FORMAT.md, "Block header and stored bytes"): header, crc32 of header bytes
    /// 0..<12 followed by the stored bytes, then the stored bytes.
    mutating func appendBlock(encoding: UInt8, stored: [UInt8], rawLength: UInt32) {
        let start = bytes.count
        append(encoding)
        append(contentsOf: [0, 0, 0])
        append(UInt32(stored.count))
        append(rawLength)
        append(checksum(stored[...], seed: checksum(bytes[start..<start + 12])))
        append(contentsOf: stored)
    }
}
