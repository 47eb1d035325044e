extension LogStore {
    /// The keys in `range`, in byte order (descending when `reverse`), at most `limit` of them;
    /// each entry reads its value only when asked.
    ///
    /// The scan streams a merge of the log's tail and every table, a batch of up to
    /// ``Scan/batchSize`` keys at a time: the tail's entries for the batch and the set of tables
    /// are taken under the index lock for that batch only (so commits and reads go on while a
    /// long scan runs), then each table overlapping the range is read outside it, from the
    /// batch's first key on, and a key's newest version wins (a delete in the tail or a newer
    /// table hides it). Its cost follows the keys it returns and the table blocks it touches
    /// (each batch reads at most ``Scan/batchSize`` entries from the tail and from each table),
    /// not the size of the store.
    ///
    /// What a scan sees when commits run meanwhile:
    /// - keys come in strictly ascending (descending) order, each at most once;
    /// - each entry is one committed version of its key, the one current when its batch was read,
    ///   and ``Scan/Entry/value()`` returns that version even if the key has changed since (a blob
    ///   value excepted, whose file a compaction may collect after an overwrite:
    ///   ``EngineError/Code/missingBlob``);
    /// - a key present and unchanged for the whole scan is returned; a key committed or deleted
    ///   while the scan runs may or may not be, depending on whether the scan has passed it;
    /// - a scan answered by one batch sees one consistent state of the store: every commit that
    ///   returned before it began, and for each later commit all of it or none. One batch answers
    ///   a scan whose `limit` (or range) is at most ``Scan/batchSize`` keys, unless deletes in the
    ///   tail or newer versions of the same keys take up part of the batch: the next batch then
    ///   sees a later state.
    ///
    /// A scan holds the tables and segments its current batch reads, so a flush or merge that
    /// removes their files meanwhile does not take its values away. A scan begun before
    /// ``close()`` still lists its keys afterwards, but reading a value it had not reached by then
    /// throws ``EngineError/Code/closed``.
    ///
    /// The scan is a cursor: ``Scan/next()`` throws when a later batch cannot be read, so damage
    /// met part-way never looks like the end of the range.
    ///
    /// ```swift
    /// var cursor = try store.scan(prefix: Array("user/".utf8))
    /// while let entry = try cursor.next() { print(entry.key, try entry.value()) }
    /// ```
    ///
    /// - Throws: ``EngineError/Code/closed`` after ``close()``; `limit` must not be negative
    ///   (``EngineError/Code/invalidArgument``); ``EngineError/Code/corruption`` naming the table
    ///   file when a table block of the first batch fails its checks (a later batch's damage is
    ///   thrown by ``Scan/next()``).
    public func scan(_ range: KeyRange = .all, limit: Int? = nil, reverse: Bool = false) throws(EngineError) -> Scan {
        if let limit, limit < 0 { throw .invalid("scan limit \(limit) is negative") }
        let limit = limit ?? Int.max
        let first = try Scan.Batch.read(
            from: self, range: range, after: nil, reverse: reverse, limit: Swift.min(limit, Scan.batchSize),
            refusingClosed: true)
        return Scan(store: self, range: range, limit: limit, reverse: reverse, first: first)
    }

    /// The keys under `prefix` in byte order (every key for an empty prefix): ``scan(_:limit:reverse:)``
    /// over ``KeyRange/prefix(_:)``.
    public func scan(prefix: [UInt8]) throws(EngineError) -> Scan {
        try scan(.prefix(prefix))
    }

    /// The result of ``LogStore/scan(_:limit:reverse:)``: a cursor over keys in order, read from
    /// the index in batches as ``next()`` reaches them, values read on demand.
    ///
    /// It is not a `Sequence`: reading a later batch can fail (a table block that fails its
    /// checks), and ``next()`` throws that error instead of ending, so no loop over a scan can
    /// take damage for the end of the range.
    ///
    /// A batch holds the files its entries point into, so a compaction that runs meanwhile does
    /// not take an inline value away. A copy of a scan goes on from where the original was when
    /// it was copied, independently of it.
    public struct Scan: Sendable {
        /// Keys read from the index in one step (and so seen in one consistent state).
        public static let batchSize = 1024

        let store: LogStore
        let range: KeyRange
        let limit: Int
        let reverse: Bool
        private var batch: Batch
        private var position = 0
        /// Entries returned before the current batch.
        private var returned = 0

        init(store: LogStore, range: KeyRange, limit: Int, reverse: Bool, first: Batch) {
            self.store = store
            self.range = range
            self.limit = limit
            self.reverse = reverse
            batch = first
        }

        /// The next entry, or nil once the range (or `limit`) is exhausted.
        ///
        /// - Throws: ``EngineError/Code/corruption`` naming the table file when a table block the
        ///   next batch reads fails its checks; ``EngineError/Code/io`` when reading it fails. The
        ///   scan stays where it was: calling `next()` again reads that batch again.
        public mutating func next() throws(EngineError) -> Entry? {
            while position == batch.entries.count {
                let returned = returned + batch.entries.count
                let count = Swift.min(limit - returned, Scan.batchSize)
                guard count > 0, let cursor = batch.resume else { return nil }
                let next = try Batch.read(from: store, range: range, after: cursor, reverse: reverse, limit: count)
                self.returned = returned
                batch = next
                position = 0
            }
            let source = batch.entries[position]
            position += 1
            return Entry(store: store, source: source)
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

        /// Entries read in one step, from the tail's index and the tables as they were together.
        struct Batch: Sendable {
            var entries: [Entry.Source]
            /// Where the next batch starts (after this key); nil when the range holds no more.
            var resume: [UInt8]?

            /// Up to `limit` visible entries of `range` after `cursor`: the tail's first `limit`
            /// entries there and each overlapping table's, merged (the newest version of a key
            /// wins, tombstones are dropped) up to the nearest point where some source stopped
            /// short of the range's end.
            static func read(
                from store: LogStore, range: KeyRange, after cursor: [UInt8]?, reverse: Bool, limit: Int,
                refusingClosed: Bool = false
            ) throws(EngineError) -> Batch {
                var range = range
                if let cursor {
                    if reverse { range.upper = .exclusive(cursor) } else { range.lower = .exclusive(cursor) }
                }
                let (tail, files, tables) = try store.state.withLock {
                    s throws(EngineError) -> ([IndexEntry], [UInt64: any StoreFile], [StoreTable]) in
                    // After close the index and tables still list what they held (no commit can
                    // change it any more); only the first batch refuses.
                    guard !refusingClosed || !s.closed else { throw LogStore.closedError }
                    let tail = s.index.entries(in: range, after: nil, reverse: reverse, limit: limit)
                    var files: [UInt64: any StoreFile] = [:]
                    for entry in tail where entry.blob == nil && !entry.location.isTombstone && files[entry.location.segment] == nil {
                        files[entry.location.segment] = s.files[entry.location.segment]
                    }
                    return (tail, files, s.tables.filter { $0.overlaps(range) })
                }
                // Source 0 is the tail, then the tables newest first: on equal keys the lowest wins.
                var candidates: [(key: [UInt8], source: Int, item: Entry.Source?)] = []
                var stop: [UInt8]?
                let nearer = { (a: [UInt8], b: [UInt8]) -> Bool in reverse ? compareBytes(a, b) > 0 : compareBytes(a, b) < 0 }
                func stopAt(_ key: [UInt8]) { if stop == nil || nearer(key, stop!) { stop = key } }
                for entry in tail {
                    let item: Entry.Source? = if entry.location.isTombstone {
                        nil
                    } else if let blob = entry.blob {
                        Entry.Source(key: entry.key, sequence: entry.location.sequence, value: .blob(blob))
                    } else {
                        Entry.Source(
                            key: entry.key, sequence: entry.location.sequence,
                            value: .tail(entry.location, files[entry.location.segment]))
                    }
                    candidates.append((entry.key, 0, item))
                }
                if tail.count == limit, let last = tail.last { stopAt(last.key) }
                for (index, table) in tables.enumerated() {
                    let entries = try table.reader.entries(in: range, reverse: reverse, limit: limit)
                    for entry in entries {
                        let item: Entry.Source? = switch entry.value {
                        case .tombstone: nil
                        case .value(let bytes): Entry.Source(key: entry.key, sequence: entry.sequence, value: .bytes(bytes))
                        case .blob(let reference): Entry.Source(key: entry.key, sequence: entry.sequence, value: .blob(reference))
                        }
                        candidates.append((entry.key, index + 1, item))
                    }
                    if entries.count == limit, let last = entries.last { stopAt(last.key) }
                }
                candidates.sort { a, b in
                    let order = compareBytes(a.key, b.key)
                    return order != 0 ? (reverse ? order > 0 : order < 0) : a.source < b.source
                }
                var batch = Batch(entries: [], resume: stop)
                var previous: [UInt8]?
                for candidate in candidates {
                    if let stop, nearer(stop, candidate.key) { break }
                    if let previous, previous == candidate.key { continue }
                    previous = candidate.key
                    guard let item = candidate.item else { continue }
                    batch.entries.append(item)
                    if batch.entries.count == limit {
                        batch.resume = candidate.key
                        break
                    }
                }
                return batch
            }
        }

        /// One key of a ``LogStore/Scan``.
        public struct Entry: Sendable {
            /// Where an entry's value is.
            struct Source: Sendable {
                enum Value: Sendable {
                    /// In a tail segment, which the batch holds (nil once the store was closed).
                    case tail(Location, (any StoreFile)?)
                    /// Read with its table block already.
                    case bytes([UInt8])
                    case blob(BlobReference)
                }
                var key: [UInt8]
                var sequence: UInt64
                var value: Value
            }

            let store: LogStore
            let source: Source

            /// The key.
            public var key: [UInt8] { source.key }

            /// The sequence number of the commit that wrote this version.
            public var sequence: UInt64 { source.sequence }

            /// True when the value is stored in a blob file.
            public var isBlob: Bool {
                if case .blob = source.value { true } else { false }
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
                case .bytes(let bytes): return bytes
                case .tail(let location, let file):
                    guard let file else { throw LogStore.closedError }
                    return try store.readValue(key: source.key, at: location, from: file, cachingValue: false)
                }
            }
        }
    }
}
