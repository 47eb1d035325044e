extension LogStore {
    /// The latest committed value for `key`, or nil when the key is absent.
    ///
    /// One `pread` of the block holding the value, its crc32 verified, at most one block inflated;
    /// or no I/O at all when the value, or its block, is cached.
    ///
    /// - Throws: ``EngineError/Code/corruption`` (naming file and offset) when the block fails its
    ///   checks: corrupt bytes are never returned. ``EngineError/Code/closed`` after ``close()``.
    public func value(forKey key: [UInt8]) throws(EngineError) -> [UInt8]? {
        let found = try state.withLock { s throws(EngineError) -> (Location, (any StoreFile)?, [UInt8]?)? in
            guard !s.closed else { throw Self.closedError }
            guard let location = s.index[key] else { return nil }
            if let cached = s.cache.value(forKey: HashedKey(key), tag: location.sequence) {
                return (location, nil, cached)
            }
            return (location, s.files[location.segment], nil)
        }
        guard let (location, file, cached) = found else { return nil }
        if let cached { return cached }
        return try readValue(key: key, at: location, from: file!)
    }

    /// True when `key` has a value. Answered from the in-memory index, without I/O.
    public func contains(_ key: [UInt8]) throws(EngineError) -> Bool {
        try state.withLock { s throws(EngineError) in
            guard !s.closed else { throw Self.closedError }
            return s.index[key] != nil
        }
    }

    /// The keys under `prefix` in byte order, as they are now; each entry reads its value only when
    /// asked. Costs in proportion to the number of keys under the prefix (plus a binary search),
    /// not to the size of the store. An empty prefix scans every key.
    public func scan(prefix: [UInt8]) throws(EngineError) -> PrefixScan {
        let entries = try state.withLock { s throws(EngineError) in
            guard !s.closed else { throw Self.closedError }
            return s.index.entries(withPrefix: prefix)
        }
        return PrefixScan(store: self, entries: entries)
    }

    /// Reads the value at `location` for `key` from disk and caches it if it is still current.
    func readValue(key: [UInt8], at location: Location) throws(EngineError) -> [UInt8] {
        let found = try state.withLock { s throws(EngineError) -> (any StoreFile, [UInt8]?) in
            guard !s.closed, let file = s.files[location.segment] else { throw Self.closedError }
            return (file, s.cache.value(forKey: HashedKey(key), tag: location.sequence))
        }
        if let cached = found.1 { return cached }
        return try readValue(key: key, at: location, from: found.0)
    }

    private func readValue(key: [UInt8], at location: Location, from file: any StoreFile) throws(EngineError) -> [UInt8] {
        let block = BlockID(segment: location.segment, offset: location.blockOffset)
        let raw: [UInt8]
        var fromDisk = false
        if options.blockCacheCapacity > 0, let cached = state.withLock({ $0.blocks.value(forKey: block, tag: 0) }) {
            raw = cached
        } else {
            raw = try readBlock(at: location, from: file)
            fromDisk = true
        }
        let start = Int(location.valueOffset)
        let end = start + Int(location.valueLength)
        guard end <= raw.count else {
            throw .corruption("value lies past the end of its block", path: file.path, offset: location.blockOffset)
        }
        let value = start == 0 && end == raw.count ? raw : Array(raw[start..<end])
        let cacheBlock = fromDisk && options.blockCacheCapacity > 0
        let cacheValue = options.valueCacheCapacity > 0
        if cacheBlock || cacheValue {
            state.withLock { s in
                if cacheBlock { s.blocks.insert(raw, forKey: block, tag: 0) }
                if cacheValue, s.index[key]?.sequence == location.sequence {
                    s.cache.insert(value, forKey: HashedKey(key), tag: location.sequence, keyCost: key.count)
                }
            }
        }
        return value
    }

    /// One `pread` of the block at `location`, verified and inflated.
    private func readBlock(at location: Location, from file: any StoreFile) throws(EngineError) -> [UInt8] {
        let length = Int(location.blockLength)
        let block = try file.read(at: location.blockOffset, count: length)
        guard block.count == length, length >= LogFormat.blockHeaderSize else {
            throw .corruption("block of \(length) bytes runs past the end of the segment", path: file.path, offset: location.blockOffset)
        }
        return try CommitDecoding.block(
            header: block[0..<LogFormat.blockHeaderSize], stored: block[LogFormat.blockHeaderSize...],
            path: file.path, offset: location.blockOffset)
    }
}

/// The result of ``LogStore/scan(prefix:)``: keys in byte order, values read on demand.
public struct PrefixScan: Sequence, Sendable {
    let store: LogStore
    let entries: [(key: [UInt8], location: Location)]

    /// How many keys the scan holds.
    public var count: Int { entries.count }

    public func makeIterator() -> Iterator { Iterator(scan: self) }

    public struct Iterator: IteratorProtocol {
        let scan: PrefixScan
        var position = 0

        public mutating func next() -> ScanEntry? {
            guard position < scan.entries.count else { return nil }
            defer { position += 1 }
            let entry = scan.entries[position]
            return ScanEntry(store: scan.store, key: entry.key, location: entry.location)
        }
    }
}

/// One key of a ``PrefixScan``.
public struct ScanEntry: Sendable {
    let store: LogStore
    /// The key.
    public let key: [UInt8]
    let location: Location

    /// The sequence number of the commit that wrote this version.
    public var sequence: UInt64 { location.sequence }

    /// The value as it was when the scan began (reads it from disk or the cache).
    public func value() throws(EngineError) -> [UInt8] {
        try store.readValue(key: key, at: location)
    }
}
