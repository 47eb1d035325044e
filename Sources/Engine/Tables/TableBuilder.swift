/// Writes a table (FORMAT.md, "Table files"): entries added in strictly ascending key order go
/// into data blocks of about ``Options/blockSize`` bytes. In version 5 (the default), the index
/// entries and filter keys of a run of data blocks form a partition, cut once its index or its
/// filter reaches about ``Options/partitionSize`` bytes; ``finish()`` appends every partition (its
/// filter, then its index), the top-level index and the footer. In version 4 (for tests of
/// reading older tables), ``finish()`` appends one filter block, one index block and the
/// footer. Data bytes are handed out as they are produced (``takeBytes()``), so a caller can
/// write a large table to a file without holding its data whole; the metadata is held until
/// ``finish()``.
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

    /// A partition written, placed relative to the start of the partitions.
    private struct Partition {
        var separator: [UInt8]
        var filter: BlockHandle
        var index: BlockHandle
        var dataStart: UInt64
    }

    let options: Options
    private var output: [UInt8] = []
    /// Bytes produced so far (taken or not): the offset of the next block.
    private(set) var size: UInt64 = 0
    private var data: BlockBuilder
    private var index = BlockBuilder(restartInterval: 1)
    private var filter: BloomFilterBuilder
    private var lastKey: [UInt8]?
    /// The last data block written, whose index entry waits for the next key (its separator).
    private var unindexed: BlockHandle?
    /// Version 5: the partitions cut so far, their stored bytes, and where the data of the one
    /// being built starts.
    private var partitions: [Partition] = []
    private var partitionBytes: [UInt8] = []
    private var partitionDataStart: UInt64 = 0
    private var lastSeparator: [UInt8] = []
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
    ///   than 65,535 bytes, a value over 256 MiB, or a sequence over 2^62; the table is unchanged.
    mutating func add(_ entry: TableEntry) throws(EngineError) {
        precondition(!finished, "a finished table takes no more entries")
        let key = entry.key
        guard !key.isEmpty, key.count <= LogFormat.maxKeyLength else {
            throw .invalid("a table key is 1 to \(LogFormat.maxKeyLength) bytes; this one is \(key.count)")
        }
        if let lastKey, compareBytes(lastKey, key) >= 0 {
            throw .invalid("table entries must be added in strictly ascending key order; this key is not above the one before")
        }
        guard entry.sequence <= LogFormat.maxSequence else {
            throw .invalid("a table entry's sequence is at most 2^62; this one is \(entry.sequence)")
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

    /// Ends the table: the last data block, the metadata (version 5: the partitions and the
    /// top-level index; version 4: the filter and the index) and the footer. Returns the bytes
    /// not yet taken; the table is whole once every byte taken has been written.
    mutating func finish() -> [UInt8] {
        precondition(!finished, "a table is finished once")
        finished = true
        if !data.isEmpty { flushData() }
        if let handle = unindexed, let lastKey { addIndexEntry(Self.successor(of: lastKey), handle) }
        guard options.version == TableFormat.unpartitionedVersion else { return finishPartitioned() }
        let filterRaw = filter.finish()
        let filterHandle = append(StoredBlock.encode(filterRaw, level: 0))
        let indexRaw = index.finish()
        let indexHandle = append(StoredBlock.encode(indexRaw, level: options.compressionLevel))
        let footer = TableFooter(
            version: TableFormat.unpartitionedVersion, filter: filterHandle, index: indexHandle, filterChecksum: checksum(filterRaw[...]),
            indexChecksum: checksum(indexRaw[...]))
        _ = append(footer.encoded())
        return takeBytes()
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

    /// Stores the partition being built (its filter, then its index) among the partitions, and
    /// starts the next at `dataEnd`.
    private mutating func cutPartition(dataEnd: UInt64) {
        let filterStored = StoredBlock.encode(filter.finish(), level: 0)
        let indexStored = StoredBlock.encode(index.finish(), level: options.compressionLevel)
        let filterHandle = BlockHandle(offset: UInt64(partitionBytes.count), length: UInt64(filterStored.count))
        let indexHandle = BlockHandle(offset: filterHandle.end, length: UInt64(indexStored.count))
        partitionBytes += filterStored
        partitionBytes += indexStored
        partitions.append(Partition(separator: lastSeparator, filter: filterHandle, index: indexHandle, dataStart: partitionDataStart))
        filter = BloomFilterBuilder(bitsPerKey: options.bitsPerKey)
        partitionDataStart = dataEnd
    }

    /// Version 5's end: the last partition, every partition, the top-level index (an entry per
    /// partition: its last separator, then its filter's handle, its index's handle and where
    /// its data blocks start) and the footer.
    private mutating func finishPartitioned() -> [UInt8] {
        if !index.isEmpty { cutPartition(dataEnd: size) }
        let dataEnd = size
        let region = append(partitionBytes)
        partitionBytes = []
        var top = BlockBuilder(restartInterval: 1)
        for partition in partitions {
            var writer = ByteWriter()
            BlockHandle(offset: dataEnd + partition.filter.offset, length: partition.filter.length).append(to: &writer)
            BlockHandle(offset: dataEnd + partition.index.offset, length: partition.index.length).append(to: &writer)
            writer.appendVarint64(partition.dataStart)
            top.add(key: partition.separator, value: writer.bytes)
        }
        let topRaw = top.finish()
        let topHandle = append(StoredBlock.encode(topRaw, level: options.compressionLevel))
        let footer = TableFooter(
            version: TableFormat.version, filter: region, index: topHandle, filterChecksum: UInt32(partitions.count),
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
