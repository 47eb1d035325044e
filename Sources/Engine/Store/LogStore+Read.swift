import Synchronization

extension LogStore {
    /// The latest committed value for `key`, or nil when the key is absent, read on the calling
    /// thread (the `async` variant reads on the engine's I/O threads).
    ///
    /// The tail's resident index is consulted first; a key it does not hold is looked up in the
    /// tables, newest first: each table whose key range holds the key checks its Bloom filter,
    /// then its index (both in memory once a first read of the table has loaded them), then
    /// reads one data block. An inline value costs one
    /// `pread` of the block holding it, its crc32 verified, at most one block inflated; or no I/O
    /// at all when the value, or its block, is cached. A blob is read
    /// whole, every chunk verified (use ``valueStream(forKey:)`` or ``withValue(forKey:_:)`` to
    /// avoid holding a large one in an array).
    ///
    /// - Throws: ``EngineError/Code/corruption`` (naming file and offset) when a block or blob
    ///   fails its checks: corrupt bytes are never returned. ``EngineError/Code/missingBlob`` when
    ///   the value's blob file is gone. ``EngineError/Code/closed`` after ``close()``.
    public func value(forKey key: [UInt8]) throws(EngineError) -> [UInt8]? {
        try withCurrentVersion(of: key) { version throws(EngineError) in
            switch version {
            case .cached(let value): value
            case .table(let view): Array(view.bytes)
            case .inline(let location, let file): try readValue(key: key, at: location, from: file)
            case .blob(let reference): try openBlob(reference).readAll()
            }
        }
    }

    /// The value of `key` as a stream of verified chunks (of at most 1 MiB), or nil when the key
    /// is absent: a blob is never loaded whole. An inline value comes as one chunk. Every read,
    /// here and in ``ValueStream/next()``, runs on the calling thread; ``valueChunks(forKey:)``
    /// is the `async` counterpart.
    public func valueStream(forKey key: [UInt8]) throws(EngineError) -> ValueStream? {
        try withCurrentVersion(of: key) { version throws(EngineError) in
            switch version {
            case .cached(let value): ValueStream(inline: value)
            case .table(let view): ValueStream(inline: Array(view.bytes))
            case .inline(let location, let file): ValueStream(inline: try readValue(key: key, at: location, from: file))
            case .blob(let reference): ValueStream(blob: try openBlob(reference))
            }
        }
    }

    /// The value of `key` in a buffer of its own, or nil when the key is absent: a blob is read
    /// straight into the buffer (one `pread` for a raw blob, each chunk verified where it lies;
    /// a compressed one inflated chunk by chunk into it), so the caller can wrap the bytes
    /// without copying them (``ValueBuffer``). An inline value is copied into the buffer from
    /// its block. The reads and checks run on the calling thread.
    ///
    /// - Throws: as ``value(forKey:)``.
    public func valueBuffer(forKey key: [UInt8]) throws(EngineError) -> ValueBuffer? {
        try withCurrentVersion(of: key) { version throws(EngineError) in
            switch version {
            case .cached(let value): ValueBuffer(copying: value)
            case .table(let view): ValueBuffer(copying: Array(view.bytes))
            case .inline(let location, let file): ValueBuffer(copying: try readValue(key: key, at: location, from: file))
            case .blob(let reference): try openBlob(reference).readAllIntoBuffer()
            }
        }
    }

    /// Calls `body` with the bytes of `key`'s value in memory and returns its result, or returns
    /// nil when the key is absent. A value in a table is lent in place, in its cached block (no
    /// copy, nothing allocated); a raw-stored blob is **mapped** (`mmap`), not copied, after
    /// every chunk's checksum is verified; a compressed blob is inflated into a buffer first. The
    /// bytes are valid only inside `body`. The reads, checks and `body` run on the calling thread.
    ///
    /// - Throws: the engine's ``EngineError`` (as for ``value(forKey:)``), or what `body` throws.
    public func withValue<Result>(
        forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result? {
        let outcome = try lendValue(forKey: key) { bytes in Swift.Result { try body(bytes) } }
        return try outcome?.get()
    }

    /// ``withValue(forKey:_:)`` with a `body` that cannot fail: the only errors are the engine's,
    /// typed.
    public func withValue<Result>(
        forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) -> Result
    ) throws(EngineError) -> Result? {
        try lendValue(forKey: key, body)
    }

    /// Looks `key` up and lends its value's bytes to `body`: in place for a table's value, from
    /// the cached array or the block read for a tail value, mapped or inflated for a blob.
    private func lendValue<Result>(
        forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) -> Result
    ) throws(EngineError) -> Result? {
        try withCurrentVersion(of: key) { version throws(EngineError) in
            switch version {
            case .table(let view): body(view.bytes)
            case .cached(let value): value.withUnsafeBytes(body)
            case .inline(let location, let file): try readValue(key: key, at: location, from: file).withUnsafeBytes(body)
            case .blob(let reference): try openBlob(reference).content().withBytes(body)
            }
        }
    }

    /// True when `key` has a value. Answered from the tail's resident index without I/O when it
    /// holds the key (a value or a delete); otherwise the tables are consulted as by
    /// ``value(forKey:)``, which may read a table block (never a value's blob).
    ///
    /// - Throws: ``EngineError/Code/corruption`` when a table block it reads fails its checks;
    ///   ``EngineError/Code/closed`` after ``close()``.
    public func contains(_ key: [UInt8]) throws(EngineError) -> Bool {
        try currentVersion(of: key) != nil
    }

    /// Where the current version of a key is, as seen under the index lock.
    enum Version {
        case cached([UInt8])
        /// In a table block, which the view holds.
        case table(TableEntryView)
        /// The file is held, so a flush that removes it meanwhile cannot pull it away.
        case inline(Location, any StoreFile)
        case blob(BlobReference)
    }

    /// Looks `key` up and runs `read` on what it finds; nil when the key is absent. Should the
    /// value's blob have vanished because the key was overwritten and the old blob collected in
    /// between, looks again.
    func withCurrentVersion<T>(of key: [UInt8], _ read: (Version) throws(EngineError) -> T) throws(EngineError) -> T? {
        var failed: (reference: BlobReference, error: EngineError)?
        while true {
            guard let version = try currentVersion(of: key) else { return nil }
            // The same blob again: the key still references it, and its file is gone.
            if case .blob(let reference) = version, let failed, failed.reference == reference { throw failed.error }
            do {
                return try read(version)
            } catch  where error.code == .missingBlob {
                guard case .blob(let reference) = version else { throw error }
                failed = (reference, error)
            }
        }
    }

    /// The current version of `key`: the tail's entry (a tombstone makes the key absent), or else
    /// the newest table's entry for it. The table set is taken under the index lock with the
    /// tail's miss, so a flush that moves the key from the tail to a table meanwhile is seen
    /// whole; the tables are read outside the lock (they are immutable, and held).
    func currentVersion(of key: [UInt8]) throws(EngineError) -> Version? {
        enum Found {
            case tail(Version?)
            case tables([StoreTable])
        }
        let found = try state.withLock { s throws(EngineError) -> Found in
            guard !s.closed else { throw Self.closedError }
            guard let version = try tailVersion(of: key, in: &s) else { return .tables(s.tables) }
            return .tail(version)
        }
        switch found {
        case .tail(let version):
            return version
        case .tables(let tables):
            return try withBytes(key) { key throws(EngineError) -> Version? in
                // (Indexed, not iterated: a point read allocates nothing, in debug builds too.)
                var index = 0
                while index < tables.count {
                    let table = tables[index]
                    index += 1
                    guard let view = try tableEntry(table, key) else { continue }
                    return try view.version()
                }
                return nil
            }
        }
    }

    /// What the tail's index says of `key`, read under the index lock (`s`, whose value cache a hit refreshes): `nil` when the
    /// tail does not hold it (the tables decide), `.some(nil)` for its tombstone, else where its
    /// current version is.
    func tailVersion(of key: [UInt8], in s: inout ReaderState) throws(EngineError) -> Version?? {
        guard let location = s.index[key] else { return nil }
        if location.isTombstone { return .some(nil) }
        if location.isBlob {
            guard let blob = s.index.blob(forKey: key) else {
                throw .corruption("the tail's index names a blob it does not hold", path: path, offset: 0)
            }
            return .blob(blob)
        }
        if let cached = s.cache.value(forKey: HashedKey(key), tag: location.sequence) { return .cached(cached) }
        guard let file = s.files[location.segment] else {
            throw .corruption("the tail's index names segment \(location.segment), which is not open", path: path, offset: 0)
        }
        return .inline(location, file)
    }

    /// `table`'s entry for `key` (a tombstone included), or nil: the table's key range, then its
    /// filter (both counted in the statistics), then its index and one data block.
    func tableEntry(_ table: StoreTable, _ key: UnsafeRawBufferPointer) throws(EngineError) -> TableEntryView? {
        guard table.covers(key) else {
            try table.checkOnce()
            return nil
        }
        tableFilterChecks.add(1, ordering: .relaxed)
        switch try table.reader.lookup(key) {
        case .filteredOut:
            tableFilterNegatives.add(1, ordering: .relaxed)
            return nil
        case .absent: return nil
        case .found(let view): return view
        }
    }

    /// Opens blob `reference`, checking its header and chunk table.
    func openBlob(_ reference: BlobReference) throws(EngineError) -> BlobReader {
        try BlobReader(reference: reference, directory: blobDirectory, fileSystem: fileSystem)
    }

    /// Reads the inline value at `location` for `key` from `file` (or the block cache), and
    /// caches it if it is still current and `cachingValue` (a scan's reads do not: a scan of a
    /// whole range would evict the values point reads keep hot, and rarely reads one twice).
    func readValue(key: [UInt8], at location: Location, from file: any StoreFile, cachingValue: Bool = true) throws(EngineError) -> [UInt8] {
        let (raw, fromDisk, range) = try logBlock(holding: location, from: file)
        let value = range == raw.indices ? raw : Array(raw[range])
        let block = BlockID(segment: location.segment, offset: location.blockOffset)
        let cacheBlock = fromDisk && options.blockCacheCapacity > 0
        let cacheValue = cachingValue && options.valueCacheCapacity > 0
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

    /// Lends the inline value at `location` to `body` in place, in its log block (from the block
    /// cache, or read, verified and cached): nothing is copied. The value cache is neither read
    /// nor filled (what a scan's reads do).
    func lendValue<Result>(
        at location: Location, from file: any StoreFile, _ body: (UnsafeRawBufferPointer) throws(EngineError) -> Result
    ) throws(EngineError) -> Result {
        let (raw, fromDisk, range) = try logBlock(holding: location, from: file)
        if fromDisk, options.blockCacheCapacity > 0 {
            let block = BlockID(segment: location.segment, offset: location.blockOffset)
            state.withLock { $0.blocks.insert(raw, forKey: block, tag: 0) }
        }
        return try withBytes(raw) { bytes throws(EngineError) in try body(UnsafeRawBufferPointer(rebasing: bytes[range])) }
    }

    /// The inflated log block holding the inline value at `location`: from the block cache, or
    /// read (``readBlock(at:from:)``; `fromDisk`, and not cached yet: the caller caches it),
    /// with the value's place in it, checked.
    private func logBlock(
        holding location: Location, from file: any StoreFile
    ) throws(EngineError) -> (raw: [UInt8], fromDisk: Bool, value: Range<Int>) {
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
        return (raw, fromDisk, start..<end)
    }

    /// One `pread` of the block at `location`, verified and inflated (reads and flushes).
    func readBlock(at location: Location, from file: any StoreFile) throws(EngineError) -> [UInt8] {
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

/// A value read as a sequence of chunks (``LogStore/valueStream(forKey:)``); each chunk is
/// verified before it is returned, and the whole value's checksum after the last one.
public struct ValueStream: Sendable {
    private enum Source: Sendable {
        case inline([UInt8]?)
        case blob(BlobReader, next: Int, digest: ContentDigest)
    }
    private var source: Source
    /// The value's length in bytes.
    public let length: UInt64

    init(inline value: [UInt8]) {
        source = .inline(value)
        length = UInt64(value.count)
    }

    init(blob reader: BlobReader) {
        source = .blob(reader, next: 0, digest: ContentDigest())
        length = reader.reference.length
    }

    /// The next chunk, or nil after the last, read and verified on the calling thread.
    ///
    /// - Throws: ``EngineError/Code/corruption`` naming the blob file when a chunk (or, at the
    ///   end, the whole value) fails its checksum; the chunk is not returned.
    public mutating func next() throws(EngineError) -> [UInt8]? {
        switch source {
        case .inline(let value):
            source = .inline(nil)
            return value.flatMap { $0.isEmpty ? nil : $0 }
        case .blob(let reader, let index, var digest):
            guard index < reader.chunks.count else {
                try reader.verifyContent(digest)
                return nil
            }
            let chunk = try reader.chunk(index)
            reader.addContent(of: index, chunk, to: &digest)
            if index + 1 == reader.chunks.count { try reader.verifyContent(digest) }
            source = .blob(reader, next: index + 1, digest: digest)
            return chunk
        }
    }
}
