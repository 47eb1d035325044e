/// Writes a table (FORMAT.md, "Table files"): entries added in strictly ascending key order go
/// into data blocks of about ``Options/blockSize`` bytes; ``finish()`` appends the filter block,
/// the index block and the footer. The bytes are handed out as they are produced
/// (``takeBytes()``), so a caller can write a large table to a file without holding it whole.
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
    private(set) var entryCount = 0
    private(set) var dataBlockCount = 0
    private var finished = false

    init(options: Options = Options()) {
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

    /// Ends the table: the last data block, the filter, the index and the footer. Returns the
    /// bytes not yet taken; the table is whole once every byte taken has been written.
    mutating func finish() -> [UInt8] {
        precondition(!finished, "a table is finished once")
        finished = true
        if !data.isEmpty { flushData() }
        if let handle = unindexed, let lastKey { addIndexEntry(Self.successor(of: lastKey), handle) }
        let filterRaw = filter.finish()
        let filterHandle = append(StoredBlock.encode(filterRaw, level: 0))
        let indexRaw = index.finish()
        let indexHandle = append(StoredBlock.encode(indexRaw, level: options.compressionLevel))
        let footer = TableFooter(
            filter: filterHandle, index: indexHandle, filterChecksum: checksum(filterRaw[...]),
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
