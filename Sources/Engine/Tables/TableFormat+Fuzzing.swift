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

    /// Decodes a stored version-5 top-level index as the one of a table whose data blocks end at
    /// `dataEnd`, followed by `partitionsLength` bytes of `partitionCount` partitions, then the
    /// top-level index itself. Returns the number of partitions it names.
    @discardableResult
    package static func tableTopIndex(
        _ stored: [UInt8], dataEnd: UInt64, partitionsLength: UInt64, partitionCount: UInt32
    ) throws(EngineError) -> Int {
        let (regionEnd, overflow) = dataEnd.addingReportingOverflow(partitionsLength)
        guard !overflow, regionEnd <= UInt64.max - UInt64(stored.count) else {
            throw .invalid("the top-level index's place does not fit in 64 bits")
        }
        let footer = TableFooter(
            version: TableFormat.version, filter: BlockHandle(offset: dataEnd, length: partitionsLength),
            index: BlockHandle(offset: regionEnd, length: UInt64(stored.count)), filterChecksum: partitionCount, indexChecksum: 0)
        let top = try Block(raw: StoredBlock.decode(stored[...], path: "fuzz", offset: regionEnd), path: "fuzz", offset: regionEnd)
        return try TableReader.decodeTopIndex(top, footer: footer).count
    }

    /// Decodes a stored version-5 index partition as one whose data blocks tile
    /// `dataStart..<dataEnd` and whose last separator the top-level index gives as
    /// `lastSeparator`. Returns the number of data blocks it names.
    @discardableResult
    package static func tableIndexPartition(
        _ stored: [UInt8], dataStart: UInt64, dataEnd: UInt64, lastSeparator: [UInt8]
    ) throws(EngineError) -> Int {
        guard dataStart <= dataEnd else { throw .invalid("an index partition's data start is past its end") }
        let block = try Block(raw: StoredBlock.decode(stored[...], path: "fuzz", offset: 0), path: "fuzz", offset: 0)
        return try withBytes(lastSeparator) { separator throws(EngineError) in
            try TableReader.decodeIndex(block, dataStart: dataStart, dataEnd: dataEnd, lastSeparator: separator).count
        }
    }

    /// Decodes a stored filter block (or version-5 filter partition) and probes it with `keys`.
    /// Returns how many may be present.
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
    /// the index, when it decodes; in version 5 the partitions the top-level index names, and
    /// the data blocks their index partitions name), the footer's checksums of the filter and
    /// index (version 5: of the top-level index), and the footer's own: so that the fuzzer
    /// reaches the checks behind them.
    package static func repairTable(_ bytes: inout [UInt8]) {
        let footerSize = TableFormat.footerSize
        guard bytes.count >= footerSize else { return }
        let at = bytes.count - footerSize
        let partitioned = bytes[at + 8] == UInt8(TableFormat.version) && bytes[at + 9] == 0
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
        /// The entries of the index block at `handle` once repaired, each value's handles.
        func repairIndex(_ handle: BlockHandle) -> [[BlockHandle]]? {
            guard repairBlock(handle) != nil,
                let block = try? Block(
                    raw: StoredBlock.decode(bytes[Int(handle.offset)..<Int(handle.end)], path: "", offset: 0), path: "", offset: 0)
            else { return nil }
            // (The raw contents decoded once more: the repair is for fuzzing, not fast.)
            return ((try? block.entries()) ?? []).map { entry in
                var handleReader = ByteReader(Array(block.bytes[entry.value])[...])
                var handles: [BlockHandle] = []
                while let handle = BlockHandle.read(from: &handleReader) { handles.append(handle) }
                return handles
            }
        }
        if let crc = repairBlock(index) {
            store32(&bytes, at: at + 52, crc)
            for entry in repairIndex(index) ?? [] {
                if partitioned {
                    // A filter partition's handle, then its index partition's.
                    if let filterPartition = entry.first { _ = repairBlock(filterPartition) }
                    if entry.count >= 2 {
                        for blocks in repairIndex(entry[1]) ?? [] { if let data = blocks.first { _ = repairBlock(data) } }
                    }
                } else if let data = entry.first {
                    _ = repairBlock(data)
                }
            }
        }
        if !partitioned, let crc = repairBlock(filter) { store32(&bytes, at: at + 48, crc) }
        store32(&bytes, at: at + 56, checksum(bytes[at..<at + 56]))
    }

    private static func store32(_ bytes: inout [UInt8], at offset: Int, _ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { for i in 0..<4 { bytes[offset + i] = $0[i] } }
    }

    /// Builds a table of `entries` (ascending keys; values, tombstones or blob references by
    /// the entry's `kind`: 1, 2, 3) with `blockSize`-byte data blocks, in table format `version`
    /// (5: partitions of about `partitionSize` bytes), for seeds and tests.
    package static func buildTable(
        _ entries: [(key: [UInt8], sequence: UInt64, kind: UInt8, value: [UInt8])], blockSize: Int = 4096,
        partitionSize: Int = 4096, version: UInt16 = 5
    ) throws(EngineError) -> [UInt8] {
        var options = TableBuilder.Options()
        options.blockSize = blockSize
        options.partitionSize = partitionSize
        options.version = version
        return try TableBuilder.build(
            entries.map { e in
                switch e.kind {
                case TableFormat.kindTombstone: TableEntry(key: e.key, sequence: e.sequence, value: .tombstone)
                case TableFormat.kindBlob:
                    TableEntry(
                        key: e.key, sequence: e.sequence,
                        value: .blob(
                            BlobReference(
                                id: 7, length: UInt64(e.value.count), fileLength: 48 + UInt64(e.value.count), checksum: 0, encoding: 0)))
                default: TableEntry(key: e.key, sequence: e.sequence, value: .value(e.value))
                }
            }, options: options)
    }

    /// Where a table's parts lie (byte ranges of the file), for seeds and tests.
    package struct TableLayout: Sendable {
        package var version: UInt16
        /// Version 4: the filter block; version 5: every partition.
        package var filter: Range<Int>
        /// Version 4: the index block; version 5: the top-level index.
        package var index: Range<Int>
        package var partitionCount: UInt32
        /// Version 5: each partition's filter and index, the data blocks it names and its last
        /// separator.
        package var partitions: [(filter: Range<Int>, index: Range<Int>, data: Range<UInt64>, separator: [UInt8])]
        package var dataBlocks: [Range<Int>]
    }

    /// The layout of the table `bytes`, read as a reader reads it.
    package static func tableLayout(_ bytes: [UInt8]) throws(EngineError) -> TableLayout {
        let reader = try TableReader(source: MemoryTableSource(bytes: bytes, path: "fuzz"))
        let footer = reader.footer
        func range(_ handle: BlockHandle) -> Range<Int> { Int(handle.offset)..<Int(handle.end) }
        let loaded = try reader.metadataLoaded()
        var partitions: [(filter: Range<Int>, index: Range<Int>, data: Range<UInt64>, separator: [UInt8])] = []
        if footer.isPartitioned {
            for (number, partition) in loaded.partitions.enumerated() {
                partitions.append(
                    (
                        range(partition.filter), range(partition.index), partition.dataStart..<partition.dataEnd,
                        Array(try loaded.top.restartKey(number))
                    ))
            }
        }
        return TableLayout(
            version: footer.version, filter: range(footer.filter), index: range(footer.index),
            partitionCount: footer.filterChecksum, partitions: partitions, dataBlocks: try reader.dataBlockHandles().map(range))
    }
}
