/// Entry points into every decoder of bytes read from disk, for the fuzz targets
/// (`Sources/EngineFuzzing`, `Fuzz/README.md`). Package access only: not part of the public API.
///
/// Each one runs a decoder the way the engine does and reports how far it got; any failure must
/// be a thrown ``EngineError`` (or a hint's `Unusable`), never a trap.
package enum DecoderHooks {
    // MARK: Checksums (the fuzz targets repair them to reach the checks behind them)

    package static func crc32(_ bytes: ArraySlice<UInt8>, seed: UInt32 = 0) -> UInt32 { checksum(bytes, seed: seed) }
    package static func xxh64(_ bytes: ArraySlice<UInt8>) -> UInt64 { XXHash64.hash(bytes) }
    /// The chunk hash of a blob file of `version` (XXH3-64 for any version but 3, which uses
    /// XXH64), so that a fuzzed blob's table can be repaired for the version its header names.
    package static func blobChunkHash(_ bytes: ArraySlice<UInt8>, version: UInt16) -> UInt64 {
        (BlobChunkHash(version: version) ?? .current)(bytes)
    }

    /// The content checksum of a blob whose chunks' contents hash to `chunkHashes`.
    package static func contentChecksum(chunkHashes: [UInt64]) -> UInt64 {
        var digest = ContentDigest()
        for hash in chunkHashes { digest.add(hash) }
        return digest.value
    }

    /// zlib-inflates `bytes` to exactly `rawLength` bytes, or nil.
    package static func inflate(_ bytes: ArraySlice<UInt8>, rawLength: Int) -> [UInt8]? {
        Zlib.decompress(bytes, rawLength: rawLength)
    }

    // MARK: Decoders

    /// Reads segment `number` as recovery does: header, then every frame, each frame's commit
    /// records decoded. Returns the number of frames read.
    @discardableResult
    package static func readSegment(_ file: any StoreFile, number: UInt64, isNewest: Bool) throws(EngineError) -> Int {
        var reader = try LogReader(file: file, segmentNumber: number, isNewest: isNewest)
        guard try reader.readHeader() != nil else { return 0 }
        var frames = 0
        while let frame = try reader.nextFrame() {
            frames += 1
            if frame.isClose { continue }
            _ = try CommitDecoding.records(inPayload: frame.payload, frameOffset: frame.offset, path: file.path)
        }
        return frames
    }

    /// Decodes a commit payload (the bytes after a frame header), handing over each block's raw
    /// bytes as compaction does. Returns the number of records.
    @discardableResult
    package static func commitRecords(payload: [UInt8]) throws(EngineError) -> Int {
        // The payload sits after a frame header, as in a frame read from a segment.
        let frame = [UInt8](repeating: 0, count: LogFormat.frameHeaderSize) + payload
        var checked = 0
        let records = try CommitDecoding.records(
            inPayload: frame.dropFirst(LogFormat.frameHeaderSize), frameOffset: UInt64(LogFormat.segmentHeaderSize),
            path: "fuzz"
        ) { raw, records throws(EngineError) in
            // What compaction does with them: slice each inline value out of the raw bytes.
            for record in records where record.blob == nil {
                guard let length = record.valueLength else { continue }
                _ = raw[record.valueOffset..<record.valueOffset + length]
                checked += 1
            }
        }
        return records.count + checked
    }

    /// Scans pack `number` (``PackFile/scan(_:number:)``) and walks its blocks. Returns the
    /// number of entries.
    @discardableResult
    package static func scanPack(_ file: any StoreFile, number: UInt64) throws(EngineError) -> Int {
        let entries = try PackFile.scan(file, number: number)
        var values = 0
        try PackFile.forEachBlock(of: file, number: number) { _, _, raw, records throws(EngineError) in
            for record in records where record.blob == nil {
                guard let length = record.valueLength else { continue }
                _ = raw[record.valueOffset..<record.valueOffset + length]
                values += 1
            }
        }
        return entries.count + values
    }

    /// Writes pack `number` of `records` (ascending keys; values inline) and its hint into
    /// `directory`, as a format-3 build's compaction did: the seeds of the pack targets, and the
    /// packs of format-3 stores the upgrade tests open. Returns the pack's length.
    @discardableResult
    package static func writeFormat3Pack(
        number: UInt64, records: [(key: [UInt8], sequence: UInt64, value: [UInt8])], directory: String,
        fileSystem: any FileSystem
    ) throws(EngineError) -> UInt64 {
        var writer = try PackWriter(number: number, directory: directory, level: 3, blockSize: 4096, fileSystem: fileSystem)
        for record in records { try writer.add(key: record.key, sequence: record.sequence, value: record.value[...], blob: nil) }
        let entries = try writer.finish()
        let hint = try HintFile.writeTemporary(entries, packNumber: number, directory: directory, fileSystem: fileSystem)
        try fileSystem.rename(writer.temporaryPath, to: directory + "/" + PackFile.name(number))
        try fileSystem.rename(hint.path, to: directory + "/" + PackFile.hintName(number))
        try fileSystem.syncDirectory(directory)
        return writer.size
    }

    /// The bytes of a format-3 manifest naming `packs` of `packSizes` bytes.
    package static func format3Manifest(logStart: UInt64, lastSequence: UInt64, packs: [UInt64], packSizes: [UInt64]) -> [UInt8] {
        ManifestV3(logStart: logStart, lastSequence: lastSequence, packs: packs, packSizes: packSizes).encoded()
    }

    /// Loads the hint file of pack `packNumber` (``HintFile/load(_:packNumber:packSize:)``).
    @discardableResult
    package static func loadPackHint(_ file: any StoreFile, packNumber: UInt64, packSize: UInt64) throws(EngineError) -> Int {
        return try HintFile.load(file, packNumber: packNumber, packSize: packSize).count
    }

    /// Loads a segment hint and checks it against its segment, as open does. Returns the number
    /// of entries, or nil when the hint is unusable.
    @discardableResult
    package static func loadSegmentHint(
        _ hintFile: any StoreFile, segment: any StoreFile, number: UInt64, isNewest: Bool, firstSequence: UInt64?
    ) throws(EngineError) -> Int? {
        let size = try segment.size()
        do throws(SegmentHint.Unusable) {
            let hint = try SegmentHint.load(
                hintFile, number: number, fileSize: size, isNewest: isNewest, firstSequence: firstSequence)
            try hint.checkLastFrame(in: segment)
            // What open derives from a usable hint.
            _ = hint.replacedRecordBytes
            _ = hint.firstSequence + hint.frameCount - 1
            return hint.entryCount
        } catch {
            return nil
        }
    }

    /// Reads the manifest in `directory` (``Manifest/read(in:names:fileSystem:)``): the number of
    /// tables it lists (of packs, for a format-3 one); nil when there is none.
    @discardableResult
    package static func readManifest(in directory: String, fileSystem: any FileSystem) throws(EngineError) -> Int? {
        let names = try fileSystem.listDirectory(directory)
        switch try Manifest.read(in: directory, names: names, fileSystem: fileSystem) {
        case .none: return nil
        case .current(let manifest): return manifest.tables.count
        case .version3(let manifest): return manifest.packs.count
        }
    }

    /// Decodes a blob reference's 33 bytes; nil when they are not a valid reference.
    package static func blobReference(_ bytes: [UInt8]) -> (id: UInt64, length: UInt64, fileLength: UInt64, checksum: UInt64, encoding: UInt8)? {
        var reader = ByteReader(bytes[...])
        guard let reference = BlobReference.read(from: &reader) else { return nil }
        return (reference.id, reference.length, reference.fileLength, reference.checksum, reference.encoding)
    }

    /// Opens the blob that the 33-byte reference `referenceBytes` names in `directory` and reads
    /// it every way the engine does: chunk by chunk, whole, and as mapped content. Returns the
    /// content's length.
    @discardableResult
    package static func readBlob(
        referenceBytes: [UInt8], directory: String, fileSystem: any FileSystem
    ) throws(EngineError) -> Int {
        var reader = ByteReader(referenceBytes[...])
        guard let reference = BlobReference.read(from: &reader) else { return 0 }
        let blob = try BlobReader(reference: reference, directory: directory, fileSystem: fileSystem)
        // Each way of reading on its own, as a stream, `value(forKey:)` and `withValue` do.
        var streamed = 0
        do throws(EngineError) {
            var digest = ContentDigest()
            for index in blob.chunks.indices {
                let chunk = try blob.chunk(index)
                blob.addContent(of: index, chunk, to: &digest)
                streamed += chunk.count
            }
            try blob.verifyContent(digest)
        } catch {}
        let all = (try? blob.readAll())?.count ?? 0
        let buffered = (try? blob.readAllIntoBuffer())?.bytes.count ?? 0
        let content = try blob.content()
        return content.withBytes { $0.count } + all + buffered + streamed
    }
}
