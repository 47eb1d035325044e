extension LogStore {
    /// The keys in `range`, in byte order (descending when `reverse`), at most `limit` of them;
    /// each entry reads its value only when asked.
    ///
    /// The scan is a merging cursor over the log's tail (a ``TailCursor``) and every table
    /// overlapping the range (``MergingCursor``): a key's newest version wins, and a delete in the
    /// tail or a newer table hides it. The tail's first keys (a batch of up to
    /// ``Scan/batchSize``, and at most `limit`) and the set of tables are taken under the index
    /// lock together; then the tables are walked outside it, block by block, in place, and the
    /// tail's cursor reads its next batch (and the set of tables beside it) under the lock only
    /// when it moves past the one it holds, taking no more keys than the scan may still return.
    /// When only one source overlaps the range (a
    /// compacted store) its entries are returned directly, with no merge; otherwise the sources
    /// are merged k-way by a heap. Its cost follows the entries it passes and the table blocks it
    /// touches, not the size of the store: it reads ahead at most one block per table.
    ///
    /// What a scan sees when commits run meanwhile:
    /// - keys come in strictly ascending (descending) order, each at most once;
    /// - each entry is one committed version of its key, and ``Scan/Entry/value()`` returns that
    ///   version even if the key has changed since (a blob value excepted, whose file a
    ///   compaction may collect after an overwrite: ``EngineError/Code/missingBlob``);
    /// - a key present and unchanged for the whole scan is returned; a key committed or deleted
    ///   while the scan runs may or may not be, depending on whether the scan has passed it;
    /// - a scan whose tail keys fit in its first batch sees one consistent state of the store:
    ///   every commit that returned before it began, and for each later commit all of it or none.
    ///   That is every scan whose `limit` (or range) is at most ``Scan/batchSize`` keys, unless
    ///   deletes in the tail or newer versions of the same keys take up part of the batch: the next
    ///   batch then sees a later state (and, if a flush or merge replaced tables meanwhile, the
    ///   scan goes on over the new set from where it was).
    ///
    /// A scan holds the tables it reads and the segments its current tail batch points into, so a
    /// flush or merge that removes their files meanwhile does not take its values away. A scan
    /// begun before ``close()`` still lists its keys afterwards, but reading a tail value it had
    /// not reached by then throws ``EngineError/Code/closed``.
    ///
    /// The scan is a cursor: ``Scan/next()`` throws when a later block cannot be read, so damage
    /// met part-way never looks like the end of the range. ``Scan/withNext(_:)`` lends each
    /// entry's key and value in place instead of copying them.
    ///
    /// ```swift
    /// var cursor = try store.scan(prefix: Array("user/".utf8))
    /// while let entry = try cursor.next() { print(entry.key, try entry.value()) }
    ///
    /// var count = 0  // borrowed: nothing is copied or allocated for a table's entry
    /// var scan = try store.scan(prefix: Array("user/".utf8))
    /// while try scan.withNext({ entry in try entry.withValue { $0.count > 100 } }) != nil { count += 1 }
    /// ```
    ///
    /// - Throws: ``EngineError/Code/closed`` after ``close()``; `limit` must not be negative
    ///   (``EngineError/Code/invalidArgument``); ``EngineError/Code/corruption`` naming the table
    ///   file when a table block the scan's first position reads fails its checks (later damage
    ///   is thrown by ``Scan/next()`` and ``Scan/withNext(_:)``).
    public func scan(_ range: KeyRange = .all, limit: Int? = nil, reverse: Bool = false) throws(EngineError) -> Scan {
        try scan(range, limit: limit, reverse: reverse, overlay: [])
    }

    /// ``scan(_:limit:reverse:)`` with writes not yet committed laid over the store: each
    /// overlay entry's key reads as its value (or as absent, for a deletion) whatever the store
    /// holds, as if the writes had been committed after every commit the scan sees; `limit`
    /// counts the merged entries. The overlay is merged by the same cursor as the tail and the
    /// tables (its entries are the newest source). Overlay entries outside `range` are ignored;
    /// a key given twice keeps its last entry. An overlay entry's ``Scan/Entry/sequence`` is 0.
    ///
    /// - Throws: as ``scan(_:limit:reverse:)``.
    public func scan(
        _ range: KeyRange, limit: Int? = nil, reverse: Bool = false, overlay: [Scan.OverlayEntry]
    ) throws(EngineError) -> Scan {
        if let limit, limit < 0 { throw .invalid("scan limit \(limit) is negative") }
        var ordered: [Scan.OverlayEntry] = []
        if !overlay.isEmpty {
            // The last entry of each key, in the scan's order.
            var last: [Int] = []
            for index in overlay.indices.reversed() where range.contains(overlay[index].key) { last.append(index) }
            last.sort { a, b in
                let order = compareBytes(overlay[a].key, overlay[b].key)
                return order != 0 ? (reverse ? order > 0 : order < 0) : a > b
            }
            for index in last where ordered.last?.key != overlay[index].key { ordered.append(overlay[index]) }
        }
        return try Scan(store: self, range: range, limit: limit ?? Int.max, reverse: reverse, overlay: ordered)
    }

    /// The keys under `prefix` in byte order (every key for an empty prefix): ``scan(_:limit:reverse:)``
    /// over ``KeyRange/prefix(_:)``.
    public func scan(prefix: [UInt8]) throws(EngineError) -> Scan {
        try scan(.prefix(prefix))
    }

    /// The result of ``LogStore/scan(_:limit:reverse:)``: a cursor over keys in order, values read
    /// on demand.
    ///
    /// Two ways to step:
    /// - ``next()`` returns an ``Entry`` that owns its key and reads its value when asked (it can
    ///   be kept and sent anywhere);
    /// - ``withNext(_:)`` lends the entry to a closure as a ``BorrowedEntry``: its key and value
    ///   are views into the store's cached blocks, valid only inside the closure, and nothing is
    ///   allocated for an entry whose bytes lie in a table. This is the fast path for filters,
    ///   counts and decoders that copy only what they keep.
    ///
    /// It is not a `Sequence`: reading a later block can fail (a table block that fails its
    /// checks), and stepping throws that error instead of ending, so no loop over a scan can take
    /// damage for the end of the range.
    ///
    /// A scan holds the tables it reads and the tail segments its current batch points into, so a
    /// compaction that runs meanwhile does not take a value away. A copy of a scan goes on from
    /// where the original was when it was copied, independently of it.
    public struct Scan: Sendable {
        /// The most log-tail keys read from the index in one step (and so seen in one state).
        public static let batchSize = 1024

        /// A write not yet committed, laid over a scan
        /// (``LogStore/scan(_:limit:reverse:overlay:)``): `key` reads as `value`, or as absent
        /// when `value` is nil.
        public struct OverlayEntry: Sendable, Equatable {
            public var key: [UInt8]
            /// The value; nil for a deletion.
            public var value: [UInt8]?
            /// What ``Scan/Entry/isBlob`` reports for it (a write that will be stored as a blob).
            public var isBlob: Bool

            public init(key: [UInt8], value: [UInt8]?, isBlob: Bool = false) {
                self.key = key
                self.value = value
                self.isBlob = isBlob
            }
        }

        let store: LogStore
        let range: KeyRange
        let limit: Int
        let reverse: Bool
        /// The overlay, the tail (which holds the tail segments its current batch points into)
        /// and the tables the tail's last read showed (which it holds too).
        private var merge: MergingCursor
        /// Entries returned so far.
        private var returned = 0
        /// True once the current entry was returned: the next step first moves past it.
        private var pendingAdvance = false
        /// The error a step threw: every later step throws it again (a cursor that failed part
        /// way through a move is not left to pretend it reached the end).
        private var failure: EngineError?

        init(store: LogStore, range: KeyRange, limit: Int, reverse: Bool, overlay: [OverlayEntry]) throws(EngineError) {
            self.store = store
            self.range = range
            self.limit = limit
            self.reverse = reverse
            store.scansOpened.add(1, ordering: .relaxed)
            var tail = TailCursor(store: store, range: range, batchSize: store.testHooks.scanBatchSize ?? Scan.batchSize)
            tail.wanted = limit
            merge = MergingCursor(overlay: overlay.isEmpty ? nil : OverlayCursor(overlay), tail: tail, tables: [], reverse: reverse)
            if limit > 0 {
                // The tail's first batch and the tables, under the index lock together.
                try merge.seek(range)
            } else {
                try store.state.withLock { s throws(EngineError) in if s.closed { throw LogStore.closedError } }
            }
        }

        /// Moves to the next visible entry: past the one returned last, over tombstones and
        /// shadowed versions. False at the end.
        private mutating func step() throws(EngineError) -> Bool {
            if let failure { throw failure }
            do {
                return try move()
            } catch {
                failure = error
                throw error
            }
        }

        private mutating func move() throws(EngineError) -> Bool {
            guard returned < limit else { return false }
            if pendingAdvance {
                pendingAdvance = false
                // The tail's next read need not take more keys than the scan may still return.
                merge.tail?.wanted = limit - returned
                try merge.advance()
            }
            while true {
                guard merge.isValid else { return false }
                let key = merge.key
                let inRange = reverse ? range.isAboveLower(key) : range.isBelowUpper(key)
                guard inRange else { return false }
                if isTombstone(merge.source) {
                    try merge.advance()
                    continue
                }
                returned += 1
                pendingAdvance = true
                return true
            }
        }

        /// Moves a forward scan to its first key at or above `key` (and in its range), wherever
        /// it was: the next step returns that key. The scan's sources are positioned afresh (the
        /// tail's next keys and the set of tables read under the index lock, as when the scan
        /// began, and each table's cursor searched from its index), so a walk that visits many
        /// key prefixes in ascending order costs one seek per prefix rather than a scan opened
        /// per prefix. The tail's read after a seek takes a few keys (at most
        /// ``seekBatchSize``), not a whole batch: a seek is usually followed by a short walk.
        /// Entries returned before count towards the scan's limit.
        ///
        /// - Throws: ``EngineError/Code/invalidArgument`` for a reverse scan; otherwise as
        ///   ``next()``.
        public mutating func seek(to key: [UInt8]) throws(EngineError) {
            guard !reverse else { throw .invalid("seek(to:) moves a forward scan; this one is reverse") }
            if let failure { throw failure }
            store.scanSeeks.add(1, ordering: .relaxed)
            var target = range
            // The higher of the range's lower bound and the key.
            if range.isAboveLower(key) { target.lower = .inclusive(key) }
            do {
                merge.tail?.wanted = Swift.min(limit - returned, Self.seekBatchSize)
                try merge.seek(target)
                pendingAdvance = false
            } catch {
                failure = error
                throw error
            }
        }

        /// The most tail keys the read after a ``seek(to:)`` takes.
        public static let seekBatchSize = 16

        /// The keys of the tail's current batch (tests: a scan's first read is bounded by its
        /// limit).
        var bufferedTailKeys: Int { merge.tail?.bufferedCount ?? 0 }

        private func isTombstone(_ source: Int) -> Bool {
            if source == -1 { return merge.overlay!.entry.value == nil }
            if source == 0 { return merge.tail!.item.location.isTombstone }
            let stored = merge.storedValue
            return !stored.isEmpty && stored[0] == TableFormat.kindTombstone
        }

        /// The next entry, or nil once the range (or `limit`) is exhausted.
        ///
        /// - Throws: ``EngineError/Code/corruption`` naming the table file when a table block the
        ///   scan reads fails its checks; ``EngineError/Code/io`` when reading it fails. Once a
        ///   step has thrown, every later one throws the same error.
        public mutating func next() throws(EngineError) -> Entry? {
            guard try step() else { return nil }
            let source = merge.source
            let key = Array(merge.key)
            if source == -1 {
                let entry = merge.overlay!.entry
                return Entry(store: store, source: .init(key: key, sequence: 0, value: .overlay(entry.value ?? [], isBlob: entry.isBlob)))
            }
            if source == 0 {
                let item = merge.tail!.item
                if let blob = item.blob {
                    return Entry(store: store, source: .init(key: key, sequence: item.location.sequence, value: .blob(blob)))
                }
                let value = Entry.Source.Value.tail(item.location, merge.tail!.file)
                return Entry(store: store, source: .init(key: key, sequence: item.location.sequence, value: value))
            }
            let view = try merge.tables[source - 1].view()
            let value: Entry.Source.Value = view.isBlob ? .blob(try view.blobReference()) : .table(view)
            return Entry(store: store, source: .init(key: key, sequence: view.sequence, value: value))
        }

        /// Moves to the next entry and calls `body` with it, borrowed; returns what `body`
        /// returns, or nil (without calling it) once the range (or `limit`) is exhausted.
        ///
        /// The entry's ``BorrowedEntry/key`` and the bytes ``BorrowedEntry/withValue(_:)`` lends
        /// are views into the store's memory, valid only until `body` returns: copy what must
        /// outlive it. For an entry stored in a table, nothing is allocated.
        ///
        /// - Throws: as ``next()``, or what `body` throws.
        @inlinable
        public mutating func withNext<Result>(_ body: (BorrowedEntry) throws(EngineError) -> Result) throws(EngineError) -> Result? {
            guard let entry = try nextBorrowed() else { return nil }
            return try body(entry)
        }

        /// The next entry, borrowed (for ``withNext(_:)``): its views are valid until the scan
        /// moves. Not generic, so that a caller's `withNext` specializes without looking up
        /// generic metadata per entry.
        @usableFromInline
        mutating func nextBorrowed() throws(EngineError) -> BorrowedEntry? {
            guard try step() else { return nil }
            let source = merge.source
            let key = merge.key
            if source == -1 {
                let overlay = merge.overlay!
                return BorrowedEntry(store: store, key: key, sequence: 0, storage: .bytes(overlay.value), overlaidBlob: overlay.entry.isBlob)
            }
            if source == 0 {
                let item = merge.tail!.item
                let value: BorrowedEntry.Value =
                    if let blob = item.blob { .blob(blob) } else { .tail(item.location, merge.tail!.file) }
                return BorrowedEntry(store: store, key: key, sequence: item.location.sequence, storage: value)
            }
            let stored = merge.storedValue
            guard let parsed = TableEntryView.parse(stored) else {
                throw TableEntryView.corruptValue(in: merge.tables[source - 1].currentBlock)
            }
            let payload = UnsafeRawBufferPointer(rebasing: stored[parsed.payloadStart...])
            let value: BorrowedEntry.Value =
                parsed.kind == TableFormat.kindBlob
                ? .blob(try TableEntryView.blobReference(payload, in: merge.tables[source - 1].currentBlock)) : .bytes(payload)
            return BorrowedEntry(store: store, key: key, sequence: parsed.sequence, storage: value)
        }

        /// Every entry the scan has not yet returned, in order (the scan itself does not move).
        ///
        /// - Throws: as ``next()``.
        public func collect() throws(EngineError) -> [Entry] {
            var cursor = self
            var entries: [Entry] = []
            while let entry = try cursor.next() { entries.append(entry) }
            return entries
        }

        /// One key of a ``LogStore/Scan``, lent to ``LogStore/Scan/withNext(_:)``'s closure: its
        /// key and value are views valid only inside that closure.
        public struct BorrowedEntry {
            enum Value {
                /// In a table block the scan holds.
                case bytes(UnsafeRawBufferPointer)
                /// In a tail segment (nil once the store was closed).
                case tail(Location, (any StoreFile)?)
                case blob(BlobReference)
            }

            unowned(unsafe) let store: LogStore
            /// The key, valid only inside the closure it was lent to.
            public let key: UnsafeRawBufferPointer
            /// The sequence number of the commit that wrote this version (0 for an overlay entry).
            public let sequence: UInt64
            let storage: Value
            /// The value's bytes when they are in memory already (a table's or an overlay's).
            @usableFromInline let inlineBytes: UnsafeRawBufferPointer?
            /// An overlay entry's ``LogStore/Scan/OverlayEntry/isBlob``.
            var overlaidBlob = false

            init(store: LogStore, key: UnsafeRawBufferPointer, sequence: UInt64, storage: Value, overlaidBlob: Bool = false) {
                self.store = store
                self.key = key
                self.sequence = sequence
                self.storage = storage
                self.overlaidBlob = overlaidBlob
                if case .bytes(let bytes) = storage { inlineBytes = bytes } else { inlineBytes = nil }
            }

            /// True when the value is stored in a blob file.
            public var isBlob: Bool {
                if case .blob = storage { true } else { overlaidBlob }
            }

            /// Calls `body` with the value's bytes, valid only inside it: in place, in its cached
            /// table or log block, for an inline value (nothing copied); a blob is read and
            /// verified whole first.
            ///
            /// - Throws: as ``LogStore/value(forKey:)``, or what `body` throws.
            @inlinable
            public func withValue<Result>(_ body: (UnsafeRawBufferPointer) throws(EngineError) -> Result) throws(EngineError) -> Result {
                if let inlineBytes { return try body(inlineBytes) }
                return try withReadValue(body)
            }

            /// A value in the log's tail or a blob, read and lent.
            @usableFromInline
            func withReadValue<Result>(_ body: (UnsafeRawBufferPointer) throws(EngineError) -> Result) throws(EngineError) -> Result {
                switch storage {
                case .bytes(let bytes): return try body(bytes)
                case .tail(let location, let file):
                    guard let file else { throw LogStore.closedError }
                    return try store.lendValue(at: location, from: file, body)
                case .blob(let blob):
                    let value = try store.openBlob(blob).readAll()
                    return try withBytes(value, body)
                }
            }

            /// The value, copied.
            public func value() throws(EngineError) -> [UInt8] {
                try withValue { Array($0) }
            }
        }

        /// One key of a ``LogStore/Scan``.
        public struct Entry: Sendable {
            /// Where an entry's value is.
            struct Source: Sendable {
                enum Value: Sendable {
                    /// In a tail segment, which the batch holds (nil once the store was closed).
                    case tail(Location, (any StoreFile)?)
                    /// In a table block, which the view holds.
                    case table(TableEntryView)
                    case blob(BlobReference)
                    /// An overlay entry's value.
                    case overlay([UInt8], isBlob: Bool)
                }
                var key: [UInt8]
                var sequence: UInt64
                var value: Value
            }

            let store: LogStore
            let source: Source

            /// The key.
            public var key: [UInt8] { source.key }

            /// The sequence number of the commit that wrote this version (0 for an overlay entry).
            public var sequence: UInt64 { source.sequence }

            /// True when the value is stored in a blob file (or, for an overlay entry, when it
            /// was given as one).
            public var isBlob: Bool {
                switch source.value {
                case .blob: true
                case .overlay(_, let isBlob): isBlob
                default: false
                }
            }

            /// The value of this version (read from disk or the caches). A scan's reads fill the
            /// block caches but not the value cache, so scanning a range does not evict the
            /// values that point reads keep.
            ///
            /// - Throws: as ``LogStore/value(forKey:)``; ``EngineError/Code/closed`` when the
            ///   store was closed before the scan reached this entry.
            public func value() throws(EngineError) -> [UInt8] {
                switch source.value {
                case .blob(let blob): return try store.openBlob(blob).readAll()
                case .table(let view): return Array(view.bytes)
                case .overlay(let bytes, _): return bytes
                case .tail(let location, let file):
                    guard let file else { throw LogStore.closedError }
                    return try store.readValue(key: source.key, at: location, from: file, cachingValue: false)
                }
            }
        }
    }
}
