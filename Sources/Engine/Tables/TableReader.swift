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
/// first use (two reads), then kept for the reader's life. What a reader offers is three things:
/// its metadata, ``get(_:)`` (a point read: the filter, a search of the index in place, one
/// data block and a search of its restart points) and ``cursor(caching:)`` (a ``TableCursor``,
/// the one way to walk entries). Data blocks are parsed once (``Block``) and kept in a
/// ``TableBlockCache`` when one is given.
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
    private let cache: TableBlockCache?

    /// What the filter and index blocks decode to.
    struct Loaded: Sendable {
        let filter: BloomFilter
        /// The index block, searched in place: entry `i` (restart point `i`) holds data block
        /// `i`'s separator (at or above its last key, below the next block's first) and handle.
        let index: Block
        /// Each data block's handle, in order (decoded from the index once).
        let handles: [BlockHandle]

        /// The first data block whose separator is at or above `key`: the only one that can hold
        /// it, and where a scan from `key` starts. nil when `key` is above every separator.
        func firstBlock(atOrAbove key: UnsafeRawBufferPointer) throws(EngineError) -> Int? {
            var low = 0
            var high = handles.count
            while low < high {
                let middle = (low + high) / 2
                if compareBytes(try index.restartKey(middle), key) < 0 { low = middle + 1 } else { high = middle }
            }
            return low < handles.count ? low : nil
        }
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
    init(source: any TableSource, id: UInt64, cache: TableBlockCache) throws(EngineError) {
        try self.init(source: source, id: id, sharing: cache)
    }

    private init(source: any TableSource, id: UInt64, sharing cache: TableBlockCache?) throws(EngineError) {
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
    func metadataLoaded() throws(EngineError) -> Loaded {
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
        let index = try Block(raw: indexRaw, path: source.path, offset: footer.index.offset)
        let handles = try Self.decodeIndex(index, dataEnd: footer.filter.offset)
        return Loaded(filter: filter, index: index, handles: handles)
    }

    /// The index block's handles, checked: one entry per restart point (the index restarts at
    /// every entry), separators ascending, handles back to back from offset 0 to the filter
    /// block, each a whole stored block.
    static func decodeIndex(_ block: Block, dataEnd: UInt64) throws(EngineError) -> [BlockHandle] {
        var handles: [BlockHandle] = []
        var expectedOffset: UInt64 = 0
        var cursor = BlockCursor(block)
        try cursor.first()
        var more = cursor.isValid
        while more {
            var reader = ByteReader(Array(cursor.value)[...])
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
            expectedOffset = handle.offset + handle.length
            handles.append(handle)
            more = try cursor.next()
        }
        guard handles.count == block.restartCount else {
            throw .corruption(
                "table index holds \(handles.count) entries but \(block.restartCount) restart points (it restarts at every entry)",
                path: block.path, offset: block.offset)
        }
        guard expectedOffset == dataEnd else {
            throw .corruption("table index names data blocks up to \(expectedOffset), not up to the filter at \(dataEnd)", path: block.path, offset: block.offset)
        }
        return handles
    }

    // MARK: Point reads

    /// The entry for `key` (a tombstone included) when the caller has already consulted the
    /// filter: a search of the index and of one data block's restart points, keys compared in
    /// place, then a walk of one restart interval. The entry is a view into the block, which it
    /// holds. nil when the table holds no entry for `key`.
    func get(_ key: UnsafeRawBufferPointer) throws(EngineError) -> TableEntryView? {
        let loaded = try metadataLoaded()
        guard let blockIndex = try loaded.firstBlock(atOrAbove: key) else { return nil }
        let block = try dataBlock(loaded.handles[blockIndex], caching: true)
        guard let range = try block.find(key) else { return nil }
        return try TableEntryView(block: block, value: range)
    }

    /// A cursor over the table's entries, not yet positioned. With `caching`, the blocks it reads
    /// go into the block cache (reads and scans); without, blocks are taken from the cache when
    /// there but never put in it (a merge reads each block once, and must not evict what reads
    /// keep hot).
    func cursor(caching: Bool = true) -> TableCursor { TableCursor(reader: self, caching: caching) }

    // MARK: Blocks

    /// Where data block `index` lies.
    func dataBlockHandle(_ index: Int) throws(EngineError) -> BlockHandle { try metadataLoaded().handles[index] }

    /// Data block `index`, from the cache or read, verified and parsed.
    func dataBlock(_ index: Int, caching: Bool = true) throws(EngineError) -> Block {
        try dataBlock(try metadataLoaded().handles[index], caching: caching)
    }

    /// The data block at `handle`, from the cache or read, verified and parsed (and cached when
    /// `caching`).
    func dataBlock(_ handle: BlockHandle, caching: Bool) throws(EngineError) -> Block {
        let blockID = TableBlockID(table: id, offset: handle.offset)
        if let cache, let block = cache.block(blockID) { return block }
        let stored = try source.read(at: handle.offset, count: Int(handle.length))
        let raw = try StoredBlock.decode(stored[...], path: path, offset: handle.offset)
        let block = try Block(raw: raw, path: path, offset: handle.offset)
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
        guard sequence <= LogFormat.maxSequence else { return nil }
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
