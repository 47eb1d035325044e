/// Keys packed back to back in one allocation, written once in `init` and only read afterwards
/// (so copies of the cursors holding them share them): a key is a view into it.
///
/// `@unchecked Sendable`: the memory is written only in `init` and freed in `deinit`.
final class PackedKeys: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    /// Where each key starts, then where the last ends: key `i` is `bounds[i]..<bounds[i + 1]`.
    private let bounds: [Int]

    /// Room for the keys `bounds` places (the first at 0, one more bound than keys), which the
    /// caller writes at ``base``.
    init(bounds: [Int], write: (UnsafeMutableRawPointer) -> Void) {
        base = .allocate(byteCount: Swift.max(bounds.last ?? 0, 1), alignment: 8)
        self.bounds = bounds
        write(base)
    }

    convenience init(_ keys: some Collection<[UInt8]>) {
        var bounds = [0]
        bounds.reserveCapacity(keys.count + 1)
        for key in keys { bounds.append(bounds[bounds.count - 1] + key.count) }
        self.init(bounds: bounds) { base in
            for (key, start) in zip(keys, bounds) {
                key.withUnsafeBytes { if let from = $0.baseAddress { (base + start).copyMemory(from: from, byteCount: $0.count) } }
            }
        }
    }

    deinit { base.deallocate() }

    /// Key `i`, in place.
    @inline(__always)
    subscript(i: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + bounds[i], count: bounds[i + 1] - bounds[i])
    }
}

/// Writes not yet committed, laid over a scan (``LogStore/scan(_:limit:reverse:overlay:)``): each
/// key with its value or its deletion, in the scan's order. They take precedence over every
/// version in the store.
struct OverlayCursor: Sendable {
    private let keys: PackedKeys
    /// The values, packed as the keys are, so a scan can lend them in place.
    private let values: PackedKeys
    let entries: [LogStore.Scan.OverlayEntry]
    private(set) var position = 0

    init(_ entries: [LogStore.Scan.OverlayEntry]) {
        self.entries = entries
        keys = PackedKeys(entries.lazy.map(\.key))
        values = PackedKeys(entries.lazy.map { $0.value ?? [] })
    }

    /// The current value's bytes (empty for a deletion), valid while the cursor is held.
    var value: UnsafeRawBufferPointer {
        values[position]
    }

    var isValid: Bool { position < entries.count }
    var entry: LogStore.Scan.OverlayEntry { entries[position] }

    /// The current key, valid while the cursor is held.
    var key: UnsafeRawBufferPointer {
        keys[position]
    }

    mutating func next() { position += 1 }

    /// Moves to the first entry, in the scan's order, that `bound` admits: at or above a lower
    /// bound (ascending), at or below an upper one (`reverse`). A binary search: the entries are
    /// sorted in that order.
    mutating func seek(to bound: LogStore.KeyRange.Bound, reverse: Bool) {
        let range = reverse ? LogStore.KeyRange(lower: .unbounded, upper: bound) : LogStore.KeyRange(lower: bound, upper: .unbounded)
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if reverse ? range.isBelowUpper(keys[middle]) : range.isAboveLower(keys[middle]) { high = middle } else { low = middle + 1 }
        }
        position = low
    }
}

/// Merges sorted sources into one order, newest version first: optional uncommitted writes laid
/// over the store (source -1), the log's tail (source 0, a ``TailCursor``) and table cursors
/// newest first (source `i + 1` is `tables[i]`). Of entries with one key, the lowest source wins;
/// ``advance()`` moves every source past the current key.
///
/// The tail and the tables are ``EntryCursor``s, positioned by ``seek(_:)`` and moved through
/// that contract alike (``EntryCursor/next()``, or ``EntryCursor/previous()`` when `reverse`);
/// the tail refills its own batches as it moves. With a tail, the table cursors follow it: they
/// are made from the tables its reads show beside each batch (``TailCursor/tables``), because a
/// flush moves keys from the tail into a new table under the index lock. When a read shows
/// another set (``TailCursor/tableGeneration``), the merge replaces its table cursors with
/// cursors on the new set, positioned past the key the tail resumed from
/// (``TailCursor/resumeKey``, the key the merge was moving past), so no key is lost between the
/// old set and the new one, nor met twice.
///
/// One valid source is read directly, with no comparison; several are merged k-way by a binary
/// heap of source numbers ordered by their current keys (compared in place), never by sorting a
/// batch. The heap and the list of sources to move are reused, so a step allocates nothing.
/// Reads ahead no more than each source's current block (or tail batch).
///
/// It walks in one direction, chosen when it is made: ascending, or descending when `reverse`.
/// Tombstones are entries like any other: a scan skips them, a merge may keep them.
///
/// `@unchecked Sendable`: besides its (Sendable) sources it holds only two views of the current
/// entry, into memory its sources own — immutable blocks and key buffers, and cursor storage that
/// a cursor writes only while it holds the sole reference (copies write their own). So a copy
/// sent elsewhere never reads memory another copy writes.
struct MergingCursor: @unchecked Sendable {
    var overlay: OverlayCursor?
    /// The tail; a reader may lower its ``TailCursor/wanted`` as it goes.
    var tail: TailCursor?
    private(set) var tables: [TableCursor]
    let reverse: Bool
    /// The tail's ``TailCursor/tableGeneration`` that ``tables`` were made for.
    private var tableGeneration = 0
    private var heap: [Int] = []
    private var moving: [Int] = []
    /// The current entry's key and, from a table, its stored value: read from the source once
    /// per move, so that a caller's accesses are plain loads.
    private(set) var key = UnsafeRawBufferPointer(start: nil, count: 0)
    private(set) var storedValue = UnsafeRawBufferPointer(start: nil, count: 0)

    /// A merge of `overlay`, `tail` and `tables`, not yet positioned: ``seek(_:)`` it. With a
    /// tail, `tables` must be empty: the table cursors follow the tail's reads.
    init(overlay: OverlayCursor? = nil, tail: TailCursor?, tables: [TableCursor], reverse: Bool) {
        precondition(tail == nil || tables.isEmpty, "with a tail, the tables follow its reads")
        self.overlay = overlay
        self.tail = tail
        self.tables = tables
        self.reverse = reverse
        heap.reserveCapacity(tables.count + 2)
        moving.reserveCapacity(tables.count + 2)
    }

    /// Positions the overlay, the tail and every table at `range`'s start in the cursor's
    /// direction, wherever they were, and orders the sources.
    mutating func seek(_ range: LogStore.KeyRange) throws(EngineError) {
        overlay?.seek(to: reverse ? range.upper : range.lower, reverse: reverse)
        if tail != nil {
            if reverse { try tail!.seekReverse(to: range.upper) } else { try tail!.seek(to: range.lower) }
            if tail!.tableGeneration != tableGeneration { adoptTailTables() }
        }
        try seekTables(to: reverse ? range.upper : range.lower)
        rebuild()
    }

    private mutating func seekTables(to bound: LogStore.KeyRange.Bound) throws(EngineError) {
        for index in tables.indices {
            if reverse { try tables[index].seekReverse(to: bound) } else { try tables[index].seek(to: bound) }
        }
    }

    /// Makes the table cursors afresh from the tables the tail's last read showed (not yet
    /// positioned).
    private mutating func adoptTailTables() {
        tables = tail!.tables.map { $0.reader.cursor() }
        tableGeneration = tail!.tableGeneration
        heap.reserveCapacity(tables.count + 2)
        moving.reserveCapacity(tables.count + 2)
    }

    /// After the tail read a batch beside another set of tables: cursors on the new set, past the
    /// key the tail resumed from (where the merge is), and the sources ordered afresh.
    private mutating func followTailTables() throws(EngineError) {
        adoptTailTables()
        if let resume = tail!.resumeKey { try seekTables(to: .exclusive(resume)) }
        rebuild()
    }

    /// Orders the valid sources afresh (after sources were positioned or replaced).
    private mutating func rebuild() {
        heap.removeAll(keepingCapacity: true)
        if overlay?.isValid == true { push(-1) }
        if tail?.isValid == true { push(0) }
        for index in tables.indices where tables[index].isValid { push(index + 1) }
        refresh()
    }

    /// Reads the current entry's key and stored value from its source.
    @inline(__always)
    private mutating func refresh() {
        // (Indexed, not `first`: no allocation per entry in debug builds either.)
        guard !heap.isEmpty else { return }
        let top = heap[0]
        if top > 0 {
            (key, storedValue) = tables.withUnsafeBufferPointer { ($0[top - 1].key, $0[top - 1].storedValue) }
        } else {
            key = key(top)
            storedValue = UnsafeRawBufferPointer(start: nil, count: 0)
        }
    }

    var isValid: Bool { !heap.isEmpty }

    /// The source of the current entry: -1 for the overlay, 0 for the tail, `i + 1` for
    /// `tables[i]`.
    var source: Int { heap[0] }

    // The current key (``key``) and a table entry's stored value (``storedValue``) are valid
    // until the cursor moves.

    @inline(__always)
    private func key(_ source: Int) -> UnsafeRawBufferPointer {
        // (Through the buffer: an element read in place, never copied out of the array.)
        source > 0 ? tables.withUnsafeBufferPointer { $0[source - 1].key } : source == 0 ? tail!.key : overlay!.key
    }

    /// Moves past the current key: every source at that key takes its next entry (the tail
    /// reading its next batch when it runs out of one, and the tables following it when that
    /// read shows another set of tables).
    mutating func advance() throws(EngineError) {
        if heap.count == 1 {
            let only = heap[0]
            try move(only)
            if only == 0, tail!.tableGeneration != tableGeneration { return try followTailTables() }
            if isSourceValid(only) { refresh() } else { heap.removeAll(keepingCapacity: true) }
            return
        }
        moving.removeAll(keepingCapacity: true)
        moving.append(pop())
        let current = key
        while !heap.isEmpty, compareBytes(key(heap[0]), current) == 0 { moving.append(pop()) }
        // Every source at the key moves (the overlay too), except table cursors the tail's read
        // has just replaced.
        var follow = false
        var index = 0
        while index < moving.count {
            let source = moving[index]
            index += 1
            if follow, source > 0 { continue }
            try move(source)
            if source == 0, tail!.tableGeneration != tableGeneration {
                follow = true
            } else if isSourceValid(source) {
                push(source)
            }
        }
        if follow { return try followTailTables() }
        refresh()
    }

    /// Moves one source on, in the cursor's direction.
    private mutating func move(_ source: Int) throws(EngineError) {
        if source == -1 {
            overlay!.next()
        } else if source == 0 {
            if reverse { try tail!.previous() } else { try tail!.next() }
        } else if reverse {
            try tables[source - 1].previous()
        } else {
            try tables[source - 1].next()
        }
    }

    private func isSourceValid(_ source: Int) -> Bool {
        source > 0 ? tables.withUnsafeBufferPointer { $0[source - 1].isValid } : source == 0 ? tail!.isValid : overlay!.isValid
    }

    /// True when `a`'s entry comes before `b`'s: its key is nearer in the cursor's direction, or
    /// equal and `a` is newer.
    @inline(__always)
    private func precedes(_ a: Int, _ b: Int) -> Bool {
        let order = compareBytes(key(a), key(b))
        if order != 0 { return reverse ? order > 0 : order < 0 }
        return a < b
    }

    private mutating func push(_ source: Int) {
        heap.append(source)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func pop() -> Int {
        let top = heap[0]
        let last = heap.removeLast()
        guard !heap.isEmpty else { return top }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { break }
            var best = left
            if left + 1 < heap.count, precedes(heap[left + 1], heap[left]) { best = left + 1 }
            guard precedes(heap[best], heap[parent]) else { break }
            heap.swapAt(best, parent)
            parent = best
        }
        return top
    }
}
