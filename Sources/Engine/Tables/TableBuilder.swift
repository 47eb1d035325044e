/// Writes a table (FORMAT.md, "Table files"): entries added in strictly ascending key order go
/// into data blocks of about ``Options/blockSize`` bytes. In version 5 (the default), the index
/// entries and filter keys of a run of data blocks form a partition, cut once its index or its
/// filter reaches about ``Options/partitionSize`` bytes; the partitions (each its filter, then its
/// index) follow the last data block, then the top-level index and the footer. In version 4 (for
/// tests of reading older tables), one filter block, one index block and the footer follow the
/// data.
///
/// The builder does no I/O. Data bytes are handed out as they are produced (``takeBytes()``),
/// so a caller can write a large table to a file without holding its data whole. A cut
/// partition's stored bytes cannot go to the file yet (every data block comes first), so they
/// are handed out separately (``takePartitionBytes()``), for the caller to keep somewhere (a
/// scratch file: ``TableWriter``) until ``finishTakingPartitions()`` says the data has ended;
/// the caller then writes them, and after them the top-level index and footer it returns. Taken
/// so, the metadata the builder holds is bounded by a constant of its options
/// (``heldMetadataBound(_:)``: the index and filter of the partition being built, and the
/// partition just cut; the data block being built aside), plus the top-level index's entries, one per partition, packed: a
/// separator and three integers (about 20 bytes) per partition of about 3,000 keys — the part
/// every reader of the table holds in memory too. A caller that never
/// takes partition bytes (``build(_:options:)``, tests) has ``finish()`` append them, and holds
/// them all until then (about 1.3 bytes per key).
struct TableBuilder {
    struct Options: Sendable {
        /// A data block is cut once its raw contents reach this many bytes.
        var blockSize = 4096
        /// A data block's restart interval (an index block restarts at every entry).
        var restartInterval = 16
        /// The Bloom filter's bits per key.
        var bitsPerKey = 10
        /// zlib level for data and index blocks; 0 stores every block raw.
        var compressionLevel = 1
        /// Version 5: a partition is cut once its index block's raw contents or its filter's bits
        /// reach this many bytes (at a data block boundary).
        var partitionSize = 4096
        /// The table format version written: ``TableFormat/version`` (5), or 4.
        var version = TableFormat.version
    }

    let options: Options
    private var output: [UInt8] = []
    /// Bytes produced so far (taken or not): the offset of the next block.
    private(set) var size: UInt64 = 0
    private var data: BlockBuilder
    private(set) var index = BlockBuilder(restartInterval: 1)
    private(set) var filter: BloomFilterBuilder
    private var lastKey: [UInt8]?
    /// The last data block written, whose index entry waits for the next key (its separator).
    private var unindexed: BlockHandle?
    /// Version 5: the top-level index's entries of the partitions cut so far, packed (each its
    /// separator's length and bytes, its filter's and its index's stored lengths and where its
    /// data starts, as varints: about 20 bytes, one allocation for them all) and counted; the
    /// stored bytes of the partitions not yet taken, the stored bytes of them all, and where the
    /// data of the one being built starts.
    private(set) var topEntries = ByteWriter()
    private(set) var partitionCount = 0
    private(set) var partitionBytes: [UInt8] = []
    private var partitionRegionLength: UInt64 = 0
    private var partitionDataStart: UInt64 = 0
    /// True once ``takePartitionBytes()`` has handed some out: ``finish()`` cannot append them.
    private var partitionBytesTaken = false
    private(set) var lastSeparator: [UInt8] = []
    private(set) var entryCount = 0
    private(set) var dataBlockCount = 0
    private var finished = false

    init(options: Options = Options()) {
        precondition(
            options.version == TableFormat.version || options.version == TableFormat.unpartitionedVersion,
            "a table is written in version 4 or 5")
        self.options = options
        data = BlockBuilder(restartInterval: options.restartInterval)
        filter = BloomFilterBuilder(bitsPerKey: options.bitsPerKey)
    }

    /// Adds `entry`, whose key must be above every key added before.
    ///
    /// - Throws: ``EngineError/Code/invalidArgument`` for a key out of order, empty or longer
    ///   than 65,535 bytes, a value over 256 MiB, or a sequence of 2^62 or more; the table is unchanged.
    mutating func add(_ entry: TableEntry) throws(EngineError) {
        precondition(!finished, "a finished table takes no more entries")
        let key = entry.key
        guard !key.isEmpty, key.count <= LogFormat.maxKeyLength else {
            throw .invalid("a table key is 1 to \(LogFormat.maxKeyLength) bytes; this one is \(key.count)")
        }
        if let lastKey, compareBytes(lastKey, key) >= 0 {
            throw .invalid("table entries must be added in strictly ascending key order; this key is not above the one before")
        }
        guard entry.sequence < LogFormat.maxSequence else {
            throw .invalid("a table entry's sequence is below 2^62, as every commit's; this one is \(entry.sequence)")
        }
        if case .value(let bytes) = entry.value, bytes.count > LogFormat.maxValueLength {
            throw .invalid("a table value is at most \(LogFormat.maxValueLength) bytes; store a larger one as a blob")
        }
        if let handle = unindexed, let lastKey {
            addIndexEntry(Self.separator(after: lastKey, before: key), handle)
            unindexed = nil
        }
        data.add(key: key, value: entry.encodedValue())
        filter.add(key)
        lastKey = key
        entryCount += 1
        if data.estimatedSize >= options.blockSize { flushData() }
    }

    /// Takes the bytes produced since the last call (the file's next bytes, in order).
    mutating func takeBytes() -> [UInt8] {
        defer { output = [] }
        return output
    }

    /// Version 5: takes the stored bytes of the partitions cut since the last call (each its
    /// filter, then its index), in order. They follow the table's last data block, so the caller
    /// keeps them (in order, every one) until ``finishTakingPartitions()``; once some are taken,
    /// the table ends by that call, not ``finish()``.
    mutating func takePartitionBytes() -> [UInt8] {
        defer { partitionBytes = [] }
        if !partitionBytes.isEmpty { partitionBytesTaken = true }
        return partitionBytes
    }

    /// How the table ends after ``finishTakingPartitions()``: the file is every data byte taken,
    /// then ``data``, then every partition byte taken, then ``partitions``, then ``trailer``.
    struct Ending {
        /// The data bytes not yet taken (the last data block).
        var data: [UInt8]
        /// The partitions' stored bytes not yet taken (version 5; the last partitions cut).
        var partitions: [UInt8]
        /// The top-level index and the footer (version 4: the filter, the index and the footer).
        var trailer: [UInt8]
    }

    /// Ends a table whose partitions' bytes were taken as they were cut (or not): the last data
    /// block, the last partition, the top-level index and the footer (version 4: the filter, the
    /// index and the footer), in the three parts the caller writes around the partition bytes it
    /// took.
    mutating func finishTakingPartitions() -> Ending {
        precondition(!finished, "a table is finished once")
        finished = true
        if !data.isEmpty { flushData() }
        if let handle = unindexed, let lastKey { addIndexEntry(Self.successor(of: lastKey), handle) }
        let dataBytes = takeBytes()
        guard options.version == TableFormat.unpartitionedVersion else {
            if !index.isEmpty { cutPartition(dataEnd: size) }
            let trailer = finishPartitioned()
            return Ending(data: dataBytes, partitions: takePartitionBytes(), trailer: trailer)
        }
        let filterRaw = filter.finish()
        let filterHandle = append(StoredBlock.encode(filterRaw, level: 0))
        let indexRaw = index.finish()
        let indexHandle = append(StoredBlock.encode(indexRaw, level: options.compressionLevel))
        let footer = TableFooter(
            version: TableFormat.unpartitionedVersion, filter: filterHandle, index: indexHandle, filterChecksum: checksum(filterRaw[...]),
            indexChecksum: checksum(indexRaw[...]))
        _ = append(footer.encoded())
        return Ending(data: dataBytes, partitions: [], trailer: takeBytes())
    }

    /// Ends a table whose partitions' bytes were never taken: the last data block, the metadata
    /// (version 5: the partitions and the top-level index; version 4: the filter and the index)
    /// and the footer. Returns the bytes not yet taken; the table is whole once every byte taken
    /// has been written.
    mutating func finish() -> [UInt8] {
        precondition(!partitionBytesTaken, "a table whose partition bytes were taken ends by finishTakingPartitions()")
        let ending = finishTakingPartitions()
        return ending.data + ending.partitions + ending.trailer
    }

    /// The most metadata bytes a builder with `options` holds while its partitions' bytes are
    /// taken after each ``add(_:)`` (``heldMetadataBytes``), whatever the table's size: the index
    /// partition being built (cut at ``Options/partitionSize`` bytes, plus the one entry that
    /// crossed it, whose separator may be a whole 64 KiB key), the key hashes of the filter
    /// partition being built (8 bytes a key, cut at `8 · partitionSize / bitsPerKey` keys, plus
    /// at most one data block's keys, a data block entry taking at least 4 bytes), and the
    /// stored bytes of the partition just cut. With the default options, about 180 KiB, most of it
    /// room for a 64 KiB separator; about 50 KiB for keys of ordinary length. Not counted: the
    /// data block being built (about ``Options/blockSize``, or one entry when larger) and the
    /// top-level index's entries, one per partition, which grow with the table as every
    /// reader's copy of the top-level index does.
    static func heldMetadataBound(_ options: Options) -> Int {
        let indexEntry = LogFormat.maxKeyLength + 3 * 5 + 2 * 10 + 4  // separator, three varints, a handle, a restart
        let index = options.partitionSize + indexEntry
        let filterKeys = (8 * options.partitionSize + options.bitsPerKey - 1) / options.bitsPerKey + options.blockSize / 4 + 1
        let filterBits = max(TableFormat.minFilterBits, filterKeys * options.bitsPerKey)
        let cutPartition = (filterBits + 7) / 8 + 1 + index + 2 * TableFormat.trailerSize
        return index + 8 * filterKeys + cutPartition
    }

    /// A whole table of `entries` (in ascending key order), in memory.
    static func build(_ entries: some Sequence<TableEntry>, options: Options = Options()) throws(EngineError) -> [UInt8] {
        var builder = TableBuilder(options: options)
        for entry in entries { try builder.add(entry) }
        var bytes = builder.takeBytes()
        bytes += builder.finish()
        return bytes
    }

    private mutating func flushData() {
        unindexed = append(StoredBlock.encode(data.finish(), level: options.compressionLevel))
        dataBlockCount += 1
    }

    private mutating func addIndexEntry(_ separator: [UInt8], _ handle: BlockHandle) {
        var writer = ByteWriter()
        handle.append(to: &writer)
        index.add(key: separator, value: writer.bytes)
        guard options.version != TableFormat.unpartitionedVersion else { return }
        // The filter holds exactly the keys of the blocks indexed so far: the key that made this
        // entry's separator is added to it after.
        lastSeparator = separator
        if index.estimatedSize >= options.partitionSize || filter.count * options.bitsPerKey >= 8 * options.partitionSize {
            cutPartition(dataEnd: handle.end)
        }
    }

    /// Puts the partition being built (its filter, then its index) after the partitions cut
    /// before (its stored bytes wait in `partitionBytes` to be taken; its top-level entry stays),
    /// and starts the next at `dataEnd`.
    private mutating func cutPartition(dataEnd: UInt64) {
        let filterStored = StoredBlock.encode(filter.finish(), level: 0)
        let indexStored = StoredBlock.encode(index.finish(), level: options.compressionLevel)
        let filterHandle = BlockHandle(offset: partitionRegionLength, length: UInt64(filterStored.count))
        let indexHandle = BlockHandle(offset: filterHandle.end, length: UInt64(indexStored.count))
        partitionBytes += filterStored
        partitionBytes += indexStored
        partitionRegionLength = indexHandle.end
        topEntries.appendVarint(lastSeparator.count)
        topEntries.append(contentsOf: lastSeparator)
        topEntries.appendVarint64(filterHandle.length)
        topEntries.appendVarint64(indexHandle.length)
        topEntries.appendVarint64(partitionDataStart)
        partitionCount += 1
        filter = BloomFilterBuilder(bitsPerKey: options.bitsPerKey)
        partitionDataStart = dataEnd
    }

    /// Version 5's end, after the last partition is cut: the top-level index (an entry per
    /// partition: its last separator, then its filter's handle, its index's handle and where
    /// its data blocks start) and the footer, placed after the partitions' region (which the
    /// caller writes, from the bytes taken and those left).
    private mutating func finishPartitioned() -> [UInt8] {
        let dataEnd = size
        let region = BlockHandle(offset: dataEnd, length: partitionRegionLength)
        size += partitionRegionLength
        var top = BlockBuilder(restartInterval: 1)
        var entries = ByteReader(topEntries.bytes[...])
        var offset = dataEnd
        for _ in 0..<partitionCount {
            // The builder's own packing (cutPartition), never bytes read from a file.
            guard let separatorLength = entries.readVarint(limit: LogFormat.maxKeyLength),
                let separator = entries.readBytes(separatorLength), let filterLength = entries.readVarint64(),
                let indexLength = entries.readVarint64(), let dataStart = entries.readVarint64()
            else { preconditionFailure("the top-level entries the builder packed read back") }
            var writer = ByteWriter()
            BlockHandle(offset: offset, length: filterLength).append(to: &writer)
            BlockHandle(offset: offset + filterLength, length: indexLength).append(to: &writer)
            writer.appendVarint64(dataStart)
            top.add(key: Array(separator), value: writer.bytes)
            offset += filterLength + indexLength
        }
        topEntries = ByteWriter()
        let topRaw = top.finish()
        let topHandle = append(StoredBlock.encode(topRaw, level: options.compressionLevel))
        let footer = TableFooter(
            version: TableFormat.version, filter: region, index: topHandle, filterChecksum: UInt32(partitionCount),
            indexChecksum: checksum(topRaw[...]))
        _ = append(footer.encoded())
        return takeBytes()
    }

    private mutating func append(_ bytes: [UInt8]) -> BlockHandle {
        let handle = BlockHandle(offset: size, length: UInt64(bytes.count))
        output += bytes
        size += UInt64(bytes.count)
        return handle
    }

    /// The shortest key `s` with `last ≤ s < next` (`last < next`): their common prefix and the
    /// next byte of `last` plus one, when that stays below `next`'s byte; else `last` itself.
    /// As leveldb's `FindShortestSeparator`.
    static func separator(after last: [UInt8], before next: [UInt8]) -> [UInt8] {
        let shared = commonPrefixLength(last[...], next[...])
        guard shared < last.count, shared < next.count else { return last }  // last is a prefix of next
        let byte = last[shared]
        guard byte < 0xFF, byte + 1 < next[shared] else { return last }
        var separator = Array(last[...shared])
        separator[shared] = byte + 1
        return separator
    }

    /// A short key at or above `last`: its first byte that is not 0xFF plus one, the rest cut
    /// off (`last` itself when every byte is 0xFF). As leveldb's `FindShortSuccessor`.
    static func successor(of last: [UInt8]) -> [UInt8] {
        guard let i = last.firstIndex(where: { $0 != 0xFF }) else { return last }
        var successor = Array(last[...i])
        successor[i] += 1
        return successor
    }
}
