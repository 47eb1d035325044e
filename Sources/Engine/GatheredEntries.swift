/// The current entries of a run of segments that a flush writes into one table: gathered in log
/// order, handed out in key order, each key once.
///
/// Keys and inline values are kept in flat byte buffers (one for all keys, one for all values),
/// not one array each, and ``sortByKey()`` orders a permutation of small fixed-size items (a key's
/// 8-byte sort prefix, ``KeyOrder``, and its entry's number) rather than the entries themselves:
/// the sort moves no reference-counted values, and compares contiguous integers, reading the key
/// bytes only when two prefixes are equal.
struct GatheredEntries {
    /// Every key's bytes, one after another, in the order gathered.
    private var keyBytes: [UInt8] = []
    /// Where each entry's key starts in `keyBytes`, plus the end of the last.
    private var keyStarts: [Int] = [0]
    /// Every inline value's bytes, one after another.
    private var valueBytes: [UInt8] = []
    /// Where each entry's value starts in `valueBytes`, plus the end of the last (a tombstone or
    /// a blob spans no bytes).
    private var valueStarts: [Int] = [0]
    /// The references of the entries whose value is a blob, by entry number.
    private var blobs: [Int: BlobReference] = [:]
    /// Each entry's location in the log: what the resident index named as its key's version.
    private(set) var locations: [Location] = []
    /// The entry numbers in key order, each key once: set by ``sortByKey()``.
    private(set) var order: [Int] = []

    /// Entries gathered (a key deleted twice in one commit counts twice until ``sortByKey()``).
    var count: Int { locations.count }

    /// Adds the tombstone of `key` (`location` is the index's tombstone).
    mutating func appendTombstone(key: [UInt8], location: Location) {
        appendEntry(key: key, location: location)
    }

    /// Adds `key`'s inline value `value`.
    mutating func append(key: [UInt8], location: Location, value: ArraySlice<UInt8>) {
        valueBytes += value
        appendEntry(key: key, location: location)
    }

    /// Adds `key`'s value stored in the blob `blob`.
    mutating func append(key: [UInt8], location: Location, blob: BlobReference) {
        blobs[count] = blob
        appendEntry(key: key, location: location)
    }

    private mutating func appendEntry(key: [UInt8], location: Location) {
        keyBytes += key
        keyStarts.append(keyBytes.count)
        valueStarts.append(valueBytes.count)
        locations.append(location)
    }

    /// Sets ``order``: the entry numbers sorted by key, and of entries with one key (only the
    /// tombstones of a key a commit deleted twice, alike but for their record) the first kept.
    mutating func sortByKey() {
        order = keyBytes.withUnsafeBytes { bytes in
            keyStarts.withUnsafeBufferPointer { starts in
                func key(_ entry: Int) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: bytes[starts[entry]..<starts[entry + 1]])
                }
                var items: [(prefix: UInt64, entry: Int)] = []
                items.reserveCapacity(count)
                for entry in 0..<count { items.append((KeyOrder.prefix(key(entry)), entry)) }
                func compareKeys(_ a: (prefix: UInt64, entry: Int), _ b: (prefix: UInt64, entry: Int)) -> Int {
                    if a.prefix != b.prefix { return a.prefix < b.prefix ? -1 : 1 }
                    guard KeyOrder.hasTail(a.prefix) else { return 0 }
                    return KeyOrder.compareTails(KeyOrder.tail(key(a.entry)), KeyOrder.tail(key(b.entry)))
                }
                // Among equal keys, gathered order: the result does not rest on the sort's
                // stability.
                items.sort { a, b in
                    let order = compareKeys(a, b)
                    return order != 0 ? order < 0 : a.entry < b.entry
                }
                var unique: [Int] = []
                unique.reserveCapacity(items.count)
                for (index, item) in items.enumerated() where index == 0 || compareKeys(items[index - 1], item) != 0 {
                    unique.append(item.entry)
                }
                return unique
            }
        }
    }

    /// Calls `body` with the key (its bytes) and location of each of `entries`, in their order.
    func withKeys<R>(
        of entries: ArraySlice<Int>, _ body: ([(key: UnsafeRawBufferPointer, location: Location)]) -> R
    ) -> R {
        keyBytes.withUnsafeBytes { bytes in
            body(entries.map { (UnsafeRawBufferPointer(rebasing: bytes[keyStarts[$0]..<keyStarts[$0 + 1]]), locations[$0]) })
        }
    }

    /// Entry `entry` as a table writes it.
    func entry(_ entry: Int) -> TableEntry {
        let location = locations[entry]
        let value: TableEntry.Value =
            if location.isTombstone {
                .tombstone
            } else if location.isBlob, let blob = blobs[entry] {
                .blob(blob)
            } else {
                .value(Array(valueBytes[valueStarts[entry]..<valueStarts[entry + 1]]))
            }
        return TableEntry(
            key: Array(keyBytes[keyStarts[entry]..<keyStarts[entry + 1]]), sequence: location.sequence, value: value)
    }

    /// Lets go of the values (once written), keeping the keys and locations.
    mutating func dropValues() {
        valueBytes = []
        valueStarts = []
        blobs = [:]
    }
}
