/// Where a table block lies: the table's id (the caller's choice, say its file number; tables
/// sharing a cache must have distinct ids) and the block's offset.
struct TableBlockID: Hashable, Sendable {
    var table: UInt64
    var offset: UInt64
}

/// A cache of parsed table blocks (``Block``: inflated, verified, restart array checked; data
/// blocks and a version-5 table's index partitions) and of filter partitions (``BloomFilter``),
/// shared by any number of ``TableReader``s, bounded by one byte budget. A hit costs one lock, one hash
/// lookup and a reference: no copy and no parse.
///
/// The policy is a **segmented LRU**, so that a scan larger than the cache does not evict the
/// working set of point reads:
/// - a block read from disk enters the *probationary* segment, at its most recent end;
/// - a block found again while probationary moves to the *protected* segment, which holds at
///   most ``protectedShare`` of the budget (its least recently used block goes back to the
///   probationary segment's most recent end when it overflows);
/// - room is made by evicting the probationary segment's least recently used block first, and
///   a protected block only when no probationary one is left.
///
/// A scan uses each block once (a cursor holds the block while it walks it), so however long
/// it is, it only cycles the probationary segment; blocks that point reads use twice stay
/// protected. Merges and flushes read blocks without inserting them at all. A block larger than
/// an eighth of the budget is not kept.
///
/// `@unchecked Sendable`: every field but the constant `capacity` is read and written only
/// under `lock` (``Locked``).
final class TableBlockCache: @unchecked Sendable {
    /// The share of the budget the protected segment may hold.
    static let protectedShare = 0.8

    private struct Slot {
        var id: TableBlockID?
        var item: Item?
        var cost: Int
        var protected: Bool
        var previous: Int
        var next: Int
    }

    /// What a slot holds.
    private enum Item {
        case block(Block)
        case filter(BloomFilter)
    }

    /// One segment's list, most recent first.
    private struct List {
        var head = -1
        var tail = -1
        var bytes = 0
    }

    private struct State {
        var slots: [Slot] = []
        var free: [Int] = []
        var index: [TableBlockID: Int] = [:]
        var probation = List()
        var protected = List()
        var hits = 0
        var misses = 0
    }

    let capacity: Int
    private let lock: Locked<State>

    init(capacity: Int) {
        self.capacity = capacity
        lock = Locked(State())
    }

    /// The cached block `id`, counting a hit or a miss; a probationary block found is promoted.
    func block(_ id: TableBlockID) -> Block? {
        if case .block(let block) = item(id) { return block }
        return nil
    }

    /// The cached filter partition `id`, counted and promoted as ``block(_:)``.
    func filter(_ id: TableBlockID) -> BloomFilter? {
        if case .filter(let filter) = item(id) { return filter }
        return nil
    }

    private func item(_ id: TableBlockID) -> Item? {
        let protectedLimit = Int(Double(capacity) * Self.protectedShare)
        return lock.withLock { s in
            guard let slot = s.index[id] else {
                s.misses += 1
                return nil
            }
            s.hits += 1
            if s.slots[slot].protected {
                Self.unlink(slot, from: &s.protected, in: &s.slots)
                Self.pushFront(slot, to: &s.protected, in: &s.slots)
            } else {
                Self.unlink(slot, from: &s.probation, in: &s.slots)
                s.slots[slot].protected = true
                Self.pushFront(slot, to: &s.protected, in: &s.slots)
                while s.protected.bytes > protectedLimit, s.protected.tail >= 0, s.protected.tail != slot {
                    let demoted = s.protected.tail
                    Self.unlink(demoted, from: &s.protected, in: &s.slots)
                    s.slots[demoted].protected = false
                    Self.pushFront(demoted, to: &s.probation, in: &s.slots)
                }
            }
            return s.slots[slot].item
        }
    }

    /// Caches `block` under `id` as probationary, evicting to make room (probationary blocks
    /// first), unless it alone would take more than an eighth of the budget.
    func insert(_ block: Block, for id: TableBlockID) {
        insert(.block(block), cost: block.byteCount + 128, for: id)
    }

    /// Caches the filter partition `filter` under `id`, as ``insert(_:for:)-(Block,_)`` a block.
    func insert(_ filter: BloomFilter, for id: TableBlockID) {
        insert(.filter(filter), cost: filter.byteCount + 128, for: id)
    }

    private func insert(_ item: Item, cost: Int, for id: TableBlockID) {
        guard cost <= capacity / 8 else { return }
        lock.withLock { s in
            guard s.index[id] == nil else { return }
            while s.probation.bytes + s.protected.bytes + cost > capacity {
                let victim = s.probation.tail >= 0 ? s.probation.tail : s.protected.tail
                guard victim >= 0 else { break }
                if s.slots[victim].protected {
                    Self.unlink(victim, from: &s.protected, in: &s.slots)
                } else {
                    Self.unlink(victim, from: &s.probation, in: &s.slots)
                }
                if let old = s.slots[victim].id { s.index[old] = nil }
                s.slots[victim] = Slot(id: nil, item: nil, cost: 0, protected: false, previous: -1, next: -1)
                s.free.append(victim)
            }
            let fresh = Slot(id: id, item: item, cost: cost, protected: false, previous: -1, next: -1)
            let slot: Int
            if let reused = s.free.popLast() {
                slot = reused
                s.slots[slot] = fresh
            } else {
                slot = s.slots.count
                s.slots.append(fresh)
            }
            s.index[id] = slot
            Self.pushFront(slot, to: &s.probation, in: &s.slots)
        }
    }

    /// Bytes held (both segments, with each block's bookkeeping), and hits and misses so far.
    var figures: (bytes: Int, hits: Int, misses: Int) {
        lock.withLock { ($0.probation.bytes + $0.protected.bytes, $0.hits, $0.misses) }
    }

    /// Bytes held by the protected segment (for tests of the policy).
    var protectedBytes: Int { lock.withLock { $0.protected.bytes } }

    /// True when block `id` is cached (without counting or promoting it).
    func holds(_ id: TableBlockID) -> Bool { lock.withLock { $0.index[id] != nil } }

    private static func unlink(_ slot: Int, from list: inout List, in slots: inout [Slot]) {
        let (previous, next) = (slots[slot].previous, slots[slot].next)
        if previous >= 0 { slots[previous].next = next } else { list.head = next }
        if next >= 0 { slots[next].previous = previous } else { list.tail = previous }
        slots[slot].previous = -1
        slots[slot].next = -1
        list.bytes -= slots[slot].cost
    }

    private static func pushFront(_ slot: Int, to list: inout List, in slots: inout [Slot]) {
        slots[slot].previous = -1
        slots[slot].next = list.head
        if list.head >= 0 { slots[list.head].previous = slot }
        list.head = slot
        if list.tail < 0 { list.tail = slot }
        list.bytes += slots[slot].cost
    }
}
