/// Entry points into the table decoders, for the fuzz targets (`Sources/EngineFuzzing`) and the
/// tests. Package access only: not part of the public API.
extension DecoderHooks {
    /// Decodes a stored data block (contents, type byte, crc32) and every entry in it. Returns
    /// the number of entries.
    @discardableResult
    package static func tableDataBlock(_ stored: [UInt8]) throws(EngineError) -> Int {
        let block = try Block(raw: StoredBlock.decode(stored[...], path: "fuzz", offset: 0), path: "fuzz", offset: 0)
        var count = 0
        // Forward and backward with the cursor, every point read of a restart key, and the
        // table's decoding of each stored value.
        for (key, value) in try block.entries() {
            _ = try TableEntryView(block: block, value: value).entry(key: key)
            count += 1
        }
        var cursor = BlockCursor(block)
        try cursor.last()
        if cursor.isValid { while try cursor.previous() {} }
        for interval in 0..<block.restartCount {
            let key = Array(try block.restartKey(interval))
            _ = try withBytes(key) { key throws(EngineError) in try block.find(key) }
        }
        return count
    }

    /// Decodes a stored index block as a table of `dataEnd` bytes of data blocks would. Returns
    /// the number of data blocks it names.
    @discardableResult
    package static func tableIndexBlock(_ stored: [UInt8], dataEnd: UInt64) throws(EngineError) -> Int {
        let block = try Block(raw: StoredBlock.decode(stored[...], path: "fuzz", offset: 0), path: "fuzz", offset: 0)
        return try TableReader.decodeIndex(block, dataEnd: dataEnd).count
    }

    /// Decodes a stored filter block and probes it with `keys`. Returns how many may be present.
    @discardableResult
    package static func tableFilterBlock(_ stored: [UInt8], probing keys: [[UInt8]]) throws(EngineError) -> Int {
        let filter = try BloomFilter(raw: StoredBlock.decode(stored[...], path: "fuzz", offset: 0), path: "fuzz", offset: 0)
        return keys.filter(filter.mayContain).count
    }

    /// Decodes a footer as the end of a table of `fileSize` bytes.
    package static func tableFooter(_ bytes: [UInt8], fileSize: UInt64) throws(EngineError) {
        _ = try TableFooter.decode(bytes[...], fileSize: fileSize, path: "fuzz")
    }

    /// Opens a whole table held in `bytes`, scans it both ways (and with a limit), and reads
    /// every key found and a few absent ones. Returns the number of entries.
    @discardableResult
    package static func readTable(_ bytes: [UInt8]) throws(EngineError) -> Int {
        let reader = try TableReader(source: MemoryTableSource(bytes: bytes, path: "fuzz"), id: 1, cache: TableBlockCache(capacity: 1 << 20))
        let forward = try reader.entries()
        let backward = try reader.entries(reverse: true)
        guard forward.count == backward.count else {
            throw .corruption("table scans disagree", path: "fuzz", offset: 0)
        }
        _ = try reader.entries(in: .init(lower: .exclusive(forward.first?.key ?? [1])), limit: 3)
        _ = try reader.entries(in: .init(upper: .inclusive(forward.last?.key ?? [1])), reverse: true, limit: 3)
        for entry in forward {
            _ = try reader.entry(forKey: entry.key)
            _ = try reader.entry(forKey: entry.key + [0])
        }
        _ = try reader.entry(forKey: [0])
        _ = try reader.entry(forKey: [0xFF, 0xFF])
        return forward.count
    }

    /// Rewrites a whole table's checksums: each block's trailer crc32 (the data blocks found by
    /// the index, when it decodes), the footer's checksums of the filter and index, and the
    /// footer's own: so that the fuzzer reaches the checks behind them.
    package static func repairTable(_ bytes: inout [UInt8]) {
        let footerSize = TableFormat.footerSize
        guard bytes.count >= footerSize else { return }
        let at = bytes.count - footerSize
        var reader = ByteReader(bytes[(at + 16)..<(at + 48)])
        let filter = BlockHandle(offset: reader.readUInt64()!, length: reader.readUInt64()!)
        let index = BlockHandle(offset: reader.readUInt64()!, length: reader.readUInt64()!)
        func repairBlock(_ handle: BlockHandle) -> UInt32? {
            guard handle.length >= 5, handle.offset <= UInt64(at), handle.length <= UInt64(at) - handle.offset else { return nil }
            let start = Int(handle.offset)
            let end = start + Int(handle.length)
            let crc = checksum(bytes[start..<end - 4])
            withUnsafeBytes(of: crc.littleEndian) { for i in 0..<4 { bytes[end - 4 + i] = $0[i] } }
            // The footer's checksum is of the raw contents.
            return (try? StoredBlock.decode(bytes[start..<end], path: "", offset: 0)).map { checksum($0[...]) }
        }
        if let crc = repairBlock(index), let block = try? Block(
            raw: StoredBlock.decode(bytes[Int(index.offset)..<Int(index.offset + index.length)], path: "", offset: 0), path: "", offset: 0)
        {
            // (The raw contents decoded once more: the repair is for fuzzing, not fast.)
            store32(&bytes, at: at + 52, crc)
            for entry in (try? block.entries()) ?? [] {
                var handleReader = ByteReader(Array(block.bytes[entry.value])[...])
                if let handle = BlockHandle.read(from: &handleReader) { _ = repairBlock(handle) }
            }
        }
        if let crc = repairBlock(filter) { store32(&bytes, at: at + 48, crc) }
        store32(&bytes, at: at + 56, checksum(bytes[at..<at + 56]))
    }

    private static func store32(_ bytes: inout [UInt8], at offset: Int, _ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { for i in 0..<4 { bytes[offset + i] = $0[i] } }
    }

    /// Builds a table of `entries` (ascending keys; values, tombstones or blob references by
    /// the entry's `kind`: 1, 2, 3) with `blockSize`-byte data blocks, for seeds and tests.
    package static func buildTable(
        _ entries: [(key: [UInt8], sequence: UInt64, kind: UInt8, value: [UInt8])], blockSize: Int = 4096
    ) throws(EngineError) -> [UInt8] {
        var options = TableBuilder.Options()
        options.blockSize = blockSize
        return try TableBuilder.build(
            entries.map { e in
                switch e.kind {
                case TableFormat.kindTombstone: TableEntry(key: e.key, sequence: e.sequence, value: .tombstone)
                case TableFormat.kindBlob:
                    TableEntry(key: e.key, sequence: e.sequence, value: .blob(BlobReference(
                        id: 7, length: UInt64(e.value.count), fileLength: 48 + UInt64(e.value.count), checksum: 0, encoding: 0)))
                default: TableEntry(key: e.key, sequence: e.sequence, value: .value(e.value))
                }
            }, options: options)
    }

    /// The handles a table's footer names (filter, then index): offset and length each.
    package static func tableBlockHandles(_ bytes: [UInt8]) throws(EngineError) -> [(offset: UInt64, length: UInt64)] {
        let size = UInt64(bytes.count)
        let footer = try TableFooter.decode(bytes.suffix(TableFormat.footerSize), fileSize: size, path: "fuzz")
        let reader = try TableReader(source: MemoryTableSource(bytes: bytes, path: "fuzz"))
        var handles = [(footer.filter.offset, footer.filter.length), (footer.index.offset, footer.index.length)]
        for i in 0..<(try reader.dataBlockCount) {
            let block = try reader.dataBlockHandle(i)
            handles.append((block.offset, block.length))
        }
        return handles
    }
}
