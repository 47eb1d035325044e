/// The engine's one cursor contract over key-ordered entries, implemented by a table's cursor
/// (``TableCursor``: the index, then a ``BlockCursor`` per data block) and by the
/// log tail's (``TailCursor``), and combined by ``MergingCursor``, which scans, flushes, merges
/// and the record layer's overlay all use.
///
/// A cursor is positioned by a seek (``seek(to:)`` for the first entry at or after a lower
/// bound, ``seekReverse(to:)`` for the last at or before an upper one), then moves with
/// ``next()`` and ``previous()``; moving past either end leaves it invalid. ``key`` is borrowed:
/// valid until the cursor moves. Every move throws when bytes it reads fail their checks, so
/// damage is never taken for the end of the entries.
protocol EntryCursor {
    var isValid: Bool { get }
    /// The current entry's key, valid until the cursor moves. The cursor must be valid.
    var key: UnsafeRawBufferPointer { get }
    mutating func seek(to lower: LogStore.KeyRange.Bound) throws(EngineError)
    mutating func seekReverse(to upper: LogStore.KeyRange.Bound) throws(EngineError)
    mutating func next() throws(EngineError)
    mutating func previous() throws(EngineError)
}

/// A cursor over one table's entries, tombstones included, in either direction: a search of the
/// top-level index then of one index partition (version 4: of the index), in place, finds the
/// data block; a ``BlockCursor`` walks it, and moving off its end takes the next (or previous)
/// block, the index partition's next entry or the next partition's first, checking that keys
/// ascend across the boundary. Index partitions and data blocks come from the block cache or are
/// read, verified and parsed; with `caching`, read ones are cached. Nothing loads a whole-table
/// structure.
///
/// Holds the reader (and so the table's file), the index partition and the block it is in and
/// its decoding memory; allocates nothing per entry.
struct TableCursor: EntryCursor, Sendable {
    let reader: TableReader
    let caching: Bool
    /// The partition, its index block and the data block's entry in it.
    private var partition = -1
    private var index: Block?
    private var blockEntry = -1
    private var block = BlockCursor(Block.empty)
    private var loaded: TableReader.Loaded?

    init(reader: TableReader, caching: Bool) {
        self.reader = reader
        self.caching = caching
    }

    var isValid: Bool { block.isValid }

    var key: UnsafeRawBufferPointer { block.key }

    /// The current entry's stored value (kind, sequence, then the value or reference), in place.
    var storedValue: UnsafeRawBufferPointer { block.value }

    /// The block the current entry is in.
    var currentBlock: Block { block.block }

    /// The current entry as a view that holds its block.
    func view() throws(EngineError) -> TableEntryView {
        try TableEntryView(block: block.block, value: block.valueRange)
    }

    /// The current entry, copied.
    func entry() throws(EngineError) -> TableEntry { try view().entry(key: Array(key)) }

    private mutating func metadata() throws(EngineError) -> TableReader.Loaded {
        if let loaded { return loaded }
        let fresh = try reader.metadataLoaded()
        loaded = fresh
        return fresh
    }

    /// Enters partition `number`'s index block (no data block yet).
    private mutating func enter(partition number: Int) throws(EngineError) {
        if number == partition, index != nil { return }
        index = try reader.indexBlock(of: number, in: try metadata(), caching: caching)
        partition = number
    }

    /// The data block of entry `number` of the current index block, which becomes current.
    private mutating func dataBlock(entry number: Int) throws(EngineError) -> Block {
        let data = try reader.dataBlock(in: index!, entry: number, partition: partition, of: try metadata(), caching: caching)
        blockEntry = number
        return data
    }

    /// Enters the data block of entry `number` of partition `partition` afresh (no boundary
    /// check), not yet positioned in it.
    private mutating func load(partition number: Int, entry: Int) throws(EngineError) {
        try enter(partition: number)
        let data = try dataBlock(entry: entry)
        block.reset(data)
    }

    /// The data block after the current one (the next partition's first after its partition's
    /// last), made current; nil after the table's last.
    private mutating func nextDataBlock() throws(EngineError) -> Block? {
        if blockEntry + 1 < index!.restartCount { return try dataBlock(entry: blockEntry + 1) }
        guard partition + 1 < (try metadata()).partitions.count else { return nil }
        try enter(partition: partition + 1)
        return try dataBlock(entry: 0)
    }

    /// The data block before the current one, made current; nil before the table's first.
    private mutating func previousDataBlock() throws(EngineError) -> Block? {
        if blockEntry > 0 { return try dataBlock(entry: blockEntry - 1) }
        guard partition > 0 else { return nil }
        try enter(partition: partition - 1)
        return try dataBlock(entry: index!.restartCount - 1)
    }

    mutating func seek(to lower: LogStore.KeyRange.Bound) throws(EngineError) {
        let loaded = try metadata()
        switch lower {
        case .unbounded:
            guard !loaded.partitions.isEmpty else { return invalidate() }
            try load(partition: 0, entry: 0)
            try block.first()
        case .inclusive(let target), .exclusive(let target):
            let inclusive = if case .inclusive = lower { true } else { false }
            let found = try withBytes(target) { target throws(EngineError) -> Bool in
                guard let number = try loaded.partition(atOrAbove: target) else { return false }
                try enter(partition: number)
                guard let first = try TableReader.firstEntry(in: index!, count: index!.restartCount, atOrAbove: target) else { return false }
                try load(partition: number, entry: first)
                try block.seek(atOrAbove: target, inclusive: inclusive)
                return true
            }
            guard found else { return invalidate() }
        }
        // Empty block, or the target above its last key: the next block's first entry.
        while !block.isValid {
            guard let data = try nextDataBlock() else { return invalidate() }
            block.reset(data)
            try block.first()
        }
    }

    mutating func seekReverse(to upper: LogStore.KeyRange.Bound) throws(EngineError) {
        let loaded = try metadata()
        guard !loaded.partitions.isEmpty else { return invalidate() }
        switch upper {
        case .unbounded:
            try enter(partition: loaded.partitions.count - 1)
            try load(partition: partition, entry: index!.restartCount - 1)
            try block.last()
        case .inclusive(let target), .exclusive(let target):
            let inclusive = if case .inclusive = upper { true } else { false }
            try withBytes(target) { target throws(EngineError) in
                try enter(partition: try loaded.partition(atOrAbove: target) ?? loaded.partitions.count - 1)
                let last = index!.restartCount - 1
                try load(partition: partition, entry: try TableReader.firstEntry(in: index!, count: last + 1, atOrAbove: target) ?? last)
                try block.seek(atOrBelow: target, inclusive: inclusive)
            }
        }
        while !block.isValid {
            guard let data = try previousDataBlock() else { return invalidate() }
            block.reset(data)
            try block.last()
        }
    }

    mutating func next() throws(EngineError) {
        guard try !block.next() else { return }
        while let data = try nextDataBlock() {
            try block.enter(next: data)
            if block.isValid { return }
        }
        invalidate()
    }

    mutating func previous() throws(EngineError) {
        guard try !block.previous() else { return }
        while let data = try previousDataBlock() {
            try block.enter(previous: data)
            if block.isValid { return }
        }
        invalidate()
    }

    private mutating func invalidate() { block.invalidate() }
}

extension TableReader {
    /// The entries whose keys lie in `range`, copied, ascending (descending when `reverse`), at
    /// most `limit` of them (tests and tools; reads walk a ``TableCursor``).
    func entries(in range: LogStore.KeyRange = .all, reverse: Bool = false, limit: Int = .max) throws(EngineError) -> [TableEntry] {
        var result: [TableEntry] = []
        guard limit > 0 else { return result }
        var cursor = cursor()
        if reverse { try cursor.seekReverse(to: range.upper) } else { try cursor.seek(to: range.lower) }
        while cursor.isValid, result.count < limit {
            let inRange = reverse ? range.isAboveLower(cursor.key) : range.isBelowUpper(cursor.key)
            guard inRange else { break }
            result.append(try cursor.entry())
            if reverse { try cursor.previous() } else { try cursor.next() }
        }
        return result
    }

    /// Every entry of data block `index`, copied, read without going into the cache.
    func entries(ofBlock index: Int) throws(EngineError) -> [TableEntry] {
        let block = try dataBlock(index, caching: false)
        return try block.entries().map { (key, value) throws(EngineError) in
            try TableEntryView(block: block, value: value).entry(key: key)
        }
    }

    /// The entry for `key` (a tombstone included), copied, or nil: the filter, then ``get(_:)``.
    func entry(forKey key: [UInt8]) throws(EngineError) -> TableEntry? {
        guard try mayContain(key) else { return nil }
        return try entryAfterFilter(forKey: key)
    }

    /// The entry for `key`, copied, when the caller has already consulted the filter.
    func entryAfterFilter(forKey key: [UInt8]) throws(EngineError) -> TableEntry? {
        try withBytes(key) { bytes throws(EngineError) in try get(bytes)?.entry(key: key) }
    }

    /// The entries for `keys` (ascending, without repeats), copied, when the caller has already
    /// consulted the filter for each: `nil` where the table holds none.
    func entriesAfterFilter(forSortedKeys keys: [[UInt8]]) throws(EngineError) -> [TableEntry?] {
        var result: [TableEntry?] = []
        for key in keys { result.append(try entryAfterFilter(forKey: key)) }
        return result
    }
}
