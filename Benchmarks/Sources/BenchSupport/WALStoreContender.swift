import Engine

/// WALStore through its public API: one `WriteBatch` per commit, `value(forKey:)`, and
/// `scan(prefix: [])` with `entry.value()`.
public struct WALStoreContender: StoreContender {
    public let name: String
    /// The options every store is opened with (the defaults: durable, 32 MiB value cache, 32 MiB log block cache, 32 MiB table block cache, zlib 3 in 32 KiB log blocks).
    public let options: LogStore.Options

    public init(name: String = "WALStore", options: LogStore.Options = LogStore.Options()) {
        self.name = name
        self.options = options
    }

    public func open(_ path: String) throws -> any BenchStore {
        WALStoreHandle(try LogStore.open(at: path, options: options))
    }

    /// All threads share one `LogStore`: concurrent commits are grouped under one sync.
    public func openConcurrent(_ path: String, threads: Int) throws -> any ConcurrentWriter {
        WALStoreHandle(try LogStore.open(at: path, options: options))
    }

    /// Every workload, those on the engine's own API included.
    public func supports(_ workload: Workload) -> Bool { true }

    /// `assets`, `compact`, `open-hints`, `index-memory`, `readrandom-cold` and `open-compacted`
    /// in several parts; `readseq-cached` and `readrandom-cached` (`WALStoreContender+CachedReads.swift`);
    /// every other workload through the shared code of `StoreContender+Workloads.swift`.
    public func measureParts(_ workload: Workload, in context: RunContext) throws -> [Measurement] {
        switch workload {
        case .assets: try measureAssets(in: context)
        case .compact: try measureCompaction(in: context)
        case .openHints: try measureOpenHints(in: context)
        case .indexMemory: try measureIndexMemory(in: context)
        case .readrandomCold: try measureColdReads(in: context)
        case .openCompacted: try measureCompactedOpen(in: context)
        case .readseqCached: [Measurement(try measureCachedScan(in: context))]
        case .readrandomCached: [Measurement(try measureCachedReads(in: context))]
        default: [Measurement(try measure(workload, in: context))]
        }
    }
}

/// An open `LogStore`. Sendable: it holds only the (Sendable) store.
final class WALStoreHandle: BenchStore, ConcurrentWriter {
    let store: LogStore

    init(_ store: LogStore) {
        self.store = store
    }

    func put(_ records: ArraySlice<Record>) throws {
        var batch = WriteBatch()
        for record in records { batch.put(record.key, record.value) }
        try store.commit(batch)
    }

    func put(_ record: Record, thread: Int) throws {
        var batch = WriteBatch()
        batch.put(record.key, record.value)
        try store.commit(batch)
    }

    func delete(_ records: ArraySlice<Record>) throws {
        var batch = WriteBatch()
        for record in records { batch.delete(record.key) }
        try store.commit(batch)
    }

    func valueLength(_ key: [UInt8]) throws -> Int? {
        // The value lent in place (as SQLite's column blob is): no copy.
        try store.withValue(forKey: key) { (bytes: UnsafeRawBufferPointer) -> Int in bytes.count }
    }

    func scanAll() throws -> (count: Int, bytes: Int) {
        var count = 0
        var bytes = 0
        // Each entry lent in place (as SQLite's column blobs are): nothing copied.
        var cursor = try store.scan(prefix: [])
        while let length = try cursor.withNext({ (entry) throws(EngineError) in try entry.withValue { entry.key.count + $0.count } }) {
            count += 1
            bytes += length
        }
        return (count, bytes)
    }

    func settle() throws {}

    func compact() throws {
        _ = try store.compact()
    }

    func close() throws {
        try store.close()
    }
}
