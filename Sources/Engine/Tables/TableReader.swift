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
/// fixed size, whatever the number of keys). What a reader offers is three things: its
/// metadata, ``get(_:)`` (a point read) with ``mayContain(_:)-(UnsafeRawBufferPointer)`` (the
/// filter), and ``cursor(caching:)`` (a ``TableCursor``, the one way to walk entries).
///
/// A version-5 table's metadata is partitioned: the first use reads and verifies the top-level
/// index (one read, an entry per partition), which the reader keeps for its life; a point read
/// then takes one filter partition, one index partition and one data block, each read once and
/// kept in the ``TableBlockCache`` when one is given (bounded by its budget, as data blocks
/// are). Nothing reads a whole-table structure. A version-4 table's one filter block and one
/// index block are read on first use (two reads) and kept for the reader's life, as one
/// partition that never leaves memory.
///
/// Every length and offset read from the file is checked before use: a damaged or crafted table
/// makes a call throw ``EngineError/Code/corruption`` (or ``EngineError/Code/unsupportedFormat``
/// for another version) naming the file and offset; no read asks for bytes past the file's end.
/// An index partition is checked whole when it is read (before it is cached): handles back to
/// back over its data blocks, separators ascending, its last separator the top-level index's.
/// Metadata that fails its checks (or cannot be read) is reported by every call that needs it,
/// and read again by the next.
struct TableReader: Sendable {
    let source: any TableSource
    /// The id blocks are cached under.
    let id: UInt64
    let footer: TableFooter
    /// The first and last keys the manifest records for the table, checked against its first
    /// and last data blocks when the metadata is first loaded; nil: not checked (a table read
    /// outside a store).
    let expectedKeys: KeyBounds?
    private let metadata: Metadata
    private let cache: TableBlockCache?

    /// A table's first and last keys.
    struct KeyBounds: Sendable {
        let smallest: [UInt8]
        let largest: [UInt8]
    }

    /// A run of data blocks with its filter and index partition (version 5), or the whole table
    /// (version 4: its filter and index blocks).
    struct Partition: Sendable, Equatable {
        let filter: BlockHandle
        let index: BlockHandle
        /// The data blocks the index partition names tile `dataStart..<dataEnd`.
        let dataStart: UInt64
        let dataEnd: UInt64
    }

    /// What a reader keeps once the table's metadata is first used.
    struct Loaded: Sendable {
        /// Version 5: the top-level index, entry `p` (restart point `p`) holding partition `p`'s
        /// last separator. Version 4: the index block.
        let top: Block
        let partitions: [Partition]
        /// Version 4 only: the whole-table filter and index, resident.
        let wholeFilter: BloomFilter?
        let wholeIndex: Block?

        /// The only partition that can hold `key`, where a scan from `key` starts: the first
        /// whose last separator is at or above it. nil when `key` is above every separator
        /// (version 4: when the table is empty; its one index block answers the rest).
        func partition(atOrAbove key: UnsafeRawBufferPointer) throws(EngineError) -> Int? {
            if wholeIndex != nil { return partitions.isEmpty ? nil : 0 }
            return try TableReader.firstEntry(in: top, count: partitions.count, atOrAbove: key)
        }
    }

    /// The metadata once loaded: shared by the reader's copies, loaded once.
    private final class Metadata: Sendable {
        let loaded = Locked<Loaded?>(nil)
    }

    var path: String { source.path }

    /// True once the reader keeps the metadata it needs first (version 5: the top-level index;
    /// version 4: the filter and index), for tests of what open reads.
    var isMetadataLoaded: Bool { metadata.loaded.withLock { $0 != nil } }

    /// A reader that caches nothing: every partition and data block it needs is read again.
    init(source: any TableSource) throws(EngineError) {
        try self.init(source: source, id: 0, sharing: nil, expectedKeys: nil)
    }

    /// A reader whose partitions and data blocks go through `cache`, under `id`: every table
    /// sharing a cache needs an id of its own, or one table's blocks would answer for another's.
    /// With `expectedKeys` (what the manifest records), the first load of the metadata checks
    /// that the table's first and last keys are those.
    init(source: any TableSource, id: UInt64, cache: TableBlockCache, expectedKeys: KeyBounds? = nil) throws(EngineError) {
        try self.init(source: source, id: id, sharing: cache, expectedKeys: expectedKeys)
    }

    private init(source: any TableSource, id: UInt64, sharing cache: TableBlockCache?, expectedKeys: KeyBounds?) throws(EngineError) {
        self.source = source
        self.id = id
        self.cache = cache
        self.expectedKeys = expectedKeys
        self.metadata = Metadata()
        let size = try source.size()
        let footerSize = UInt64(TableFormat.footerSize)
        guard size >= footerSize else {
            throw .corruption("table of \(size) bytes is shorter than its \(footerSize)-byte footer", path: source.path, offset: 0)
        }
        footer = try TableFooter.decode(
            try source.read(at: size - footerSize, count: TableFormat.footerSize)[...], fileSize: size, path: source.path)
    }

    /// The metadata, read and verified the first time it is needed. The lock is held while it is
    /// read, so concurrent first uses read it once.
    func metadataLoaded() throws(EngineError) -> Loaded {
        try metadata.loaded.withLock { loaded throws(EngineError) -> Loaded in
            if let loaded { return loaded }
            let fresh = try readMetadata()
            if let expectedKeys { try checkKeys(fresh, expectedKeys) }
            loaded = fresh
            return fresh
        }
    }

    /// The stored block at `handle` (inside the file: checked by the caller), its trailer checked
    /// and its contents inflated.
    private func readRaw(_ handle: BlockHandle) throws(EngineError) -> [UInt8] {
        try StoredBlock.decode(try source.read(at: handle.offset, count: Int(handle.length))[...], path: source.path, offset: handle.offset)
    }

    /// Version 5: the top-level index, checked against the footer's crc32 and decoded. Version 4:
    /// the filter and index blocks, each checked against its crc32, decoded.
    private func readMetadata() throws(EngineError) -> Loaded {
        if footer.isPartitioned {
            let topRaw = try readRaw(footer.index)
            guard checksum(topRaw[...]) == footer.indexChecksum else {
                throw .corruption("table top-level index does not match the footer's crc32", path: source.path, offset: footer.index.offset)
            }
            let top = try Block(raw: topRaw, path: source.path, offset: footer.index.offset)
            return Loaded(top: top, partitions: try Self.decodeTopIndex(top, footer: footer), wholeFilter: nil, wholeIndex: nil)
        }
        let filterRaw = try readRaw(footer.filter)
        guard checksum(filterRaw[...]) == footer.filterChecksum else {
            throw .corruption("table filter block does not match the footer's crc32", path: source.path, offset: footer.filter.offset)
        }
        let filter = try BloomFilter(raw: filterRaw, path: source.path, offset: footer.filter.offset, coversKeys: footer.dataEnd > 0)
        let indexRaw = try readRaw(footer.index)
        guard checksum(indexRaw[...]) == footer.indexChecksum else {
            throw .corruption("table index block does not match the footer's crc32", path: source.path, offset: footer.index.offset)
        }
        let index = try Block(raw: indexRaw, path: source.path, offset: footer.index.offset)
        let handles = try Self.decodeIndex(index, dataEnd: footer.dataEnd)
        let whole = Partition(filter: footer.filter, index: footer.index, dataStart: 0, dataEnd: footer.dataEnd)
        return Loaded(top: index, partitions: handles.isEmpty ? [] : [whole], wholeFilter: filter, wholeIndex: index)
    }

    /// A version-5 top-level index's partitions, checked: one entry per restart point (it
    /// restarts at every entry), as many as the footer declares, separators ascending; each
    /// entry's value a filter handle, an index handle and a data offset, nothing after; filter
    /// and index partitions back to back, in that order, from the end of the data blocks to the
    /// top-level index, each at least a trailer and at most the longest stored block; data
    /// offsets from 0, strictly ascending, below the end of the data blocks (none without data).
    static func decodeTopIndex(_ top: Block, footer: TableFooter) throws(EngineError) -> [Partition] {
        let trailer = UInt64(TableFormat.trailerSize)
        let dataEnd = footer.dataEnd
        let regionEnd = footer.index.offset
        var found: [(filter: BlockHandle, index: BlockHandle, dataStart: UInt64)] = []
        var expected = footer.filter.offset
        var cursor = BlockCursor(top)
        try cursor.first()
        var more = cursor.isValid
        while more {
            let value = cursor.value
            var position = 0
            guard let filter = BlockHandle.read(value, at: &position), let index = BlockHandle.read(value, at: &position),
                let dataStart = BlockHandle.readVarint64(value, at: &position), position == value.count
            else {
                throw .corruption(
                    "table top-level index entry \(found.count) is not two block handles and a data offset", path: top.path, offset: top.offset)
            }
            guard filter.offset == expected, filter.length >= trailer, filter.length <= TableFormat.maxStoredBlockLength,
                filter.length <= regionEnd - filter.offset, index.offset == filter.end, index.length >= trailer,
                index.length <= TableFormat.maxStoredBlockLength, index.length <= regionEnd - index.offset
            else {
                throw .corruption(
                    "table top-level index entry \(found.count) names partitions \(filter.offset)+\(filter.length) and \(index.offset)+\(index.length), not the next two before \(regionEnd)",
                    path: top.path, offset: top.offset)
            }
            guard found.isEmpty ? dataStart == 0 : dataStart > found[found.count - 1].dataStart, dataStart < dataEnd else {
                throw .corruption(
                    "table top-level index entry \(found.count) starts its data blocks at \(dataStart), out of order or past the data's end \(dataEnd)",
                    path: top.path, offset: top.offset)
            }
            expected = index.end
            found.append((filter, index, dataStart))
            more = try cursor.next()
        }
        guard found.count == top.restartCount, found.count == footer.partitionCount else {
            throw .corruption(
                "table top-level index holds \(found.count) entries but \(top.restartCount) restart points and a footer declaring \(footer.partitionCount) partitions",
                path: top.path, offset: top.offset)
        }
        guard expected == regionEnd, !found.isEmpty || dataEnd == 0 else {
            throw .corruption(
                "table top-level index names partitions up to \(expected) (data blocks from \(found.isEmpty ? "none" : "0")), not up to itself at \(regionEnd) (data to \(dataEnd))",
                path: top.path, offset: top.offset)
        }
        return found.indices.map { p in
            Partition(
                filter: found[p].filter, index: found[p].index, dataStart: found[p].dataStart,
                dataEnd: p + 1 < found.count ? found[p + 1].dataStart : dataEnd)
        }
    }

    /// An index block's (version 5: an index partition's) handles, checked: one entry per
    /// restart point (an index restarts at every entry), separators ascending, handles back to
    /// back from `dataStart` to `dataEnd`, each a whole stored block; with `lastSeparator` (an
    /// index partition), at least one entry and the last separator equal to it.
    static func decodeIndex(
        _ block: Block, dataStart: UInt64 = 0, dataEnd: UInt64, lastSeparator: UnsafeRawBufferPointer? = nil
    ) throws(EngineError) -> [BlockHandle] {
        var handles: [BlockHandle] = []
        var expectedOffset = dataStart
        var cursor = BlockCursor(block)
        try cursor.first()
        var more = cursor.isValid
        var lastMatches = false
        while more {
            let value = cursor.value
            var position = 0
            guard let handle = BlockHandle.read(value, at: &position), position == value.count else {
                throw .corruption("table index entry \(handles.count) holds no block handle", path: block.path, offset: block.offset)
            }
            guard handle.offset == expectedOffset, handle.length >= UInt64(TableFormat.trailerSize),
                handle.length <= TableFormat.maxStoredBlockLength, handle.length <= dataEnd - handle.offset
            else {
                throw .corruption(
                    "table index entry \(handles.count) names block \(handle.offset)+\(handle.length), not the next block before \(dataEnd)",
                    path: block.path, offset: block.offset)
            }
            expectedOffset = handle.end
            handles.append(handle)
            if let lastSeparator { lastMatches = compareBytes(cursor.key, lastSeparator) == 0 }
            more = try cursor.next()
        }
        guard handles.count == block.restartCount else {
            throw .corruption(
                "table index holds \(handles.count) entries but \(block.restartCount) restart points (it restarts at every entry)",
                path: block.path, offset: block.offset)
        }
        guard expectedOffset == dataEnd else {
            throw .corruption("table index names data blocks up to \(expectedOffset), not up to \(dataEnd)", path: block.path, offset: block.offset)
        }
        if lastSeparator != nil, !lastMatches {
            throw .corruption(
                "table index partition's last separator is not the one the top-level index names for it", path: block.path, offset: block.offset)
        }
        return handles
    }

    /// The first of the first `count` entries of `index` (an index block: an entry per restart
    /// point) whose key is at or above `key`, by binary search in place; nil when every key is
    /// below it.
    static func firstEntry(in index: Block, count: Int, atOrAbove key: UnsafeRawBufferPointer) throws(EngineError) -> Int? {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if compareBytes(try index.restartKey(middle), key) < 0 { low = middle + 1 } else { high = middle }
        }
        return low < count ? low : nil
    }

    /// The handle of entry `entry` of the index block (or partition) `index`, decoded in place.
    /// The block was checked whole when it was read; a handle that does not decode is corruption
    /// all the same.
    static func handle(in index: Block, _ entry: Int) throws(EngineError) -> BlockHandle {
        let header = try BlockEntryHeader.decode(
            in: index, at: index.restart(entry), end: index.intervalEnd(entry), previousKeyLength: 0, first: true)
        let value = UnsafeRawBufferPointer(rebasing: index.bytes[header.valueStart..<header.valueEnd])
        var position = 0
        guard let handle = BlockHandle.read(value, at: &position), position == value.count else {
            throw index.corrupt("index entry \(entry) holds no block handle", at: header.valueStart)
        }
        return handle
    }

    // MARK: Partitions

    /// The index block of partition `partition`: version 4's resident index, or the index
    /// partition from the cache or read, verified whole, parsed (and cached when `caching`).
    func indexBlock(of partition: Int, in loaded: Loaded, caching: Bool) throws(EngineError) -> Block {
        if let whole = loaded.wholeIndex { return whole }
        return try cachedBlock(loaded.partitions[partition].index, caching: caching) { block throws(EngineError) in
            _ = try Self.decodeIndex(
                block, dataStart: loaded.partitions[partition].dataStart, dataEnd: loaded.partitions[partition].dataEnd,
                lastSeparator: try loaded.top.restartKey(partition))
        }
    }

    /// The filter of partition `partition`: version 4's resident filter, or the filter partition
    /// from the cache or read, verified and cached.
    func filter(of partition: Int, in loaded: Loaded) throws(EngineError) -> BloomFilter {
        if let whole = loaded.wholeFilter { return whole }
        let handle = loaded.partitions[partition].filter
        let blockID = TableBlockID(table: id, offset: handle.offset)
        if let cache, let filter = cache.filter(blockID) { return filter }
        let filter = try BloomFilter(raw: try readRaw(handle), path: path, offset: handle.offset)
        cache?.insert(filter, for: blockID)
        return filter
    }

    /// The filter of partition `partition` (tests and tools).
    func filter(ofPartition partition: Int) throws(EngineError) -> BloomFilter {
        try filter(of: partition, in: try metadataLoaded())
    }

    /// The number of partitions (version 4: 1, or 0 for a table of no entries).
    var partitionCount: Int {
        get throws(EngineError) { try metadataLoaded().partitions.count }
    }

    // MARK: Point reads

    /// False only when the table certainly holds no entry for `key`: the filter of the one
    /// partition that could hold it (nothing read when `key` is above every separator).
    func mayContain(_ key: UnsafeRawBufferPointer) throws(EngineError) -> Bool {
        let loaded = try metadataLoaded()
        guard let partition = try loaded.partition(atOrAbove: key) else { return false }
        return try filter(of: partition, in: loaded).mayContain(key)
    }

    /// ``mayContain(_:)-(UnsafeRawBufferPointer)`` for a key held in an array.
    func mayContain(_ key: [UInt8]) throws(EngineError) -> Bool {
        try withBytes(key) { key throws(EngineError) in try mayContain(key) }
    }

    /// The entry for `key` (a tombstone included) when the caller has already consulted the
    /// filter: a search of the top-level index and of one index partition (version 4: of the
    /// index), then of one data block's restart points, keys compared in place, then a walk of
    /// one restart interval. The entry is a view into the block, which it holds. nil when the
    /// table holds no entry for `key`.
    func get(_ key: UnsafeRawBufferPointer) throws(EngineError) -> TableEntryView? {
        let loaded = try metadataLoaded()
        guard let partition = try loaded.partition(atOrAbove: key) else { return nil }
        return try entry(key, in: partition, of: loaded)
    }

    /// What a point read of `key` finds in the table.
    enum Lookup {
        /// The filter says the table holds no entry for `key` (or `key` is above every key).
        case filteredOut
        /// The filter let `key` through, and the table holds no entry for it.
        case absent
        /// The entry for `key`, a tombstone included.
        case found(TableEntryView)
    }

    /// A point read of `key` with the filter first: ``mayContain(_:)-(UnsafeRawBufferPointer)``
    /// then ``get(_:)`` with the metadata taken and the partition searched once for both.
    func lookup(_ key: UnsafeRawBufferPointer) throws(EngineError) -> Lookup {
        let loaded = try metadataLoaded()
        guard let partition = try loaded.partition(atOrAbove: key), try filter(of: partition, in: loaded).mayContain(key) else {
            return .filteredOut
        }
        return try entry(key, in: partition, of: loaded).map(Lookup.found) ?? .absent
    }

    /// The entry for `key` in partition `partition`: its index searched, then one data block.
    private func entry(_ key: UnsafeRawBufferPointer, in partition: Int, of loaded: Loaded) throws(EngineError) -> TableEntryView? {
        let index = try indexBlock(of: partition, in: loaded, caching: true)
        guard let entry = try Self.firstEntry(in: index, count: index.restartCount, atOrAbove: key) else { return nil }
        let block = try dataBlock(in: index, entry: entry, partition: partition, of: loaded, caching: true)
        guard let range = try block.find(key) else {
            // A key below the block's first key belongs, if anywhere, to the block before, which
            // a separator below its last key would have hidden: that block's own check (when it
            // is read, or was) tells. Only misses the filter let through get here.
            if block.restartCount > 0, compareBytes(key, try block.restartKey(0)) < 0 {
                if entry > 0 {
                    _ = try dataBlock(in: index, entry: entry - 1, partition: partition, of: loaded, caching: true)
                } else if partition > 0 {
                    let before = try indexBlock(of: partition - 1, in: loaded, caching: true)
                    _ = try dataBlock(in: before, entry: before.restartCount - 1, partition: partition - 1, of: loaded, caching: true)
                }
            }
            return nil
        }
        return try TableEntryView(block: block, value: range)
    }

    /// A cursor over the table's entries, not yet positioned. With `caching`, the blocks it reads
    /// (index partitions and data blocks) go into the block cache (reads and scans); without,
    /// blocks are taken from the cache when there but never put in it (a merge reads each block
    /// once, and must not evict what reads keep hot).
    func cursor(caching: Bool = true) -> TableCursor { TableCursor(reader: self, caching: caching) }

    // MARK: Blocks

    /// Every data block's handle, in order, from every index partition (tests, tools and
    /// fuzzing: reads walk a cursor).
    func dataBlockHandles() throws(EngineError) -> [BlockHandle] {
        let loaded = try metadataLoaded()
        var handles: [BlockHandle] = []
        for partition in loaded.partitions.indices {
            let index = try indexBlock(of: partition, in: loaded, caching: false)
            for entry in 0..<index.restartCount { handles.append(try Self.handle(in: index, entry)) }
        }
        return handles
    }

    /// The number of data blocks (every index partition read).
    var dataBlockCount: Int {
        get throws(EngineError) { try dataBlockHandles().count }
    }

    /// Where data block `index` lies.
    func dataBlockHandle(_ index: Int) throws(EngineError) -> BlockHandle { try dataBlockHandles()[index] }

    /// Data block `index`, from the cache or read, verified and parsed.
    func dataBlock(_ index: Int, caching: Bool = true) throws(EngineError) -> Block {
        try dataBlock(try dataBlockHandles()[index], caching: caching)
    }

    /// The data block at `handle`, from the cache or read, verified and parsed (and cached when
    /// `caching`).
    func dataBlock(_ handle: BlockHandle, caching: Bool) throws(EngineError) -> Block {
        try cachedBlock(handle, caching: caching) { _ in }
    }

    /// Data block `entry` of partition `partition` (`index`, its index block), from the cache or
    /// read, verified and parsed (and cached when `caching`). A block read is also checked
    /// against the separators that lead to it, which their crc32s cannot vouch for: its last key
    /// at or below its own separator, its first key above the separator before it (the entry
    /// before, or the previous partition's last). A separator below its block's last key would
    /// send a point read of the keys between them to the next block, to read as absent. The
    /// check costs a decode of the block's first and last restart intervals, per block read,
    /// never per entry or per cache hit.
    func dataBlock(in index: Block, entry: Int, partition: Int, of loaded: Loaded, caching: Bool) throws(EngineError) -> Block {
        try cachedBlock(try Self.handle(in: index, entry), caching: caching) { block throws(EngineError) in
            guard block.restartCount > 0 else { return }
            var cursor = BlockCursor(block)
            try cursor.last()
            guard compareBytes(cursor.key, try index.restartKey(entry)) <= 0 else {
                throw .corruption(
                    "table data block's last key is above its index separator (a point read would miss it); run LogStore.salvage(at:), which rebuilds the index",
                    path: path, offset: block.offset)
            }
            let previous: UnsafeRawBufferPointer? =
                if entry > 0 { try index.restartKey(entry - 1) } else if partition > 0 { try loaded.top.restartKey(partition - 1) } else { nil }
            if let previous, compareBytes(try block.restartKey(0), previous) <= 0 {
                throw .corruption(
                    "table data block's first key is not above the index separator before it; run LogStore.salvage(at:), which rebuilds the index",
                    path: path, offset: block.offset)
            }
        }
    }

    /// Checks the table's first and last keys against `expected`, the manifest's record of
    /// them: reads (through the cache) the first and the last data block and the index
    /// partitions that name them — for most tables the blocks a first read needs anyway, and
    /// at most two index partitions and two data blocks, once per table. An edge block that
    /// cannot be read leaves its end unchecked (the reads that reach it report it). A key range recorded
    /// narrower than the table's would skip reads of the keys outside it (absent, or an older
    /// version from an older table), wider would make needless reads; either is corruption.
    private func checkKeys(_ loaded: Loaded, _ expected: KeyBounds) throws(EngineError) {
        func mismatch(_ which: String, at offset: UInt64) -> EngineError {
            .corruption(
                "table's \(which) key is not the one the manifest records for it (a manifest key range that disagrees with its table hides keys or versions); run LogStore.salvage(at:)",
                path: path, offset: offset)
        }
        guard let last = loaded.partitions.indices.last else { throw mismatch("first", at: footer.dataEnd) }
        // An edge block (or its index partition) that fails its own checks leaves that end
        // unchecked: its damage is reported by the reads that reach it, and the rest of the
        // table stays readable.
        func edge(_ partition: Int, last: Bool) -> Block? {
            guard let index = try? indexBlock(of: partition, in: loaded, caching: true), index.restartCount > 0 else { return nil }
            return try? dataBlock(in: index, entry: last ? index.restartCount - 1 : 0, partition: partition, of: loaded, caching: true)
        }
        if let first = edge(0, last: false) {
            guard first.restartCount > 0 else { throw mismatch("first", at: first.offset) }
            let firstKey = try first.restartKey(0)
            guard expected.smallest.withUnsafeBytes({ compareBytes(firstKey, $0) }) == 0 else { throw mismatch("first", at: first.offset) }
        }
        if let final = edge(last, last: true) {
            var cursor = BlockCursor(final)
            try cursor.last()
            guard cursor.isValid, expected.largest.withUnsafeBytes({ compareBytes(cursor.key, $0) }) == 0 else {
                throw mismatch("last", at: final.offset)
            }
        }
    }

    /// The block at `handle` from the cache, or read, verified, parsed, passed through `check`
    /// (which throws for a block that must not be kept) and cached when `caching`.
    private func cachedBlock(
        _ handle: BlockHandle, caching: Bool, check: (Block) throws(EngineError) -> Void
    ) throws(EngineError) -> Block {
        let blockID = TableBlockID(table: id, offset: handle.offset)
        if let cache, let block = cache.block(blockID) { return block }
        let block = try Block(raw: try readRaw(handle), path: path, offset: handle.offset)
        try check(block)
        if caching, let cache { cache.insert(block, for: blockID) }
        return block
    }
}

/// One table entry seen in place: the block that holds it (kept alive by the view), and its
/// stored value decoded up to the payload: kind, sequence, and where the value or the blob
/// reference lies.
struct TableEntryView: Sendable {
    let block: Block
    let kind: UInt8
    let sequence: UInt64
    /// The value's bytes (kind value) or the encoded reference (kind blob) in ``Block/bytes``.
    let payload: Range<Int>

    /// Decodes the stored value at `value` in `block`.
    init(block: Block, value: Range<Int>) throws(EngineError) {
        guard let parsed = Self.parse(UnsafeRawBufferPointer(rebasing: block.bytes[value])) else { throw Self.corruptValue(in: block) }
        self.block = block
        kind = parsed.kind
        sequence = parsed.sequence
        payload = value.lowerBound + parsed.payloadStart..<value.upperBound
    }

    /// A stored value's kind, sequence and where its payload starts; nil when the bytes are not
    /// a well-formed value (an unknown kind, a sequence out of range, a tombstone with a payload).
    /// A blob reference's own checks come when it is decoded (``blobReference()``).
    @inline(__always)
    static func parse(_ bytes: UnsafeRawBufferPointer) -> (kind: UInt8, sequence: UInt64, payloadStart: Int)? {
        guard bytes.count >= 2 else { return nil }
        let kind = bytes[0]
        var sequence: UInt64 = 0
        var shift: UInt64 = 0
        var position = 1
        while true {
            guard position < bytes.count, shift <= 63 else { return nil }
            let byte = bytes[position]
            if shift == 63, byte > 1 { return nil }
            position += 1
            sequence |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        guard sequence < LogFormat.maxSequence else { return nil }
        switch kind {
        case TableFormat.kindValue, TableFormat.kindBlob: return (kind, sequence, position)
        case TableFormat.kindTombstone: return position == bytes.count ? (kind, sequence, position) : nil
        default: return nil
        }
    }

    var isTombstone: Bool { kind == TableFormat.kindTombstone }
    var isBlob: Bool { kind == TableFormat.kindBlob }

    /// The value's bytes in place (kind value only), valid while the view is held.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: block.bytes[payload]) }

    /// The blob reference (kind blob only), decoded and checked.
    func blobReference() throws(EngineError) -> BlobReference { try Self.blobReference(bytes, in: block) }

    /// The blob reference encoded in `payload`, a view into `block`, decoded and checked.
    static func blobReference(_ payload: UnsafeRawBufferPointer, in block: Block) throws(EngineError) -> BlobReference {
        var reader = ByteReader(Array(payload)[...])
        guard let reference = BlobReference.read(from: &reader), reader.isAtEnd else {
            throw .corruption("table entry's blob reference is malformed", path: block.path, offset: block.offset)
        }
        return reference
    }

    /// The error for a stored value in `block` that does not decode.
    static func corruptValue(in block: Block) -> EngineError {
        .corruption("table entry's value is not a value, a tombstone or a blob reference", path: block.path, offset: block.offset)
    }

    /// The version a read finds here: nil for a tombstone.
    func version() throws(EngineError) -> LogStore.Version? {
        switch kind {
        case TableFormat.kindValue: .table(self)
        case TableFormat.kindBlob: .blob(try blobReference())
        default: nil
        }
    }

    /// The entry as an owned ``TableEntry`` with `key` (copies the value).
    func entry(key: [UInt8]) throws(EngineError) -> TableEntry {
        switch kind {
        case TableFormat.kindValue: TableEntry(key: key, sequence: sequence, value: .value(Array(bytes)))
        case TableFormat.kindBlob: TableEntry(key: key, sequence: sequence, value: .blob(try blobReference()))
        default: TableEntry(key: key, sequence: sequence, value: .tombstone)
        }
    }
}
