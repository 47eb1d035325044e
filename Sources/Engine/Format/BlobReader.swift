/// An open blob file whose header and chunk table have been checked against the reference that
/// names it. Chunks are read one at a time, each verified before its bytes are returned.
struct BlobReader: Sendable {
    struct Chunk: Sendable {
        var offset: UInt64
        var storedLength: Int
        var rawLength: Int
        var checksum: UInt32
    }

    let file: any StoreFile
    let reference: BlobReference
    let chunks: [Chunk]

    /// Opens blob `reference.id` in `directory` and checks its size, header and chunk table.
    ///
    /// - Throws: ``EngineError/Code/missingBlob`` when the file is not there;
    ///   ``EngineError/Code/corruption`` naming the file when any check fails.
    init(reference: BlobReference, directory: String, fileSystem: any FileSystem) throws(EngineError) {
        let path = directory + "/" + BlobFile.name(reference.id)
        let file: any StoreFile
        do throws(EngineError) {
            file = try fileSystem.openFile(path, create: false)
        } catch where error.errno == 2 {
            throw EngineError(
                .missingBlob, "blob \(BlobFile.name(reference.id)) is missing", path: path,
                systemCall: error.systemCall, errno: error.errno)
        }
        let size = try file.size()
        guard size == reference.fileLength else {
            throw .corruption(
                "blob file is \(size) bytes but its reference says \(reference.fileLength) (truncated or overwritten)",
                path: path, offset: min(size, reference.fileLength))
        }
        let count = BlobFile.chunkCount(length: reference.length)
        let tableSize = UInt64(count * LogFormat.blobChunkEntrySize + 4)
        guard size >= UInt64(LogFormat.blobHeaderSize) + tableSize else {
            throw .corruption("blob file of \(size) bytes cannot hold its header and \(count) chunk entries", path: path, offset: 0)
        }
        let header = try file.read(at: 0, count: LogFormat.blobHeaderSize)
        guard header.count == LogFormat.blobHeaderSize,
            checksum(header[0..<36]) == loadUInt32(header[...], at: 36)
        else { throw .corruption("blob header checksum mismatch", path: path, offset: 0) }
        guard header[0..<36].elementsEqual(BlobFile.header(for: reference)[0..<36]) else {
            throw .corruption("blob header does not match the reference (another blob's file?)", path: path, offset: 0)
        }
        let tableOffset = size - tableSize
        let table = try file.read(at: tableOffset, count: Int(tableSize))
        guard table.count == Int(tableSize),
            checksum(table.dropLast(4)) == loadUInt32(table[...], at: table.count - 4)
        else { throw .corruption("blob chunk table checksum mismatch", path: path, offset: tableOffset) }
        var reader = ByteReader(table[...])
        var chunks: [Chunk] = []
        chunks.reserveCapacity(count)
        var offset = UInt64(LogFormat.blobHeaderSize)
        var remaining = reference.length
        for index in 0..<count {
            let storedLength = Int(reader.readUInt32()!)
            let crc = reader.readUInt32()!
            let rawLength = Int(min(remaining, UInt64(LogFormat.blobChunkSize)))
            let valid = reference.encoding == LogFormat.blobEncodingRaw
                ? storedLength == rawLength
                : storedLength >= 1 && storedLength <= rawLength
                    && rawLength <= storedLength * LogFormat.maxInflateRatio
            guard valid else {
                throw .corruption("blob chunk \(index) stores \(storedLength) bytes for \(rawLength)", path: path, offset: tableOffset)
            }
            chunks.append(Chunk(offset: offset, storedLength: storedLength, rawLength: rawLength, checksum: crc))
            offset += UInt64(storedLength)
            remaining -= UInt64(rawLength)
        }
        guard offset == tableOffset else {
            throw .corruption("blob chunks end at \(offset) but the table starts at \(tableOffset)", path: path, offset: tableOffset)
        }
        self.file = file
        self.reference = reference
        self.chunks = chunks
    }

    /// Chunk `index`'s content, verified (and inflated when it was stored compressed).
    func chunk(_ index: Int) throws(EngineError) -> [UInt8] {
        let chunk = chunks[index]
        let stored = try file.read(at: chunk.offset, count: chunk.storedLength)
        guard stored.count == chunk.storedLength, checksum(stored[...]) == chunk.checksum else {
            throw .corruption("blob chunk \(index) checksum mismatch", path: file.path, offset: chunk.offset)
        }
        if chunk.storedLength == chunk.rawLength { return stored }
        guard let raw = Zlib.decompress(stored[...], rawLength: chunk.rawLength) else {
            throw .corruption("blob chunk \(index) does not inflate to \(chunk.rawLength) bytes", path: file.path, offset: chunk.offset)
        }
        return raw
    }

    /// The whole content, every chunk and the content checksum verified.
    func readAll() throws(EngineError) -> [UInt8] {
        var bytes: [UInt8] = []
        // Sized by the file, not by the reference alone: a crafted length allocates nothing.
        bytes.reserveCapacity(Int(min(reference.length, reference.fileLength)))
        var crc: UInt32 = 0
        for index in chunks.indices {
            let chunk = try chunk(index)
            crc = extendContentChecksum(crc, chunk: index, content: chunk)
            bytes += chunk
        }
        try verifyContent(crc)
        return bytes
    }

    /// The content checksum so far, `crc`, extended by chunk `index` whose content is `content`.
    /// A raw chunk's stored checksum (already verified) is its content's checksum, combined in
    /// O(1); only an inflated chunk is checksummed again.
    func extendContentChecksum(_ crc: UInt32, chunk index: Int, content: [UInt8]) -> UInt32 {
        let chunk = chunks[index]
        guard chunk.storedLength == chunk.rawLength else { return checksum(content[...], seed: crc) }
        return combineChecksums(crc, chunk.checksum, length: chunk.rawLength)
    }

    /// Checks the crc32 of the whole content against the reference's.
    func verifyContent(_ crc: UInt32) throws(EngineError) {
        guard crc == reference.checksum else {
            throw .corruption("blob content checksum mismatch", path: file.path, offset: UInt64(LogFormat.blobHeaderSize))
        }
    }

    /// Calls `body` with the content in memory: the file mapped (raw blobs; every chunk verified
    /// first) or inflated into a buffer (compressed blobs).
    func withContent<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard reference.encoding == LogFormat.blobEncodingRaw else {
            return try readAll().withUnsafeBytes(body)
        }
        let mapping = try file.map()
        let start = LogFormat.blobHeaderSize
        let content = UnsafeRawBufferPointer(rebasing: mapping.bytes[start..<start + Int(reference.length)])
        var crc: UInt32 = 0
        for (index, chunk) in chunks.enumerated() {
            let from = Int(chunk.offset) - start
            let bytes = UnsafeRawBufferPointer(rebasing: content[from..<from + chunk.storedLength])
            guard checksum(bytes) == chunk.checksum else {
                throw EngineError.corruption("blob chunk \(index) checksum mismatch", path: file.path, offset: chunk.offset)
            }
            crc = combineChecksums(crc, chunk.checksum, length: chunk.rawLength)
        }
        try verifyContent(crc)
        return try withExtendedLifetime(mapping) { try body(content) }
    }
}
