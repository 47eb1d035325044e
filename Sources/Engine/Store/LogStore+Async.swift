/// The `async` variants of the store's blocking calls.
///
/// Each one runs the synchronous call it mirrors, unchanged, on one of the engine's own I/O
/// threads (started at first use and shared by every store in the process) and suspends the
/// calling task until it is done. No Swift-concurrency cooperative thread ever waits in a
/// `pread`, `pwrite`, `fdatasync` or any other file-system call made for these methods, and the
/// task holds no thread while it waits. What is durable when one returns is what the
/// synchronous call promises. A call already handed to an I/O thread runs to completion even if
/// its task is cancelled.
extension LogStore {
    /// Opens (creating if needed) and recovers the store at `path`, like
    /// the synchronous `open(at:options:)`, with the directory creation, locking and the
    /// whole recovery (hint files loaded, the frames no hint covers replayed and verified) on one
    /// of the engine's I/O threads; the calling task is suspended meanwhile.
    ///
    /// When it returns, the store is open and every commit recovered from the log is readable;
    /// a directory it created is durable.
    ///
    /// - Throws: the same ``EngineError`` as the synchronous `open`.
    public static func open(at path: String, options: Options = Options()) async throws(EngineError) -> LogStore {
        try await open(at: path, options: options, fileSystem: PosixFileSystem())
    }

    package static func open(
        at path: String, options: Options, fileSystem: any FileSystem
    ) async throws(EngineError) -> LogStore {
        try await IOThreads.shared.run { () throws(EngineError) in
            try open(at: path, options: options, fileSystem: fileSystem)
        }
    }

    /// Makes every commit written so far durable, like the synchronous `sync()`, with the `fdatasync` on
    /// one of the engine's I/O threads; the calling task is suspended meanwhile.
    ///
    /// When it returns, every commit that returned before it was called survives power loss.
    ///
    /// - Throws: the sync's ``EngineError``; the store is then read-only.
    public func sync() async throws(EngineError) {
        try await IOThreads.shared.run { () throws(EngineError) in try self.sync() }
    }

    /// Closes the store like the synchronous `close()` — waits for a running compaction to stop, syncs
    /// what is unsynced, releases the directory lock — on one of the engine's I/O threads; the
    /// calling task is suspended meanwhile.
    ///
    /// When it returns, every commit that returned is durable, whatever the sync mode.
    ///
    /// - Throws: the final sync's error. The store is closed all the same.
    public func close() async throws(EngineError) {
        try await IOThreads.shared.run { () throws(EngineError) in try self.close() }
    }

    /// Compacts the store like the synchronous `compact()`, the whole compaction on one of the engine's
    /// I/O threads; the calling task is suspended meanwhile, and commits and reads go on.
    ///
    /// When it returns, the new manifest and table are durable.
    ///
    /// - Throws: the same ``EngineError`` as the synchronous `compact()`.
    @discardableResult
    public func compact() async throws(EngineError) -> Statistics.Compaction {
        try await IOThreads.shared.run { () throws(EngineError) in try self.compact() }
    }

    /// The latest committed value for `key`, or nil when the key is absent, like the
    /// synchronous `value(forKey:)`.
    ///
    /// An absent key, or a value in the value cache, is answered on the calling thread from
    /// memory, without I/O (it takes the index lock, which is held only for in-memory
    /// work, for a moment). Anything else — the `pread` and check of an inline value's block, or
    /// a blob's chunks, every one verified — is read on one of the engine's I/O threads while the
    /// calling task is suspended.
    ///
    /// - Throws: the same ``EngineError`` as the synchronous `value(forKey:)`.
    public func value(forKey key: [UInt8]) async throws(EngineError) -> [UInt8]? {
        // nil: absent; .some(nil): on disk; .some(.some(value)): in the cache.
        let inMemory = try withCurrentVersion(of: key) { version throws(EngineError) -> [UInt8]? in
            if case .cached(let value) = version { return value }
            return nil
        }
        switch inMemory {
        case nil: return nil
        case .some(.some(let value)): return value
        case .some(nil):
            return try await IOThreads.shared.run { () throws(EngineError) in try self.value(forKey: key) }
        }
    }

    /// The value of `key` as an asynchronous sequence of verified chunks (of at most 1 MiB), or
    /// nil when the key is absent: a blob is never loaded whole, and no chunk is read before it
    /// is asked for. An inline value comes as one chunk.
    ///
    /// Looking the key up and opening its blob (header and chunk table checked), and then each
    /// chunk's `pread`, checksum and inflation, run on the engine's I/O threads while the calling
    /// task is suspended. The content checksum of the whole value is checked with the last chunk.
    ///
    /// - Throws: the same ``EngineError`` as ``valueStream(forKey:)``; the sequence's iteration
    ///   throws ``EngineError/Code/corruption`` for a damaged chunk, as ``ValueStream/next()`` does.
    public func valueChunks(forKey key: [UInt8]) async throws(EngineError) -> ValueChunks? {
        try await IOThreads.shared.run { () throws(EngineError) in
            try self.valueStream(forKey: key).map(ValueChunks.init)
        }
    }
}

/// A value read as an asynchronous sequence of chunks (``LogStore/valueChunks(forKey:)``).
///
/// Each chunk is read and verified on the engine's I/O threads when the iteration asks for it
/// (the calling task is suspended meanwhile), and the whole value's checksum is verified with the
/// last chunk; a chunk that fails its checks is never returned. After a failure, asking again
/// fails the same way. Each iteration starts again from the first chunk.
public struct ValueChunks: AsyncSequence, Sendable {
    /// A chunk of the value: at most 1 MiB, verified.
    public typealias Element = [UInt8]
    /// Iterating fails only with the engine's error.
    public typealias Failure = EngineError

    private let stream: ValueStream
    /// The value's length in bytes.
    public var length: UInt64 { stream.length }

    init(_ stream: ValueStream) { self.stream = stream }

    /// An iterator that starts at the value's first chunk.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: stream) }

    /// Reads the chunks of a ``ValueChunks`` in order.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        /// A chunk of the value: at most 1 MiB, verified.
        public typealias Element = [UInt8]
        /// Iterating fails only with the engine's error.
        public typealias Failure = EngineError

        private var stream: ValueStream

        init(stream: ValueStream) { self.stream = stream }

        /// The next chunk, read and verified on one of the engine's I/O threads, or nil after
        /// the last.
        ///
        /// - Throws: ``EngineError/Code/corruption`` naming the blob file when the chunk (or, at
        ///   the end, the whole value) fails its checksum.
        public mutating func next() async throws(EngineError) -> [UInt8]? {
            let current = stream
            let (chunk, advanced) = await IOThreads.shared.runInfallible {
                () -> (Result<[UInt8]?, EngineError>, ValueStream) in
                var stream = current
                return (Result { () throws(EngineError) in try stream.next() }, stream)
            }
            stream = advanced
            return try chunk.get()
        }

        /// The next chunk, as ``next()``; the chunk is read on one of the engine's I/O threads
        /// whatever `actor` is.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(EngineError) -> [UInt8]? {
            try await next()
        }
    }
}
