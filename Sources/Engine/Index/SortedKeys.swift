/// A set of keys in byte order: a ``KeyTable`` without values, for scans whose cost follows the
/// number of keys in the range (plus a logarithm of the set), not the size of the set.
struct SortedKeys {
    private struct Nothing {}
    private var table = KeyTable<Nothing>()

    init() {}

    /// Builds the set from distinct keys already in ascending order.
    init(sorted: [[UInt8]]) {
        var builder = KeyTable<Nothing>.Builder()
        var previous: [UInt8]? = nil
        for key in sorted {
            if let previous, compareBytes(previous, key) >= 0 {
                // Not strictly ascending after all: insert the rest one by one.
                var table = builder.finish()
                for key in sorted[sorted.firstIndex(of: key)!...] { table.updateValue(Nothing(), forKey: key) }
                self.table = table
                return
            }
            previous = key
            key.withUnsafeBytes { bytes in builder.append(KeyOrder.prefix(bytes), KeyOrder.tail(bytes), Nothing()) }
        }
        table = builder.finish()
    }

    var count: Int { table.count }

    mutating func insert(_ key: [UInt8]) { table.updateValue(Nothing(), forKey: key) }

    mutating func remove(_ key: [UInt8]) { table.removeValue(forKey: key) }

    func contains(_ key: [UInt8]) -> Bool { table[key] != nil }

    /// Up to `limit` keys in `range`, ascending (descending when `reverse`), starting strictly
    /// after `cursor` in that direction when it is given.
    func keys(in range: LogStore.KeyRange, after cursor: [UInt8]?, reverse: Bool, limit: Int) -> [[UInt8]] {
        table.positions(in: range, after: cursor, reverse: reverse, limit: limit).map(table.key(at:))
    }
}
