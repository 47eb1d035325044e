/// Where a table block lies: the table's id (the caller's choice, say its file number; tables
/// sharing a cache must have distinct ids) and the block's offset.
struct TableBlockID: Hashable, Sendable {
    var table: UInt64
    var offset: UInt64
}

/// A cache of inflated, verified table blocks, shared by any number of ``TableReader``s.
protocol TableBlockCache: Sendable {
    func block(_ id: TableBlockID) -> [UInt8]?
    func insert(_ raw: [UInt8], for id: TableBlockID)
}

/// A least-recently-used ``TableBlockCache`` bounded by a byte budget (``ByteCache``, as the
/// store's own block cache: a block over an eighth of the budget is not kept).
final class LRUTableBlockCache: TableBlockCache {
    private let cache: Locked<ByteCache<TableBlockID>>

    init(capacity: Int) { cache = Locked(ByteCache(capacity: capacity)) }

    func block(_ id: TableBlockID) -> [UInt8]? { cache.withLock { $0.value(forKey: id, tag: 0) } }

    func insert(_ raw: [UInt8], for id: TableBlockID) { cache.withLock { $0.insert(raw, forKey: id, tag: 0) } }

    /// Bytes held, and hits and misses so far.
    var figures: (bytes: Int, hits: Int, misses: Int) { cache.withLock { ($0.bytes, $0.hits, $0.misses) } }
}
