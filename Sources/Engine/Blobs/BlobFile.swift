/// Where a blob's bytes come from.
enum BlobSource: Sendable {
    case bytes([UInt8])
    /// A caller's file, copied in 1 MiB chunks and never loaded whole.
    case file(String)
}

/// Writing and reading blob files (FORMAT.md, "Blob files"): a 44-byte header, the content in
/// chunks of 1 MiB (each compressed on its own, or stored raw), a table of the chunks' stored
/// lengths and hashes (``BlobChunkHash``), and the table's crc32.
enum BlobFile {
    /// `00000000000000a1.blob`: 16 lower-case hex digits of the id.
    static func name(_ id: UInt64) -> String { hex16(id) + LogFormat.blobSuffix }

    /// The id a blob file's name encodes (a blob, or an earlier build's temporary blob file), or
    /// nil for any other file.
    static func id(fromName name: String) -> UInt64? {
        for suffix in [LogFormat.blobSuffix, LogFormat.blobTemporarySuffix] where name.hasSuffix(suffix) {
            guard name.count == 16 + suffix.count else { return nil }
            return parseFileNumber(name.prefix(16))
        }
        return nil
    }

    /// Creates blob `id`'s file in `directory` under its final name, empty. Until a commit names
    /// the blob it is unreferenced: a crash before then leaves a file that the collection after
    /// open removes.
    static func create(id: UInt64, directory: String, fileSystem: any FileSystem) throws(EngineError) -> any StoreFile {
        let file = try fileSystem.openFile(directory + "/" + name(id), create: true)
        try file.truncate(to: 0)
        return file
    }

    /// Writes `source` into `file`, the blob `id` made by ``create(id:directory:fileSystem:)``,
    /// its chunks hashed with `hash` (which names the file's version), and syncs it. The caller
    /// syncs the blob directory before any commit names the blob.
    ///
    /// The encoding is chosen by compressing the first 8 KiB at `level` (about 0.1 ms): unless
    /// that saves 10%, the blob is stored raw (already-compressed media cost nothing more to
    /// store).
    static func write(
        _ file: any StoreFile, id: UInt64, source: BlobSource, level: Int, hash: BlobChunkHash = .current,
        fileSystem: any FileSystem
    ) throws(EngineError) -> BlobReference {
        let input: BlobInput
        switch source {
        case .bytes(let bytes):
            input = .bytes(bytes)
        case .file(let path):
            let file = try fileSystem.openFileForReading(path)
            input = .file(file, try file.size())
        }
        let length = input.length
        guard length <= LogFormat.maxBlobLength else {
            throw .invalid("the blob is \(length) bytes, over the limit of \(LogFormat.maxBlobLength)")
        }
        let sample = try input.read(at: 0, count: Int(min(length, UInt64(LogFormat.blobSampleSize))))
        let encoding = chooseEncoding(sample: sample, level: level)
        if encoding == LogFormat.blobEncodingRaw, case .bytes(let value) = input, value.count >= Self.directWriteBytes {
            // A large raw value goes out as it is, without a copy: the header, the value and the
            // table in three writes; only the chunk hashes are computed, and the content's is
            // made from them.
            var table = ByteWriter(capacity: BlobFile.chunkCount(length: length) * LogFormat.blobChunkEntrySize + 4)
            var content = ContentDigest()
            for start in stride(from: 0, to: value.count, by: LogFormat.blobChunkSize) {
                let chunk = value[start..<min(start + LogFormat.blobChunkSize, value.count)]
                let chunkHash = hash(chunk)
                table.append(UInt32(chunk.count))
                table.append(chunkHash)
                content.add(chunkHash)
            }
            table.append(checksum(table.bytes[...]))
            let reference = BlobReference(
                id: id, length: length, fileLength: UInt64(LogFormat.blobHeaderSize + value.count + table.bytes.count),
                checksum: content.value, encoding: encoding)
            try file.write(header(for: reference, version: hash.version), at: 0)
            try file.write(value, at: UInt64(LogFormat.blobHeaderSize))
            try file.write(table.bytes, at: UInt64(LogFormat.blobHeaderSize + value.count))
            try file.sync()
            return reference
        }
        // Other blobs go out in one write when small: header, chunks and table are gathered here,
        // and flushed early only past 4 MiB.
        var pending = [UInt8](repeating: 0, count: LogFormat.blobHeaderSize)
        var pendingOffset: UInt64 = 0
        var table = ByteWriter()
        var content = ContentDigest()
        var position: UInt64 = 0
        // Chunks are compressed a few at a time, in parallel on the machine's cores.
        let groupSize = encoding == LogFormat.blobEncodingZlib ? Self.parallelChunks : 1
        while position < length {
            var chunks: [[UInt8]] = []
            while chunks.count < groupSize && position < length {
                let count = Int(min(UInt64(LogFormat.blobChunkSize), length - position))
                let chunk = position == 0 && count == sample.count ? sample : try input.read(at: position, count: count)
                guard chunk.count == count else {
                    throw EngineError(.io, "the source file ended early (it shrank while being copied)", path: input.path)
                }
                chunks.append(chunk)
                position += UInt64(count)
            }
            let stored = encoding == LogFormat.blobEncodingZlib ? Self.compress(chunks, level: level) : chunks
            for (chunk, bytes) in zip(chunks, stored) {
                let storedHash = hash(bytes[...])
                // A chunk kept as it is has one hash for both.
                content.add(bytes.count == chunk.count ? storedHash : hash(chunk[...]))
                table.append(UInt32(bytes.count))
                table.append(storedHash)
                pending += bytes
            }
            if pending.count >= 4 << 20 {
                try file.write(pending, at: pendingOffset)
                pendingOffset += UInt64(pending.count)
                pending.removeAll(keepingCapacity: true)
            }
        }
        table.append(checksum(table.bytes[...]))
        pending += table.bytes
        let fileLength = pendingOffset + UInt64(pending.count)
        let reference = BlobReference(
            id: id, length: length, fileLength: fileLength, checksum: content.value, encoding: encoding)
        let headerBytes = header(for: reference, version: hash.version)
        if pendingOffset == 0 {
            pending.replaceSubrange(0..<LogFormat.blobHeaderSize, with: headerBytes)
            try file.write(pending, at: 0)
        } else {
            try file.write(pending, at: pendingOffset)
            try file.write(headerBytes, at: 0)
        }
        try file.sync()
        return reference
    }

    /// Raw values of at least this many bytes are written from the caller's array rather than
    /// gathered with their header and table into one buffer: the copy costs more than two more
    /// writes.
    static let directWriteBytes = 64 << 10

    /// How many chunks are compressed at once, in parallel.
    static let parallelChunks = 4

    /// Each chunk compressed at `level` (or kept as it is when that does not shrink it), the
    /// chunks spread over the machine's cores.
    private static func compress(_ chunks: [[UInt8]], level: Int) -> [[UInt8]] {
        zip(chunks, Zlib.compressEach(chunks, level: level)).map { $1 ?? $0 }
    }

    /// Raw unless compressing `sample` at `level` saves at least 10%.
    static func chooseEncoding(sample: [UInt8], level: Int) -> UInt8 {
        guard level > 0, !sample.isEmpty, let compressed = Zlib.compress(sample[...], level: level) else {
            return LogFormat.blobEncodingRaw
        }
        let worthIt = Double(compressed.count) <= Double(sample.count) * (1 - LogFormat.blobMinimumSaving)
        return worthIt ? LogFormat.blobEncodingZlib : LogFormat.blobEncodingRaw
    }

    /// The 44-byte header of a blob file of `version`: it repeats the reference, so a file
    /// swapped for another is caught.
    static func header(for reference: BlobReference, version: UInt16 = LogFormat.blobVersion) -> [UInt8] {
        var writer = ByteWriter(capacity: LogFormat.blobHeaderSize)
        writer.append(contentsOf: LogFormat.blobMagic)
        writer.append(version)
        writer.append(reference.encoding)
        writer.append(UInt8(0))
        writer.append(UInt32(LogFormat.blobChunkSize))
        writer.append(reference.id)
        writer.append(reference.length)
        writer.append(reference.checksum)
        writer.append(checksum(writer.bytes[...]))
        return writer.bytes
    }

    /// The chunks a blob of `length` bytes is cut into.
    static func chunkCount(length: UInt64) -> Int {
        Int((length + UInt64(LogFormat.blobChunkSize) - 1) / UInt64(LogFormat.blobChunkSize))
    }
}

/// The content being copied into a blob.
private enum BlobInput {
    case bytes([UInt8])
    case file(any StoreFile, UInt64)

    var length: UInt64 {
        switch self {
        case .bytes(let bytes): UInt64(bytes.count)
        case .file(_, let size): size
        }
    }

    var path: String? {
        if case .file(let file, _) = self { return file.path }
        return nil
    }

    func read(at offset: UInt64, count: Int) throws(EngineError) -> [UInt8] {
        switch self {
        case .bytes(let bytes):
            let start = Int(offset)
            return start == 0 && count == bytes.count ? bytes : Array(bytes[start..<start + count])
        case .file(let file, _):
            return try file.read(at: offset, count: count)
        }
    }
}

/// 16 lower-case hex digits.
func hex16(_ value: UInt64) -> String {
    let hex = String(value, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
}

/// The segment, pack or blob number in a file name: exactly 16 lower-case hex digits of a number
/// in 1 ... ``LogFormat/maxFileNumber``, or nil (the file is not one of the store's).
func parseFileNumber(_ digits: Substring) -> UInt64? {
    guard digits.count == 16, digits.allSatisfy({ ("0"..."9").contains($0) || ("a"..."f").contains($0) }),
        let number = UInt64(digits, radix: 16), (1...LogFormat.maxFileNumber).contains(number)
    else { return nil }
    return number
}
