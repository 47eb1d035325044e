extension LogStore {
    /// The keys in `range`, in byte order (descending when `reverse`), at most `limit` of them;
    /// each entry reads its value only when asked.
    ///
    /// The scan streams: it reads the index a batch of up to ``Scan/batchSize`` keys at a time,
    /// under the index lock for that batch only, so commits and reads go on while a long scan
    /// runs. Its cost follows the keys it returns (plus a binary search per batch), not the size
    /// of the store.
    ///
    /// What a scan sees when commits run meanwhile:
    /// - keys come in strictly ascending (descending) order, each at most once;
    /// - each entry is one committed version of its key, the one current when its batch was read,
    ///   and ``Scan/Entry/value()`` returns that version even if the key has changed since (a blob
    ///   value excepted, whose file a compaction may collect after an overwrite:
    ///   ``EngineError/Code/missingBlob``);
    /// - a key present and unchanged for the whole scan is returned; a key committed or deleted
    ///   while the scan runs may or may not be, depending on whether the scan has passed it;
    /// - a scan that returns at most ``Scan/batchSize`` entries (a `limit` up to that, or a small
    ///   range) reads them in one step, so it sees one consistent state of the store: every
    ///   commit that returned before it began, and for each later commit all of it or none.
    ///
    /// A scan begun before ``close()`` still lists its keys afterwards (no commit can change them
    /// any more), but reading a value it had not reached by then throws ``EngineError/Code/closed``.
    ///
    /// - Throws: ``EngineError/Code/closed`` after ``close()``; `limit` must not be negative
    ///   (``EngineError/Code/invalidArgument``).
    public func scan(_ range: KeyRange = .all, limit: Int? = nil, reverse: Bool = false) throws(EngineError) -> Scan {
        if let limit, limit < 0 { throw .invalid("scan limit \(limit) is negative") }
        let limit = limit ?? Int.max
        let first = try state.withLock { s throws(EngineError) in
            guard !s.closed else { throw Self.closedError }
            return Scan.Batch(s, range: range, after: nil, reverse: reverse, limit: Swift.min(limit, Scan.batchSize))
        }
        return Scan(store: self, range: range, limit: limit, reverse: reverse, first: first)
    }

    /// The keys under `prefix` in byte order (every key for an empty prefix): ``scan(_:limit:reverse:)``
    /// over ``KeyRange/prefix(_:)``.
    public func scan(prefix: [UInt8]) throws(EngineError) -> Scan {
        try scan(.prefix(prefix))
    }

    /// The result of ``LogStore/scan(_:limit:reverse:)``: keys in order, read from the index in
    /// batches as the iteration reaches them, values read on demand.
    ///
    /// A batch holds the files its entries point into, so a compaction that runs meanwhile does
    /// not take an inline value away. Iterating the scan again starts again from its first batch.
    public struct Scan: Sequence, Sendable {
        /// Keys read from the index in one step (and so seen in one consistent state).
        public static let batchSize = 1024

        let store: LogStore
        let range: KeyRange
        let limit: Int
        let reverse: Bool
        let first: Batch

        public func makeIterator() -> Iterator { Iterator(scan: self) }

        /// Entries read from the index in one step, with the files their inline values are in.
        struct Batch: Sendable {
            var entries: [IndexEntry]
            var files: [UInt64: any StoreFile] = [:]

            init(_ s: ReaderState, range: KeyRange, after cursor: [UInt8]?, reverse: Bool, limit: Int) {
                entries = s.index.entries(in: range, after: cursor, reverse: reverse, limit: limit)
                for entry in entries where entry.blob == nil && files[entry.location.segment] == nil {
                    // Absent only once the store is closed: the entry's value() then says so.
                    files[entry.location.segment] = s.files[entry.location.segment]
                }
            }
        }

        /// Reads a scan's batches as it goes.
        public struct Iterator: IteratorProtocol {
            let scan: Scan
            private var batch: Batch
            private var position = 0
            /// Entries returned before the current batch.
            private var returned = 0

            init(scan: Scan) {
                self.scan = scan
                batch = scan.first
            }

            public mutating func next() -> Entry? {
                if position == batch.entries.count {
                    returned += batch.entries.count
                    let count = Swift.min(scan.limit - returned, Scan.batchSize)
                    // A short batch was the last: the index had no more keys in the range.
                    guard batch.entries.count == Scan.batchSize, count > 0, let cursor = batch.entries.last?.key else {
                        return nil
                    }
                    let (range, reverse) = (scan.range, scan.reverse)
                    batch = scan.store.state.withLock { s in
                        Batch(s, range: range, after: cursor, reverse: reverse, limit: count)
                    }
                    position = 0
                    guard !batch.entries.isEmpty else { return nil }
                }
                let entry = batch.entries[position]
                position += 1
                return Entry(
                    store: scan.store, key: entry.key, location: entry.location, blob: entry.blob,
                    file: entry.blob == nil ? batch.files[entry.location.segment] : nil)
            }
        }

        /// One key of a ``LogStore/Scan``.
        public struct Entry: Sendable {
            let store: LogStore
            /// The key.
            public let key: [UInt8]
            let location: Location
            let blob: BlobReference?
            let file: (any StoreFile)?

            /// The sequence number of the commit that wrote this version.
            public var sequence: UInt64 { location.sequence }

            /// True when the value is stored in a blob file.
            public var isBlob: Bool { blob != nil }

            /// The value of this version (read from disk or the caches). A scan's reads fill the
            /// block cache but not the value cache, so scanning a range does not evict the
            /// values that point reads keep.
            ///
            /// - Throws: as ``LogStore/value(forKey:)``; ``EngineError/Code/closed`` when the
            ///   store was closed before the scan reached this entry.
            public func value() throws(EngineError) -> [UInt8] {
                if let blob { return try store.openBlob(blob).readAll() }
                guard let file else { throw LogStore.closedError }
                return try store.readValue(key: key, at: location, from: file, cachingValue: false)
            }
        }
    }
}
