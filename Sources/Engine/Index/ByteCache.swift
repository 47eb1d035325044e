/// A least-recently-used cache of byte arrays, bounded in bytes. The store keeps two:
/// ``ValueCache`` (decoded values by key) and ``BlockCache`` (decoded blocks by place on disk).
///
/// Every entry carries a `tag` that a lookup must match: the value cache tags a value with the
/// sequence number of the commit that wrote it, so an entry for an older version of a key is
/// never returned. Blocks never change, so the block cache tags them all 0.
struct ByteCache<Key: Hashable & Sendable>: Sendable {
    private struct Entry: Sendable {
        var key: Key?
        var bytes: [UInt8]
        var tag: UInt64
        var cost: Int
        var previous: Int
        var next: Int
    }

    let capacity: Int
    private(set) var bytes = 0
    private(set) var hits = 0
    private(set) var misses = 0
    private var slots: [Key: Int] = [:]
    private var entries: [Entry] = []
    private var free: [Int] = []
    /// Most recently used; -1 when empty.
    private var head = -1
    private var tail = -1

    init(capacity: Int) { self.capacity = capacity }

    var count: Int { slots.count }

    /// The bytes cached for `key` with `tag`, counting a hit or a miss.
    mutating func value(forKey key: Key, tag: UInt64) -> [UInt8]? {
        guard let slot = slots[key], entries[slot].tag == tag else {
            misses += 1
            return nil
        }
        hits += 1
        moveToFront(slot)
        return entries[slot].bytes
    }

    /// Caches `value` for `key` (evicting the least recently used entries to make room), unless
    /// it alone would take more than an eighth of the capacity. `keyCost` is the key's own size.
    mutating func insert(_ value: [UInt8], forKey key: Key, tag: UInt64, keyCost: Int = 16) {
        let cost = keyCost + value.count + 96
        guard cost <= capacity / 8 else { return }  // large values would flush everything else
        remove(key)
        while bytes + cost > capacity, tail >= 0, let oldest = entries[tail].key { remove(oldest) }
        let entry = Entry(key: key, bytes: value, tag: tag, cost: cost, previous: -1, next: head)
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            entries[slot] = entry
        } else {
            slot = entries.count
            entries.append(entry)
        }
        if head >= 0 { entries[head].previous = slot }
        head = slot
        if tail < 0 { tail = slot }
        slots[key] = slot
        bytes += cost
    }

    mutating func remove(_ key: Key) {
        guard let slot = slots.removeValue(forKey: key) else { return }
        unlink(slot)
        bytes -= entries[slot].cost
        entries[slot].key = nil
        entries[slot].bytes = []
        free.append(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let (previous, next) = (entries[slot].previous, entries[slot].next)
        if previous >= 0 { entries[previous].next = next } else { head = next }
        if next >= 0 { entries[next].previous = previous } else { tail = previous }
    }

    private mutating func moveToFront(_ slot: Int) {
        guard head != slot else { return }
        unlink(slot)
        entries[slot].previous = -1
        entries[slot].next = head
        if head >= 0 { entries[head].previous = slot }
        head = slot
        if tail < 0 { tail = slot }
    }
}

/// Decoded values by key, tagged with the sequence number of the commit that wrote them.
typealias ValueCache = ByteCache<HashedKey>

/// Where a block lies: its segment and the offset of its header.
struct BlockID: Hashable, Sendable {
    var segment: UInt64
    var offset: UInt64
}

/// Decoded (verified, inflated) blocks by place on disk. A block is immutable once written, so
/// an entry never goes stale while its segment exists.
typealias BlockCache = ByteCache<BlockID>
