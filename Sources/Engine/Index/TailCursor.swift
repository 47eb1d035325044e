/// The log tail's entries in a key range, as an ``EntryCursor``: what the tail's index
/// (``KeyDirectory``) holds, read a batch at a time under the store's index lock, because commits
/// change the index meanwhile.
///
/// A batch is up to ``batchSize`` keys (and no more than ``wanted``), copied back to back into
/// one buffer (``PackedKeys``), each with its location in the log and its blob reference: its
/// value is not read until asked (``item``, ``file``; a scan lends it with
/// ``LogStore/lendValue(at:from:_:)``). A seek reads the first batch at or past its bound in its
/// direction. Moving within the batch takes no lock; moving past its end (``next()`` past the
/// last key) reads the batch after the last key, and past its start (``previous()`` before the
/// first key) the batch before the first key — unless the read that made the batch found no
/// more keys on that side, which ends the cursor there without reading again. Either direction
/// may follow either, so a change of direction mid-batch costs nothing and one at a batch's edge
/// one read.
///
/// Each read also records what the same hold of the lock showed beside the batch: the tail
/// segments its entries point into (held, so a flush that removes their files leaves the values
/// readable; after ``LogStore/close()`` none, and reading a value throws
/// ``EngineError/Code/closed``) and the tables overlapping ``range``, newest first (held too).
/// A flush moves keys from the tail into a new table under that lock, so a reader merging the
/// tail with tables must take its tables from the same read as the batch: ``tableGeneration``
/// changes when a read shows another set, and ``resumeKey`` says where that read resumed
/// (``MergingCursor`` follows both).
///
/// What a walk sees while commits run: each batch is one state of the index. Keys come in
/// order, each at most once, as long as the walk keeps one direction: a batch resumes strictly
/// past the key the last one ended on, so a key committed behind the cursor is never met again,
/// and one committed ahead of it is met if the read of its batch comes after the commit (a walk
/// whose last batch found no more keys on its side does not read again, so it ends without
/// keys committed past that end). After a change of direction the walk reads the keys it
/// passed again, as they are now.
///
/// Nothing is allocated per entry: a read allocates the batch's buffer, its list of items, the
/// list of files and of tables, and the key it resumed from.
struct TailCursor: EntryCursor, Sendable {
    /// An entry of a batch; its key is the batch's key of the same index.
    struct Item: Sendable {
        var location: Location
        var blob: BlobReference?
    }

    /// Keys read from the index in one hold of its lock, ascending, each with its item.
    struct Batch: Sendable {
        let keys: PackedKeys
        let items: [Item]

        static var empty: Batch { Batch(keys: PackedKeys(bounds: [0]) { _ in }, items: []) }
    }

    /// The store whose tail the cursor reads.
    let store: LogStore
    /// The keys the cursor walks: a seek's bound narrows it, never widens it.
    let range: LogStore.KeyRange
    /// The most keys one read takes from the index (at least 1).
    let batchSize: Int
    /// The most keys the cursor's reader may still use, lowered as it goes (a scan's limit less
    /// what it returned): a read takes `min(batchSize, wanted)` keys, so a scan of 50 keys
    /// copies no more than 50.
    var wanted = Int.max

    private var batch = Batch.empty
    /// The current key's index in the batch, while ``isValid``.
    private var position = 0
    private var valid = false
    /// True when the read that made the batch found no key in ``range`` above its last key
    /// (below its first): moving past that end ends the cursor without reading again.
    private var noneAbove = false
    private var noneBelow = false
    /// The tail segments the batch's entries point into, by number.
    private var files: [UInt64: any StoreFile] = [:]
    /// The tables overlapping ``range`` the last read showed, newest first.
    private(set) var tables: [StoreTable] = []
    /// Changes each time a read shows another set of ``tables`` than the read before it (0
    /// before the first read, whose tables count as a change unless there are none).
    private(set) var tableGeneration = 0
    /// The key the last read resumed past: the last key of the batch before it (the first,
    /// reading backward); nil after a seek.
    private(set) var resumeKey: [UInt8]?

    /// A cursor over the tail's keys in `range`, not yet positioned: seek it first.
    init(store: LogStore, range: LogStore.KeyRange = .all, batchSize: Int = LogStore.Scan.batchSize) {
        self.store = store
        self.range = range
        self.batchSize = Swift.max(batchSize, 1)
    }

    var isValid: Bool { valid }

    /// The keys of the current batch (tests: a read takes no more than it should).
    var bufferedCount: Int { batch.items.count }

    /// The current key, valid until the cursor moves.
    var key: UnsafeRawBufferPointer { batch.keys[position] }

    /// The current entry's location in the log (a tombstone's for a deletion) and blob reference.
    var item: Item { batch.items[position] }

    /// The tail segment the current entry's value is in (nil for a tombstone or a blob, and
    /// after ``LogStore/close()``).
    var file: (any StoreFile)? { files[batch.items[position].location.segment] }

    /// Reads the first batch at or past `lower` (past it, when exclusive).
    ///
    /// - Throws: ``EngineError/Code/closed`` after ``LogStore/close()`` (the moves after a seek
    ///   go on reading the index, which still lists what it held).
    mutating func seek(to lower: LogStore.KeyRange.Bound) throws(EngineError) {
        var bounds = range
        bounds.lower = Self.tighter(range.lower, lower, lower: true)
        try read(bounds, reverse: false, refusingClosed: true)
        resumeKey = nil
        enter(at: 0)
    }

    /// Reads the last batch at or before `upper` (before it, when exclusive).
    ///
    /// - Throws: as ``seek(to:)``.
    mutating func seekReverse(to upper: LogStore.KeyRange.Bound) throws(EngineError) {
        var bounds = range
        bounds.upper = Self.tighter(range.upper, upper, lower: false)
        try read(bounds, reverse: true, refusingClosed: true)
        resumeKey = nil
        enter(at: batch.items.count - 1)
    }

    mutating func next() throws(EngineError) {
        guard valid else { return }
        if position + 1 < batch.items.count {
            position += 1
            return
        }
        guard !noneAbove else {
            valid = false
            return
        }
        let after = Array(batch.keys[position])
        var bounds = range
        bounds.lower = .exclusive(after)
        try read(bounds, reverse: false, refusingClosed: false)
        resumeKey = after
        enter(at: 0)
    }

    mutating func previous() throws(EngineError) {
        guard valid else { return }
        if position > 0 {
            position -= 1
            return
        }
        guard !noneBelow else {
            valid = false
            return
        }
        let before = Array(batch.keys[position])
        var bounds = range
        bounds.upper = .exclusive(before)
        try read(bounds, reverse: true, refusingClosed: false)
        resumeKey = before
        enter(at: batch.items.count - 1)
    }

    private mutating func enter(at index: Int) {
        position = Swift.max(index, 0)
        valid = index >= 0 && index < batch.items.count
    }

    /// Reads the batch of keys in `bounds` nearest its low end (its high end when `reverse`),
    /// with their files and the tables, in one hold of the index lock.
    private mutating func read(_ bounds: LogStore.KeyRange, reverse: Bool, refusingClosed: Bool) throws(EngineError) {
        let limit = Swift.max(0, Swift.min(batchSize, wanted))
        let range = range
        let (batch, files, tables, unchecked) = try store.state.withLock {
            s throws(EngineError) -> (Batch, [UInt64: any StoreFile], [StoreTable], [StoreTable]) in
            guard !refusingClosed || !s.closed else { throw LogStore.closedError }
            let batch = s.index.tailBatch(in: bounds, reverse: reverse, limit: limit)
            var files: [UInt64: any StoreFile] = [:]
            // (Indexed, not iterated: a read allocates per batch, in debug builds too.)
            var index = 0
            while index < batch.items.count {
                let item = batch.items[index]
                index += 1
                if item.blob == nil, !item.location.isTombstone, files[item.location.segment] == nil {
                    files[item.location.segment] = s.files[item.location.segment]
                }
            }
            return (batch, files, s.tables.filter { $0.overlaps(range) }, s.tables.filter { !$0.isChecked && !$0.overlaps(range) })
        }
        // A table the range misses by the manifest's record is checked once all the same (its
        // key range against its first and last keys), outside the lock: a range recorded too
        // narrow must not hide keys from scans either.
        for table in unchecked { try table.checkOnce() }
        self.batch = batch
        self.files = files
        if !Self.same(tables, self.tables) {
            self.tables = tables
            tableGeneration += 1
        }
        let complete = batch.items.count < limit
        noneAbove = !reverse && complete
        noneBelow = reverse && complete
    }

    private static func same(_ a: [StoreTable], _ b: [StoreTable]) -> Bool {
        guard a.count == b.count else { return false }
        var index = 0
        while index < a.count {
            guard a[index] === b[index] else { return false }
            index += 1
        }
        return true
    }

    /// The tighter of two low ends (high ends, unless `lower`): the one that leaves out more.
    static func tighter(_ a: LogStore.KeyRange.Bound, _ b: LogStore.KeyRange.Bound, lower: Bool) -> LogStore.KeyRange.Bound {
        let keyA: [UInt8]
        let keyB: [UInt8]
        switch a {
        case .unbounded: return b
        case .inclusive(let key), .exclusive(let key): keyA = key
        }
        switch b {
        case .unbounded: return a
        case .inclusive(let key), .exclusive(let key): keyB = key
        }
        let order = compareBytes(keyA, keyB)
        if order == 0 { return if case .exclusive = a { a } else { b } }
        return (order > 0) == lower ? a : b
    }
}
