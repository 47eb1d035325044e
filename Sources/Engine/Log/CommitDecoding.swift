/// Decodes what ``EncodedCommit`` wrote. Every length is checked against the bytes actually
/// present before anything is allocated, and a block never inflates past its declared raw length.
enum CommitDecoding {
    /// One record of a decoded commit payload, with offsets relative to the frame's first byte.
    typealias Record = RecordPlacement

    /// Decodes a verified commit payload into its records, in commit order.
    /// - Parameters:
    ///   - frameOffset: where the frame starts in `path`, for error messages.
    static func records(
        inPayload payload: ArraySlice<UInt8>, frameOffset: UInt64, path: String
    ) throws(EngineError) -> [Record] {
        try records(inPayload: payload, frameOffset: frameOffset, path: path) { _, _ throws(EngineError) in }
    }

    /// Like ``records(inPayload:frameOffset:path:)``, also handing each block's raw bytes and its
    /// records (frame-relative offsets) to `body` as they are decoded: compaction copies values
    /// out of them.
    static func records(
        inPayload payload: ArraySlice<UInt8>, frameOffset: UInt64, path: String,
        eachBlock body: ([UInt8], ArraySlice<Record>) throws(EngineError) -> Void
    ) throws(EngineError) -> [Record] {
        let base = payload.startIndex - LogFormat.frameHeaderSize  // frame-relative origin
        func fail(_ message: String, at position: Int) -> EngineError {
            .corruption(message, path: path, offset: frameOffset + UInt64(position - base))
        }
        var reader = ByteReader(payload)
        guard let recordCount = reader.readUInt32(), let blockCount = reader.readUInt32() else {
            throw fail("commit payload is shorter than its 8-byte header", at: payload.startIndex)
        }
        guard blockCount >= 1, recordCount >= blockCount else {
            throw fail("commit declares \(recordCount) records in \(blockCount) blocks", at: payload.startIndex)
        }
        var records: [Record] = []
        records.reserveCapacity(min(Int(recordCount), 4096))  // a hint only: never trust a count
        for _ in 0..<blockCount {
            let blockStart = reader.position
            guard let header = reader.readBytes(LogFormat.blockHeaderSize) else {
                throw fail("block header runs past the end of the payload", at: blockStart)
            }
            let storedLength = Int(loadUInt32(header, at: header.startIndex + 4))
            guard let stored = reader.readBytes(storedLength) else {
                throw fail("block declares \(storedLength) stored bytes, more than the payload holds", at: blockStart)
            }
            let raw = try block(
                header: header, stored: stored, path: path, offset: frameOffset + UInt64(blockStart - base))
            let first = records.count
            try parseRecords(
                raw, blockOffset: blockStart - base, blockLength: reader.position - blockStart,
                into: &records, limit: Int(recordCount)
            ) { message, rawOffset in
                fail("\(message) (at byte \(rawOffset) of the block's raw bytes)", at: blockStart)
            }
            try body(raw, records[first...])
        }
        guard reader.isAtEnd else { throw fail("bytes follow the last block of the commit", at: reader.position) }
        guard records.count == Int(recordCount) else {
            throw fail("commit declares \(recordCount) records but holds \(records.count)", at: payload.startIndex)
        }
        return records
    }

    /// Verifies one block (header and stored bytes, as read from disk) and returns its raw bytes.
    static func block(
        header: ArraySlice<UInt8>, stored: ArraySlice<UInt8>, path: String, offset: UInt64
    ) throws(EngineError) -> [UInt8] {
        var reader = ByteReader(header)
        guard let encoding = reader.readUInt8(), let r1 = reader.readUInt8(), let r2 = reader.readUInt8(),
            let r3 = reader.readUInt8(), let storedLength = reader.readUInt32(),
            let rawLength = reader.readUInt32(), let expected = reader.readUInt32()
        else { throw .corruption("block header is short", path: path, offset: offset) }
        guard Int(storedLength) == stored.count else {
            throw .corruption("block declares \(storedLength) stored bytes but \(stored.count) are present", path: path, offset: offset)
        }
        let actual = checksum(stored, seed: checksum(header.prefix(12)))
        guard actual == expected else {
            throw .corruption("block checksum mismatch", path: path, offset: offset)
        }
        guard r1 == 0, r2 == 0, r3 == 0 else {
            throw .corruption("block reserved bytes are not zero", path: path, offset: offset)
        }
        guard rawLength >= 1, Int(rawLength) <= LogFormat.maxBlockRawLength else {
            throw .corruption("block declares a raw length of \(rawLength)", path: path, offset: offset)
        }
        switch encoding {
        case LogFormat.blockEncodingRaw:
            guard rawLength == storedLength else {
                throw .corruption("raw block declares \(rawLength) raw bytes but stores \(storedLength)", path: path, offset: offset)
            }
            return Array(stored)
        case LogFormat.blockEncodingZlib:
            guard Int(rawLength) <= Int(storedLength) * LogFormat.maxInflateRatio else {
                throw .corruption(
                    "compressed block declares \(rawLength) raw bytes from \(storedLength), past zlib's maximum ratio", path: path, offset: offset)
            }
            guard let raw = Zlib.decompress(stored, rawLength: Int(rawLength)) else {
                throw .corruption("compressed block does not inflate to its declared \(rawLength) bytes", path: path, offset: offset)
            }
            return raw
        default:
            throw .corruption("unknown block encoding \(encoding)", path: path, offset: offset)
        }
    }

    /// Parses the records of one block's raw bytes. Records in a pack file carry their commit's
    /// sequence number after the kind (`withSequence`); a pack holds no deletes.
    static func parseRecords(
        _ raw: [UInt8], blockOffset: Int, blockLength: Int, into records: inout [Record], limit: Int,
        withSequence: Bool = false, fail: (String, Int) -> EngineError
    ) throws(EngineError) {
        var reader = ByteReader(raw[...])
        while !reader.isAtEnd {
            let start = reader.position
            guard records.count < limit else { throw fail("more records than the commit declares", start) }
            guard let kind = reader.readUInt8() else { throw fail("record is short", start) }
            guard
                kind == LogFormat.recordPut || kind == LogFormat.recordBlob
                    || (kind == LogFormat.recordDelete && !withSequence)
            else { throw fail("unknown record kind \(kind)", start) }
            var sequence: UInt64?
            if withSequence {
                guard let value = reader.readUInt64() else { throw fail("record is short", start) }
                sequence = value
            }
            guard let keyLength = reader.readVarint(limit: LogFormat.maxKeyLength), keyLength >= 1 else {
                throw fail("record key length is invalid", start)
            }
            var valueLength: Int?
            if kind == LogFormat.recordPut {
                guard let length = reader.readVarint(limit: LogFormat.maxValueLength) else {
                    throw fail("record value length is invalid", start)
                }
                valueLength = length
            }
            guard let key = reader.readBytes(keyLength) else { throw fail("record key runs past the block", start) }
            let valueOffset = reader.position
            var blob: BlobReference?
            if kind == LogFormat.recordBlob {
                guard let reference = BlobReference.read(from: &reader) else {
                    throw fail("blob reference is short or invalid", start)
                }
                blob = reference
                valueLength = LogFormat.blobReferenceSize
            } else if let valueLength, reader.readBytes(valueLength) == nil {
                throw fail("record value runs past the block", start)
            }
            records.append(
                Record(
                    key: Array(key), valueLength: valueLength, blob: blob, sequence: sequence, blockOffset: blockOffset,
                    blockLength: blockLength, valueOffset: valueOffset, recordSize: reader.position - start))
        }
    }
}
