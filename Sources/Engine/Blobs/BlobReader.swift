import Dispatch

/// An open blob file whose header and chunk table have been checked against the reference that
/// names it. Chunks are read one at a time, each verified before its bytes are returned.
struct BlobReader: Sendable {
    struct Chunk: Sendable {
        var offset: UInt64
        var storedLength: Int
        var rawLength: Int
        /// The hash of the stored bytes.
        var hash: UInt64
    }

    let file: any StoreFile
    let reference: BlobReference
    let chunks: [Chunk]
    /// The chunks' hash, by the file's version.
    let hash: BlobChunkHash

    /// Opens blob `reference.id` in `directory` and checks its size, header and chunk table.
    ///
    /// - Throws: ``EngineError/Code/missingBlob`` when the file is not there;
    ///   ``EngineError/Code/corruption`` naming the file when any check fails.
    init(reference: BlobReference, directory: String, fileSystem: any FileSystem) throws(EngineError) {
        let path = directory + "/" + BlobFile.name(reference.id)
        let file: any StoreFile
        do throws(EngineError) {
            file = try fileSystem.openFile(path, create: false)
        } catch  where error.errno == Syscall.noSuchFile {
            throw EngineError(
                .missingBlob, "blob \(BlobFile.name(reference.id)) is missing", path: path,
                systemCall: error.systemCall, errno: error.errno)
        }
        let size = try file.size()
        let header = try file.read(at: 0, count: Int(min(size, UInt64(LogFormat.blobHeaderSize))))
        let covered = LogFormat.blobHeaderSize - 4  // all but the header's own crc32
        // A file that is not ours at all, before any size or checksum calls it damaged.
        if header.count >= 8 {
            try LogFormat.checkMagic(header, LogFormat.blobMagic, checksumAt: covered, of: "blob", path: path)
        }
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
        guard header.count == LogFormat.blobHeaderSize,
            checksum(header[0..<covered]) == loadUInt32(header[...], at: covered)
        else { throw .corruption("blob header checksum mismatch", path: path, offset: 0) }
        let version = loadUInt16(header[...], at: 8)
        guard let hash = BlobChunkHash(version: version) else {
            throw EngineError(
                .unsupportedFormat,
                "blob format version \(version) is not supported (this build reads 3 and \(LogFormat.blobVersion)); open the store with the build that wrote it",
                path: path, offset: 8)
        }
        guard header[0..<covered].elementsEqual(BlobFile.header(for: reference, version: version)[0..<covered]) else {
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
            let hash = reader.readUInt64()!
            let rawLength = Int(min(remaining, UInt64(LogFormat.blobChunkSize)))
            let valid =
                reference.encoding == LogFormat.blobEncodingRaw
                ? storedLength == rawLength
                : storedLength >= 1 && storedLength <= rawLength
                    && rawLength <= storedLength * LogFormat.maxInflateRatio
            guard valid else {
                throw .corruption("blob chunk \(index) stores \(storedLength) bytes for \(rawLength)", path: path, offset: tableOffset)
            }
            chunks.append(Chunk(offset: offset, storedLength: storedLength, rawLength: rawLength, hash: hash))
            offset += UInt64(storedLength)
            remaining -= UInt64(rawLength)
        }
        guard offset == tableOffset else {
            throw .corruption("blob chunks end at \(offset) but the table starts at \(tableOffset)", path: path, offset: tableOffset)
        }
        self.file = file
        self.reference = reference
        self.chunks = chunks
        self.hash = hash
    }

    /// Chunk `index`'s content, verified (and inflated when it was stored compressed).
    func chunk(_ index: Int) throws(EngineError) -> [UInt8] {
        let chunk = chunks[index]
        let stored = try file.read(at: chunk.offset, count: chunk.storedLength)
        guard stored.count == chunk.storedLength, hash(stored[...]) == chunk.hash else {
            throw .corruption("blob chunk \(index) checksum mismatch", path: file.path, offset: chunk.offset)
        }
        if chunk.storedLength == chunk.rawLength { return stored }
        guard let raw = Zlib.decompress(stored[...], rawLength: chunk.rawLength) else {
            throw .corruption("blob chunk \(index) does not inflate to \(chunk.rawLength) bytes", path: file.path, offset: chunk.offset)
        }
        return raw
    }

    /// The whole content, every chunk and the content checksum verified. A raw blob is read with
    /// one `pread` into the buffer returned, each chunk hashed where it lies; a compressed one
    /// chunk by chunk.
    func readAll() throws(EngineError) -> [UInt8] {
        if reference.encoding == LogFormat.blobEncodingRaw { return try readAllRaw() }
        var bytes: [UInt8] = []
        // Sized by the file, not by the reference alone: a crafted length allocates nothing.
        bytes.reserveCapacity(Int(min(reference.length, reference.fileLength)))
        var digest = ContentDigest()
        for index in chunks.indices {
            let chunk = try chunk(index)
            addContent(of: index, chunk, to: &digest)
            bytes += chunk
        }
        try verifyContent(digest)
        return bytes
    }

    /// A raw blob's content: one read of the bytes between header and table (their length was
    /// checked against the file's size at open, so a crafted reference allocates nothing more),
    /// then every chunk's hash checked in place.
    private func readAllRaw() throws(EngineError) -> [UInt8] {
        let start = UInt64(LogFormat.blobHeaderSize)
        let length = chunks.reduce(0) { $0 + $1.storedLength }
        let bytes = try file.read(at: start, count: length)
        guard bytes.count == length else {
            throw .corruption("blob content ends after \(bytes.count) of \(length) bytes", path: file.path, offset: start + UInt64(bytes.count))
        }
        // `withUnsafeBytes` rethrows untyped; carry the typed error out in a `Result`.
        try bytes.withUnsafeBytes { content in Result { () throws(EngineError) in try verifyRaw(content) } }.get()
        return bytes
    }

    /// The whole content in a ``ValueBuffer``, every chunk and the content checksum verified: a
    /// raw blob read with one `pread` straight into the buffer (its length was checked against
    /// the file's size at open, so a crafted reference allocates nothing more), each chunk hashed
    /// where it lies; a compressed one inflated chunk by chunk and copied in.
    func readAllIntoBuffer() throws(EngineError) -> ValueBuffer {
        let length = chunks.reduce(0) { $0 + $1.rawLength }
        let buffer = ValueBuffer(count: length)
        let target = buffer.fill
        if reference.encoding == LogFormat.blobEncodingRaw {
            let start = UInt64(LogFormat.blobHeaderSize)
            let count = try file.read(at: start, into: target)
            guard count == length else {
                throw .corruption("blob content ends after \(count) of \(length) bytes", path: file.path, offset: start + UInt64(count))
            }
            try verifyRaw(buffer.bytes)
            return buffer
        }
        var digest = ContentDigest()
        var position = 0
        for index in chunks.indices {
            let content = try chunk(index)
            addContent(of: index, content, to: &digest)
            guard content.count <= length - position else {
                throw .corruption("blob chunk \(index) holds more than the value's length", path: file.path, offset: chunks[index].offset)
            }
            content.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: target[position..<position + content.count]).copyMemory(from: $0) }
            position += content.count
        }
        try verifyContent(digest)
        return buffer
    }

    /// Checks a raw blob's `content` (every chunk, back to back, as in the file) in place: each
    /// chunk's hash, on all cores when there are several, then the content checksum.
    private func verifyRaw(_ content: UnsafeRawBufferPointer) throws(EngineError) {
        let start = LogFormat.blobHeaderSize
        let intact: [Bool]
        if chunks.count == 1 {
            intact = [hash(content) == chunks[0].hash]
        } else {
            // A read from the page cache is otherwise bound by hashing on one core.
            let results = Locked([Bool](repeating: false, count: chunks.count))
            let shared = MappedBytes(bytes: content)
            let (chunks, hash) = (chunks, hash)
            DispatchQueue.concurrentPerform(iterations: chunks.count) { index in
                let chunk = chunks[index]
                let from = Int(chunk.offset) - start
                let ok = hash(UnsafeRawBufferPointer(rebasing: shared.bytes[from..<from + chunk.storedLength])) == chunk.hash
                results.withLock { $0[index] = ok }
            }
            intact = results.withLock { $0 }
        }
        var digest = ContentDigest()
        for index in chunks.indices {
            guard intact[index] else {
                throw EngineError.corruption("blob chunk \(index) checksum mismatch", path: file.path, offset: chunks[index].offset)
            }
            digest.add(chunks[index].hash)
        }
        try verifyContent(digest)
    }

    /// Adds chunk `index`, whose verified content is `content`, to `digest`. A raw chunk's stored
    /// hash (already verified) is its content's hash; only an inflated chunk is hashed again.
    func addContent(of index: Int, _ content: [UInt8], to digest: inout ContentDigest) {
        let chunk = chunks[index]
        digest.add(chunk.storedLength == chunk.rawLength ? chunk.hash : hash(content[...]))
    }

    /// Checks the content checksum of the whole value against the reference's.
    func verifyContent(_ digest: ContentDigest) throws(EngineError) {
        guard digest.value == reference.checksum else {
            throw .corruption("blob content checksum mismatch", path: file.path, offset: UInt64(LogFormat.blobHeaderSize))
        }
    }

    /// The content in memory, verified: the file mapped (raw blobs; every chunk checked first) or
    /// inflated into a buffer (compressed blobs).
    func content() throws(EngineError) -> BlobContent {
        guard reference.encoding == LogFormat.blobEncodingRaw else { return .bytes(try readAll()) }
        let mapping = try file.map()
        let start = LogFormat.blobHeaderSize
        let range = start..<start + Int(reference.length)
        try withExtendedLifetime(mapping) { () throws(EngineError) in
            try verifyRaw(UnsafeRawBufferPointer(rebasing: mapping.bytes[range]))
        }
        return .mapped(mapping, range)
    }
}

/// A value's verified bytes in memory: a buffer, or a range of a mapped file.
enum BlobContent {
    case bytes([UInt8])
    case mapped(MappedFile, Range<Int>)

    /// Calls `body` with the bytes, valid only inside it.
    func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        switch self {
        case .bytes(let bytes):
            // `withUnsafeBytes` rethrows untyped; carry the typed error out in a `Result`.
            return try bytes.withUnsafeBytes { buffer in Result { () throws(E) -> R in try body(buffer) } }.get()
        case .mapped(let mapping, let range):
            defer { withExtendedLifetime(mapping) {} }
            return try body(UnsafeRawBufferPointer(rebasing: mapping.bytes[range]))
        }
    }
}

/// A blob's bytes, shared read-only with the threads that verify its chunks.
///
/// `@unchecked Sendable` because the pointer is not: nobody writes the memory while the chunks
/// are verified (a read-only mapping, or a buffer already filled), and it stays valid until
/// `verifyRaw(_:)` returns, after `concurrentPerform` (which returns only when every thread is
/// done with it).
private struct MappedBytes: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer
}
