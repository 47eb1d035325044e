import Engine

/// The store of `readseq-cached` and `readrandom-cached`: a copy of the filled store of the data
/// set's N records (``RunContext/fixture(for:)``) compacted into one table, closed. Built once per
/// run, untimed; the plain loop's C floor reads its table file.
public struct CachedReadStore: Sendable {
    /// The store's directory.
    public var path: String
    /// Its one table file (`*.sst`).
    public var tablePath: String
    public var records: Int
    /// Every file of the closed store.
    public var bytesOnDisk: UInt64
    /// The table file's bytes.
    public var tableBytes: UInt64
}

extension WALStoreContender {
    /// The store of ``CachedReadStore``, built on first use and shared by both workloads (and the
    /// C floor, which asks this contender for it).
    public func cachedReadStore(in context: RunContext) throws -> CachedReadStore {
        try context.shared("cached reads " + name) { try buildCachedReadStore(in: context) }
    }

    private func buildCachedReadStore(in context: RunContext) throws -> CachedReadStore {
        let fixture = try context.fixture(for: self)
        context.progress("  compacting a copy of the \(name) store of \(context.data.count) records into one table (untimed)")
        let path = context.scratch.newStorePath(name + "-cached-reads")
        try StoreFiles.copyStore(from: fixture, to: path)
        let store = try LogStore.open(at: path, options: options)
        defer { try? store.close() }
        _ = try store.compact()
        let tables = store.statistics.tables
        try store.close()
        let files = StoreFiles.files(in: path).filter { $0.hasSuffix(".sst") }
        guard tables.count == 1, files.count == 1, let table = tables.first, table.entryCount == context.data.count else {
            throw BenchError("\(name): compact() left \(tables.count) tables (\(files.count) .sst files) in \(path), "
                + "expected one table of \(context.data.count) entries: the C floor reads one table")
        }
        return CachedReadStore(
            path: path, tablePath: files[0], records: table.entryCount, bytesOnDisk: StoreFiles.bytesOnDisk(path),
            tableBytes: StoreFiles.bytesOnDisk(path, suffix: ".sst"))
    }

    /// This contender's options with a table block cache of twice the data set's raw bytes (at
    /// least the default): room for every inflated block of the compacted store.
    func cachedReadOptions(_ data: DataSet) -> LogStore.Options {
        var options = options
        options.tableCacheCapacity = max(options.tableCacheCapacity, 2 * data.rawBytes)
        return options
    }

    /// `readseq-cached`: the compacted store opened, scanned once (untimed: every data block
    /// enters the table block cache), then scanned again, timed, reading every key and value
    /// (`scan(prefix: [])` stepped with `withNext`, each value lent by `withValue`, lengths summed
    /// and checked).
    public func measureCachedScan(in context: RunContext) throws -> Sample {
        let data = context.data
        let stored = try cachedReadStore(in: context)
        let handle = WALStoreHandle(try LogStore.open(at: stored.path, options: cachedReadOptions(data)))
        defer { try? handle.close() }
        try checkScan(try handle.scanAll(), data)
        let before = handle.store.statistics
        let (scanned, seconds) = try Stopwatch.time { try handle.scanAll() }
        let after = handle.store.statistics
        try checkScan(scanned, data)
        try handle.close()
        return Sample(
            seconds: seconds, operations: scanned.count, rawBytes: scanned.bytes, bytesOnDisk: stored.bytesOnDisk,
            figures: Self.cacheFigures(before, after, records: stored.records))
    }

    /// `readrandom-cached`: the compacted store opened and scanned once (untimed: every data
    /// block cached), one untimed pass of the N point reads of ``DataSet/readOrder``, then the
    /// same reads timed (`value(forKey:)`, each value's length checked).
    public func measureCachedReads(in context: RunContext) throws -> Sample {
        let data = context.data
        let stored = try cachedReadStore(in: context)
        let handle = WALStoreHandle(try LogStore.open(at: stored.path, options: cachedReadOptions(data)))
        defer { try? handle.close() }
        try checkScan(try handle.scanAll(), data)
        _ = try readAll(handle, data)
        let before = handle.store.statistics
        let (bytes, seconds) = try Stopwatch.time { try readAll(handle, data) }
        let after = handle.store.statistics
        try handle.close()
        return Sample(
            seconds: seconds, operations: data.readOrder.count, rawBytes: bytes, bytesOnDisk: stored.bytesOnDisk,
            figures: Self.cacheFigures(before, after, records: stored.records))
    }

    /// The point reads of ``DataSet/readOrder``, each value's length checked; key + value bytes.
    private func readAll(_ handle: WALStoreHandle, _ data: DataSet) throws -> Int {
        var bytes = 0
        for index in data.readOrder {
            let record = data.records[index]
            guard let length = try handle.valueLength(record.key), length == record.value.count else {
                throw BenchError("\(name): key #\(index) of the compacted store is missing or has a value of the wrong length")
            }
            bytes += record.key.count + length
        }
        return bytes
    }

    private func checkScan(_ scanned: (count: Int, bytes: Int), _ data: DataSet) throws {
        guard scanned.count == data.count, scanned.bytes == data.rawBytes else {
            throw BenchError("\(name): the scan of the compacted store found \(scanned.count) records of \(scanned.bytes) bytes, "
                + "expected \(data.count) of \(data.rawBytes)")
        }
    }

    /// The table cache's hits and misses over the timed pass, its bytes after it.
    private static func cacheFigures(_ before: LogStore.Statistics, _ after: LogStore.Statistics, records: Int) -> [String: Double] {
        [
            Figure.records: Double(records),
            Figure.tableCacheMisses: Double(after.tableCacheMisses - before.tableCacheMisses),
            Figure.tableCacheHits: Double(after.tableCacheHits - before.tableCacheHits),
            Figure.tableCacheBytes: Double(after.tableCacheBytes),
        ]
    }
}
