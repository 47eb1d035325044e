/// A least-recently-used cache of decoded values, bounded in bytes.
///
/// An entry is valid only for the commit that wrote it: a lookup names the sequence number the
/// index holds for the key, so an entry for an older version is never returned.
struct ValueCache {
    private struct Entry {
        var key: [UInt8]
        var value: [UInt8]
        var sequence: UInt64
        var previous: Int
        var next: Int
    }

    let capacity: Int
    private(set) var bytes = 0
    private(set) var hits = 0
    private(set) var misses = 0
    private var slots: [HashedKey: Int] = [:]
    private var entries: [Entry] = []
    private var free: [Int] = []
    /// Most recently used; -1 when empty.
    private var head = -1
    private var tail = -1

    init(capacity: Int) { self.capacity = capacity }

    var count: Int { slots.count }

    private static func cost(_ key: [UInt8], _ value: [UInt8]) -> Int { key.count + value.count + 96 }

    mutating func value(forKey key: [UInt8], sequence: UInt64) -> [UInt8]? {
        guard let slot = slots[HashedKey(key)], entries[slot].sequence == sequence else {
            misses += 1
            return nil
        }
        hits += 1
        moveToFront(slot)
        return entries[slot].value
    }

    mutating func insert(_ value: [UInt8], forKey key: [UInt8], sequence: UInt64) {
        let cost = Self.cost(key, value)
        guard cost <= capacity / 8 else { return }  // large values would flush everything else
        remove(key)
        while bytes + cost > capacity, tail >= 0 { remove(entries[tail].key) }
        let entry = Entry(key: key, value: value, sequence: sequence, previous: -1, next: head)
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
        slots[HashedKey(key)] = slot
        bytes += cost
    }

    mutating func remove(_ key: [UInt8]) {
        guard let slot = slots.removeValue(forKey: HashedKey(key)) else { return }
        unlink(slot)
        bytes -= Self.cost(entries[slot].key, entries[slot].value)
        entries[slot].key = []
        entries[slot].value = []
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
