extension ByteWriter {
    /// The last fields of a pack hint or segment hint entry for a put: the value's offset in its
    /// block, then its length (a put) or its 33-byte blob reference (a blob put).
    mutating func appendValueFields(of entry: IndexEntry) {
        appendVarint(Int(entry.location.valueOffset))
        if let blob = entry.blob {
            blob.append(to: &self)
        } else {
            appendVarint(Int(entry.location.valueLength))
        }
    }
}

/// Hint files (FORMAT.md, "Hint files"): beside each pack, its index entries in key order, so
/// that open loads a pack's keys without reading or inflating its values. One crc32 at the end
/// covers the whole file; a hint that fails any check is ignored and rebuilt from its pack.
enum HintFile {
    /// The smallest entry: kind, key length, a 1-byte key, sequence, block step, value offset,
    /// value length (one byte each at least).
    static let minimumEntrySize = 7

    static func encode(_ entries: [IndexEntry], packNumber: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: LogFormat.hintHeaderSize + entries.count * 32 + 4)
        writer.append(contentsOf: LogFormat.hintMagic)
        writer.append(LogFormat.formatVersion)
        writer.append(UInt16(0))
        writer.append(packNumber)
        writer.append(UInt64(entries.count))
        writer.append(UInt32(0))
        var previousBlock: UInt64 = 0
        for entry in entries {
            let location = entry.location
            writer.append(entry.blob == nil ? LogFormat.recordPut : LogFormat.recordBlob)
            writer.appendVarint(entry.key.count)
            writer.append(contentsOf: entry.key)
            writer.appendVarint64(location.sequence)
            // Entries come in block order: most share their predecessor's block (step 0).
            writer.appendVarint64(location.blockOffset - previousBlock)
            if location.blockOffset != previousBlock { writer.appendVarint(Int(location.blockLength)) }
            previousBlock = location.blockOffset
            writer.appendValueFields(of: entry)
        }
        writer.append(checksum(writer.bytes[...]))
        return writer.bytes
    }

    /// A pack record's raw size, which the hint does not store: kind, sequence, key length and
    /// value length (a put), key, and the value or the blob reference.
    static func packRecordSize(keyLength: Int, valueLength: Int?) -> Int {
        var size = 1 + 8 + varintSize(keyLength) + keyLength
        if let valueLength {
            size += varintSize(valueLength) + valueLength
        } else {
            size += LogFormat.blobReferenceSize
        }
        return size
    }

    /// Writes the hint of pack `packNumber` under a temporary name and syncs it; returns that
    /// name's path, for the caller to rename into place, and the file's size.
    static func writeTemporary(
        _ entries: [IndexEntry], packNumber: UInt64, directory: String, fileSystem: any FileSystem
    ) throws(EngineError) -> (path: String, size: UInt64) {
        let path = directory + "/" + PackFile.hintName(packNumber) + LogFormat.temporarySuffix
        let bytes = encode(entries, packNumber: packNumber)
        try writeSynced(bytes, to: path, fileSystem: fileSystem)
        return (path, UInt64(bytes.count))
    }

    /// Writes `bytes` as the whole of the file at `path` (created or emptied first), syncing in
    /// steps like a pack (``PackWriter/syncStep``), so a large file never leaves a long sync for a
    /// commit to wait behind.
    static func writeSynced(_ bytes: [UInt8], to path: String, fileSystem: any FileSystem) throws(EngineError) {
        let file = try fileSystem.openFile(path, create: true)
        try file.truncate(to: 0)
        var offset = 0
        repeat {
            let end = min(offset + PackWriter.syncStep, bytes.count)
            try file.write(Array(bytes[offset..<end]), at: UInt64(offset))
            try file.sync()
            offset = end
        } while offset < bytes.count
    }

    /// Reads and verifies the hint of pack `packNumber` (whose file is `packSize` bytes).
    /// Throws ``EngineError/Code/corruption`` for any damage, and the caller then scans the pack;
    /// ``EngineError/Code/unsupportedFormat`` for a checksummed hint of another format version,
    /// which the caller must leave alone.
    static func load(_ file: any StoreFile, packNumber: UInt64, packSize: UInt64) throws(EngineError) -> [IndexEntry] {
        var list = IndexEntryList()
        try load(file, packNumber: packNumber, packSize: packSize, into: &list)
        return list.entries
    }

    /// ``load(_:packNumber:packSize:)``, handing each entry to `sink` as it is decoded, in the
    /// hint's order. A sink must not be used when this throws: it may have taken some entries.
    static func load<Sink: IndexEntrySink>(
        _ file: any StoreFile, packNumber: UInt64, packSize: UInt64, into sink: inout Sink
    ) throws(EngineError) {
        let size = try file.size()
        guard size >= UInt64(LogFormat.hintHeaderSize + 4), size <= UInt64(Int32.max) * 64 else {
            throw .corruption("hint file of \(size) bytes", path: file.path, offset: 0)
        }
        let bytes = try file.read(at: 0, count: Int(size))
        guard bytes.count == Int(size), checksum(bytes.dropLast(4)) == loadUInt32(bytes[...], at: bytes.count - 4) else {
            throw .corruption("hint file checksum mismatch", path: file.path, offset: 0)
        }
        var reader = ByteReader(bytes.dropLast(4))
        guard reader.readBytes(8)!.elementsEqual(LogFormat.hintMagic) else {
            throw .corruption("not a hint file (bad magic)", path: file.path, offset: 0)
        }
        // Checksummed and ours, but written by another version: refused, never rewritten.
        try LogFormat.checkVersion(reader.readUInt16()!, of: "hint", path: file.path)
        guard reader.readUInt16()! == 0, reader.readUInt64()! == packNumber
        else { throw .corruption("hint header does not describe pack \(packNumber)", path: file.path, offset: 0) }
        let count = reader.readUInt64()!
        guard reader.readUInt32()! == 0, count <= UInt64(reader.remaining / minimumEntrySize) else {
            throw .corruption("hint declares \(count) entries in \(reader.remaining) bytes", path: file.path, offset: 20)
        }
        let fileID = PackFile.fileID(packNumber)
        var blockOffset: UInt64 = 0
        var blockLength: UInt64 = 0
        for _ in 0..<count {
            let start = UInt64(reader.position)
            func bad(_ message: String) -> EngineError { .corruption(message, path: file.path, offset: start) }
            guard let kind = reader.readUInt8(), kind == LogFormat.recordPut || kind == LogFormat.recordBlob,
                let keyLength = reader.readVarint(limit: LogFormat.maxKeyLength), keyLength >= 1,
                let key = reader.readBytes(keyLength), let sequence = reader.readVarint64(),
                let step = reader.readVarint64()
            else { throw bad("hint entry is invalid or short") }
            if step != 0 || blockLength == 0 {
                guard step <= packSize, let length = reader.readVarint(limit: LogFormat.maxBlockRawLength) else {
                    throw bad("hint entry's block is invalid")
                }
                blockOffset += step
                blockLength = UInt64(length)
            }
            guard blockOffset >= UInt64(LogFormat.segmentHeaderSize), blockOffset <= packSize,
                blockLength <= packSize - blockOffset, blockLength > UInt64(LogFormat.blockHeaderSize),
                let valueOffset = reader.readVarint(limit: LogFormat.maxBlockRawLength)
            else { throw bad("hint entry's block lies outside its pack") }
            var blob: BlobReference?
            var valueLength = Location.blobMarker
            if kind == LogFormat.recordBlob {
                guard let reference = BlobReference.read(from: &reader) else {
                    throw bad("hint entry's blob reference is invalid")
                }
                blob = reference
            } else {
                guard let length = reader.readVarint(limit: LogFormat.maxValueLength) else {
                    throw bad("hint entry's value length is invalid")
                }
                valueLength = UInt32(length)
            }
            let recordSize = packRecordSize(keyLength: keyLength, valueLength: blob == nil ? Int(valueLength) : nil)
            sink.put(
                key,
                Location(
                    segment: fileID, blockOffset: blockOffset, blockLength: UInt32(blockLength),
                    valueOffset: UInt32(valueOffset), valueLength: valueLength, recordSize: UInt32(recordSize),
                    sequence: sequence),
                blob: blob)
        }
        guard reader.isAtEnd else { throw .corruption("bytes follow the last hint entry", path: file.path, offset: UInt64(reader.position)) }
    }
}
