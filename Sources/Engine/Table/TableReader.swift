/// Where a ``TableReader`` reads its bytes: a table file, or bytes in memory.
protocol TableSource: Sendable {
    /// For errors: the file's path.
    var path: String { get }
    func size() throws(EngineError) -> UInt64
    /// Exactly `count` bytes at `offset` (the caller has checked they are inside the file).
    func read(at offset: UInt64, count: Int) throws(EngineError) -> [UInt8]
}

/// A table file of the store's file system.
struct FileTableSource: TableSource {
    let file: any StoreFile
    var path: String { file.path }
    func size() throws(EngineError) -> UInt64 { try file.size() }
    func read(at offset: UInt64, count: Int) throws(EngineError) -> [UInt8] {
        let bytes = try file.read(at: offset, count: count)
        guard bytes.count == count else {
            throw .corruption("table ends at \(offset + UInt64(bytes.count)) inside a block it names", path: path, offset: offset)
        }
        return bytes
    }
}

/// A table held in memory (tests, fuzzing).
struct MemoryTableSource: TableSource {
    let bytes: [UInt8]
    var path: String = "<memory>"
    func size() throws(EngineError) -> UInt64 { UInt64(bytes.count) }
    func read(at offset: UInt64, count: Int) throws(EngineError) -> [UInt8] {
        Array(bytes[Int(offset)..<Int(offset) + count])
    }
}

/// Reads a table (FORMAT.md, "Table files"). Opening reads the footer alone (one read of its
/// fixed size, whatever the number of keys); the filter and the index are read and verified on
/// first use (two reads), then kept for the reader's life. A point read then consults the
/// filter, searches the index and reads one data block; a range scan reads the blocks it passes,
/// in either direction. Data blocks go through a ``TableBlockCache`` when one is given.
///
/// Every length and offset read from the file is checked before use: a damaged or crafted table
/// makes a call throw ``EngineError/Code/corruption`` (or ``EngineError/Code/unsupportedFormat``
/// for another version) naming the file and offset; no read asks for bytes past the file's end.
/// A filter or index that fails its checks (or cannot be read) is reported by every call that
/// needs it, and read again by the next.
struct TableReader: Sendable {
    let source: any TableSource
    /// The id blocks are cached under.
    let id: UInt64
    let footer: TableFooter
    private let metadata: Metadata
    private let cache: (any TableBlockCache)?

    /// What the filter and index blocks decode to.
    struct Loaded: Sendable {
        let filter: BloomFilter
        /// Per data block: its separator key (at or above its last key, below the next block's
        /// first) and its handle, in order.
        let separators: [[UInt8]]
        let handles: [BlockHandle]
    }

    /// The filter and index once loaded: shared by the reader's copies, loaded once.
    private final class Metadata: Sendable {
        let loaded = Locked<Loaded?>(nil)
    }

    var path: String { source.path }

    /// The number of data blocks (the index is loaded first if it is not yet).
    var dataBlockCount: Int {
        get throws(EngineError) { try metadataLoaded().handles.count }
    }

    /// The table's filter (loaded first if it is not yet).
    var filter: BloomFilter {
        get throws(EngineError) { try metadataLoaded().filter }
    }

    /// True once the filter and index have been read (for tests of what open reads).
    var isMetadataLoaded: Bool { metadata.loaded.withLock { $0 != nil } }

    /// A reader that caches nothing: every data block it needs is read and inflated again.
    init(source: any TableSource) throws(EngineError) {
        try self.init(source: source, id: 0, sharing: nil)
    }

    /// A reader whose data blocks go through `cache`, under `id`: every table sharing a cache
    /// needs an id of its own, or one table's blocks would answer for another's.
    init(source: any TableSource, id: UInt64, cache: any TableBlockCache) throws(EngineError) {
        try self.init(source: source, id: id, sharing: cache)
    }

    private init(source: any TableSource, id: UInt64, sharing cache: (any TableBlockCache)?) throws(EngineError) {
        self.source = source
        self.id = id
        self.cache = cache
        self.metadata = Metadata()
        let size = try source.size()
        let footerSize = UInt64(TableFormat.footerSize)
        guard size >= footerSize else {
            throw .corruption("table of \(size) bytes is shorter than its \(footerSize)-byte footer", path: source.path, offset: 0)
        }
        footer = try TableFooter.decode(
            try source.read(at: size - footerSize, count: TableFormat.footerSize)[...], fileSize: size, path: source.path)
    }

    /// The filter and index, read and verified the first time they are needed. The lock is held
    /// while they are read, so concurrent first uses read them once.
    private func metadataLoaded() throws(EngineError) -> Loaded {
        try metadata.loaded.withLock { loaded throws(EngineError) -> Loaded in
            if let loaded { return loaded }
            let fresh = try readMetadata()
            loaded = fresh
            return fresh
        }
    }

    /// Reads the filter and index blocks the footer names, checks each against its crc32 and
    /// decodes them.
    private func readMetadata() throws(EngineError) -> Loaded {
        let filterRaw = try StoredBlock.decode(
            try source.read(at: footer.filter.offset, count: Int(footer.filter.length))[...], path: source.path,
            offset: footer.filter.offset)
        guard checksum(filterRaw[...]) == footer.filterChecksum else {
            throw .corruption("table filter block does not match the footer's crc32", path: source.path, offset: footer.filter.offset)
        }
        let filter = try BloomFilter(raw: filterRaw, path: source.path, offset: footer.filter.offset)
        let indexRaw = try StoredBlock.decode(
            try source.read(at: footer.index.offset, count: Int(footer.index.length))[...], path: source.path,
            offset: footer.index.offset)
        guard checksum(indexRaw[...]) == footer.indexChecksum else {
            throw .corruption("table index block does not match the footer's crc32", path: source.path, offset: footer.index.offset)
        }
        let (separators, handles) = try Self.decodeIndex(
            Block(raw: indexRaw, path: source.path, offset: footer.index.offset),
            dataEnd: footer.filter.offset)
        return Loaded(filter: filter, separators: separators, handles: handles)
    }

    /// The index block's entries: separators ascending, handles back to back from offset 0 to
    /// the filter block, each a whole stored block.
    static func decodeIndex(_ block: Block, dataEnd: UInt64) throws(EngineError) -> ([[UInt8]], [BlockHandle]) {
        var separators: [[UInt8]] = []
        var handles: [BlockHandle] = []
        var expectedOffset: UInt64 = 0
        for interval in 0..<block.intervalCount {
            for entry in try block.interval(interval) {
                var reader = ByteReader(block.value(entry))
                guard let handle = BlockHandle.read(from: &reader), reader.isAtEnd else {
                    throw .corruption("table index entry \(handles.count) holds no block handle", path: block.path, offset: block.offset)
                }
                let maxLength = UInt64(LogFormat.maxBlockRawLength + 4 + TableFormat.trailerSize)
                guard handle.offset == expectedOffset, handle.length >= UInt64(TableFormat.trailerSize),
                    handle.length <= maxLength, handle.length <= dataEnd - handle.offset
                else {
                    throw .corruption(
                        "table index entry \(handles.count) names block \(handle.offset)+\(handle.length), not the next block before \(dataEnd)",
                        path: block.path, offset: block.offset)
                }
                if let last = separators.last, compareBytes(last, entry.key) >= 0 {
                    throw .corruption("table index separators are not ascending", path: block.path, offset: block.offset)
                }
                expectedOffset = handle.offset + handle.length
                separators.append(entry.key)
                handles.append(handle)
            }
        }
        guard expectedOffset == dataEnd else {
            throw .corruption("table index names data blocks up to \(expectedOffset), not up to the filter at \(dataEnd)", path: block.path, offset: block.offset)
        }
        return (separators, handles)
    }

    // MARK: Point reads

    /// The entry for `key` (a tombstone included), or nil when the table holds none: the filter
    /// first (most absent keys stop there), then the index, then one data block.
    func entry(forKey key: [UInt8]) throws(EngineError) -> TableEntry? {
        guard try filter.mayContain(key) else { return nil }
        return try entryAfterFilter(forKey: key)
    }

    // MARK: Range scans

    /// The entries whose keys lie in `range`, ascending (descending when `reverse`), at most
    /// `limit` of them. Reads only the blocks the range touches, seeking into the first by the
    /// index and then the block's restart points.
    func entries(in range: LogStore.KeyRange = .all, reverse: Bool = false, limit: Int = .max) throws(EngineError) -> [TableEntry] {
        var result: [TableEntry] = []
        guard limit > 0 else { return result }
        let loaded = try metadataLoaded()
        let handles = loaded.handles
        if !reverse {
            var blockIndex: Int
            switch range.lower {
            case .unbounded: blockIndex = 0
            case .inclusive(let key), .exclusive(let key): blockIndex = firstBlock(atOrAbove: key, in: loaded) ?? handles.count
            }
            while blockIndex < handles.count {
                let block = try dataBlock(handles[blockIndex])
                var interval = 0
                switch range.lower {
                case .unbounded: break
                case .inclusive(let key), .exclusive(let key): interval = try block.interval(atOrBefore: key) ?? 0
                }
                while interval < block.intervalCount {
                    for entry in try block.interval(interval) where range.isAboveLower(entry.key) {
                        guard range.isBelowUpper(entry.key) else { return result }
                        result.append(try decode(entry, in: block))
                        if result.count == limit { return result }
                    }
                    interval += 1
                }
                blockIndex += 1
            }
        } else {
            var blockIndex: Int
            switch range.upper {
            case .unbounded: blockIndex = handles.count - 1
            case .inclusive(let key), .exclusive(let key): blockIndex = min(firstBlock(atOrAbove: key, in: loaded) ?? handles.count, handles.count - 1)
            }
            while blockIndex >= 0 {
                let block = try dataBlock(handles[blockIndex])
                var interval = block.intervalCount - 1
                switch range.upper {
                case .unbounded: break
                case .inclusive(let key), .exclusive(let key): interval = try block.interval(atOrBefore: key) ?? -1
                }
                while interval >= 0 {
                    for entry in try block.interval(interval).reversed() where range.isBelowUpper(entry.key) {
                        guard range.isAboveLower(entry.key) else { return result }
                        result.append(try decode(entry, in: block))
                        if result.count == limit { return result }
                    }
                    interval -= 1
                }
                blockIndex -= 1
            }
        }
        return result
    }

    // MARK: Blocks

    /// The first data block whose separator is at or above `key`: the only one that can hold it,
    /// and where a scan from `key` starts. nil when `key` is above every separator.
    private func firstBlock(atOrAbove key: [UInt8], in loaded: Loaded) -> Int? {
        let separators = loaded.separators
        var low = 0
        var high = separators.count
        while low < high {
            let middle = (low + high) / 2
            if compareBytes(separators[middle], key) < 0 { low = middle + 1 } else { high = middle }
        }
        return low < separators.count ? low : nil
    }

    /// Where data block `index` lies.
    func dataBlockHandle(_ index: Int) throws(EngineError) -> BlockHandle { try metadataLoaded().handles[index] }

    /// Data block `index`, from the cache or read, verified and inflated.
    func dataBlock(_ index: Int) throws(EngineError) -> Block {
        try dataBlock(try metadataLoaded().handles[index])
    }

    /// The data block at `handle`, from the cache or read, verified and inflated.
    private func dataBlock(_ handle: BlockHandle) throws(EngineError) -> Block {
        let blockID = TableBlockID(table: id, offset: handle.offset)
        if let raw = cache?.block(blockID) { return try Block(raw: raw, path: path, offset: handle.offset) }
        let stored = try source.read(at: handle.offset, count: Int(handle.length))
        let raw = try StoredBlock.decode(stored[...], path: path, offset: handle.offset)
        let block = try Block(raw: raw, path: path, offset: handle.offset)
        cache?.insert(raw, for: blockID)
        return block
    }

    /// Every entry of data block `index`, read from the file and verified, bypassing the cache (a
    /// merge reads each block once, and must not evict what reads keep hot).
    func entries(ofBlock index: Int) throws(EngineError) -> [TableEntry] {
        let handle = try metadataLoaded().handles[index]
        let stored = try source.read(at: handle.offset, count: Int(handle.length))
        let raw = try StoredBlock.decode(stored[...], path: path, offset: handle.offset)
        let block = try Block(raw: raw, path: path, offset: handle.offset)
        var result: [TableEntry] = []
        for interval in 0..<block.intervalCount {
            for entry in try block.interval(interval) { result.append(try decode(entry, in: block)) }
        }
        return result
    }

    /// The entry for `key` when the caller has already consulted the filter (and counted it).
    func entryAfterFilter(forKey key: [UInt8]) throws(EngineError) -> TableEntry? {
        let loaded = try metadataLoaded()
        guard let blockIndex = firstBlock(atOrAbove: key, in: loaded) else { return nil }
        return try entry(forKey: key, in: try dataBlock(loaded.handles[blockIndex]))
    }

    /// The entry for `key` in `block` (the one data block that may hold it), `nil` if none.
    private func entry(forKey key: [UInt8], in block: Block) throws(EngineError) -> TableEntry? {
        guard let interval = try block.interval(atOrBefore: key) else { return nil }
        for entry in try block.interval(interval) where compareBytes(entry.key, key) >= 0 {
            guard entry.key == key else { return nil }
            return try decode(entry, in: block)
        }
        return nil
    }

    /// The entries for `keys` (ascending, without repeats) when the caller has already consulted
    /// the filter for each: `nil` where the table holds none. The index is searched once per key,
    /// and each data block is read (or taken from the cache) and its restart array checked once
    /// for all the keys it can hold, not once per key.
    func entriesAfterFilter(forSortedKeys keys: [[UInt8]]) throws(EngineError) -> [TableEntry?] {
        var result = [TableEntry?](repeating: nil, count: keys.count)
        guard !keys.isEmpty else { return result }
        let loaded = try metadataLoaded()
        var current: (index: Int, block: Block)?
        for (position, key) in keys.enumerated() {
            guard let blockIndex = firstBlock(atOrAbove: key, in: loaded) else { break }
            let block: Block
            if let current, current.index == blockIndex {
                block = current.block
            } else {
                block = try dataBlock(loaded.handles[blockIndex])
                current = (blockIndex, block)
            }
            result[position] = try entry(forKey: key, in: block)
        }
        return result
    }

    private func decode(_ entry: Block.Entry, in block: Block) throws(EngineError) -> TableEntry {
        guard let decoded = TableEntry.decode(key: entry.key, value: block.value(entry)) else {
            throw .corruption("table entry's value is not a value, a tombstone or a blob reference", path: path, offset: block.offset)
        }
        return decoded
    }
}
