/// Where the latest version of a key lives on disk.
struct Location: Sendable, Equatable {
    var segment: UInt64
    /// File offset of the block header that holds the value.
    var blockOffset: UInt64
    /// Block header plus stored bytes: one `pread` of this many bytes reads the block.
    var blockLength: UInt32
    /// Offset of the value in the block's raw bytes.
    var valueOffset: UInt32
    var valueLength: UInt32
    /// The record's encoded size, counted in live or dead bytes.
    var recordSize: UInt32
    /// The commit that wrote it.
    var sequence: UInt64
}

/// Live and dead bytes of one segment: the raw encoded sizes of the records it holds that are the
/// latest version of their key (live) or have been overwritten, deleted, or are tombstones (dead).
struct SegmentUsage: Sendable, Equatable {
    var liveBytes = 0
    var deadBytes = 0
}

/// Bitcask's keydir: every live key → ``Location``, plus the key order for prefix scans and the
/// live/dead byte counts per segment. Values stay on disk.
struct KeyDirectory {
    private(set) var locations: [HashedKey: Location] = [:]
    /// nil while the store is loading; built once, sorted, by ``finishLoading()``.
    private var ordered: SortedKeys?
    private(set) var usage: [UInt64: SegmentUsage] = [:]
    /// The total length of the live keys.
    private(set) var keyBytes = 0

    var count: Int { locations.count }

    subscript(key: [UInt8]) -> Location? { locations[HashedKey(key)] }

    mutating func put(_ key: [UInt8], at location: Location) {
        if let old = locations.updateValue(location, forKey: HashedKey(key)) {
            retire(old)
        } else {
            ordered?.insert(key)
            keyBytes += key.count
        }
        usage[location.segment, default: SegmentUsage()].liveBytes += Int(location.recordSize)
    }

    /// Records a delete whose tombstone (of `recordSize` bytes) is in `segment`.
    mutating func delete(_ key: [UInt8], tombstoneIn segment: UInt64, recordSize: Int) {
        if let old = locations.removeValue(forKey: HashedKey(key)) {
            retire(old)
            ordered?.remove(key)
            keyBytes -= key.count
        }
        usage[segment, default: SegmentUsage()].deadBytes += recordSize
    }

    private mutating func retire(_ old: Location) {
        usage[old.segment, default: SegmentUsage()].liveBytes -= Int(old.recordSize)
        usage[old.segment, default: SegmentUsage()].deadBytes += Int(old.recordSize)
    }

    mutating func noteSegment(_ segment: UInt64) {
        if usage[segment] == nil { usage[segment] = SegmentUsage() }
    }

    /// Sorts the keys once after bulk loading; from then on every put and delete keeps the order.
    mutating func finishLoading() {
        ordered = SortedKeys(unsorted: locations.keys.map(\.bytes))
    }

    /// The keys under `prefix`, in byte order, with their locations.
    func entries(withPrefix prefix: [UInt8]) -> [(key: [UInt8], location: Location)] {
        guard let ordered else { return [] }
        return ordered.keys(withPrefix: prefix).map { ($0, locations[HashedKey($0)]!) }
    }

    /// An estimate of the heap bytes per key held by the index for keys of `averageKeyLength`:
    /// the dictionary slot (key reference and location, at the hash table's typical load of about
    /// 0.56 between its growth steps), the key's heap buffer (a 32-byte array header and the bytes
    /// in 16-byte malloc granules, plus malloc's 16-byte overhead) and its reference in the
    /// ordered chunks (at their typical fill of 3/4). `walstore-example` measures the real figure
    /// with `mallinfo2`.
    static func estimatedBytesPerKey(averageKeyLength: Int) -> Int {
        let slot = (MemoryLayout<[UInt8]>.stride + MemoryLayout<Location>.stride) * 16 / 9
        let keyBuffer = 32 + (averageKeyLength + 15) / 16 * 16 + 16
        let orderedReference = MemoryLayout<[UInt8]>.stride * 4 / 3
        return slot + keyBuffer + orderedReference
    }
}
