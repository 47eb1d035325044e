/// The workloads, written once for every store contender.
extension StoreContender {
    /// `readrandom-cold` and `open-compacted` in their two parts (``measureColdReads(in:)``,
    /// ``measureCompactedOpen(in:)``); every other workload as ``measure(_:in:)``'s one sample.
    public func measureParts(_ workload: Workload, in context: RunContext) throws -> [Measurement] {
        switch workload {
        case .readrandomCold: try measureColdReads(in: context)
        case .openCompacted: try measureCompactedOpen(in: context)
        default: [Measurement(try measure(workload, in: context))]
        }
    }

    /// `readrandom-cold`: the store reopened with the OS page cache of its files dropped before
    /// and after the open (the open may read them back), then N point reads (uniform, with
    /// repeats). Two parts from that one pass: the first ``Workload/coldFirstReads`` reads on
    /// their own (part "first 1,000"), before the caches fill, and all N (no part), most of which
    /// find their pages already read by an earlier one.
    public func measureColdReads(in context: RunContext) throws -> [Measurement] {
        let data = context.data
        let path = try context.fixture(for: self)
        let bytesOnDisk = try context.fixtureSize(for: self)
        try StoreFiles.dropPageCache(path)
        let store = try open(path)
        defer { try? store.close() }
        try StoreFiles.dropPageCache(path)
        let first = min(Workload.coldFirstReads, data.readOrder.count)
        let (firstBytes, firstSeconds) = try Stopwatch.time { try readRandom(store, data, data.readOrder[..<first]) }
        let (restBytes, restSeconds) = try Stopwatch.time { try readRandom(store, data, data.readOrder[first...]) }
        return [
            Measurement(part: Workload.coldFirstReadsPart, Sample(
                seconds: firstSeconds, operations: first, rawBytes: firstBytes, bytesOnDisk: bytesOnDisk)),
            Measurement(Sample(
                seconds: firstSeconds + restSeconds, operations: data.readOrder.count, rawBytes: firstBytes + restBytes,
                bytesOnDisk: bytesOnDisk)),
        ]
    }

    public func measure(_ workload: Workload, in context: RunContext) throws -> Sample {
        let data = context.data
        switch workload {
        case .fillseq:
            return try measureFill(data.records, batchSize: Workload.bulkBatchSize, in: context)
        case .fillbatch100:
            return try measureFill(data.records, batchSize: 100, in: context)
        case .fillsync:
            return try measureFill(Array(data.syncRecords), batchSize: 1, in: context)
        case .fillsyncConcurrent:
            return try measureConcurrentFill(in: context)
        case .overwrite:
            let rawBytes = data.overwrites.reduce(0) { $0 + $1.rawBytes }
            return try measureOnFilledStore(data.overwrites, rawBytes: rawBytes, in: context) { store, records in
                try store.load(records, batchSize: Workload.bulkBatchSize)
            } verify: { store in
                let last = data.overwrites[data.overwrites.count - 1]
                guard try store.valueLength(last.key) == last.value.count else {
                    throw BenchError("\(name): an overwritten key does not read back its new value")
                }
            }
        case .delete:
            let keyBytes = data.records.reduce(0) { $0 + $1.key.count }
            return try measureOnFilledStore(data.records, rawBytes: keyBytes, in: context) { store, records in
                try store.deleteAll(records, batchSize: Workload.bulkBatchSize)
            } verify: { store in
                for record in [data.records[0], data.records[data.count - 1]] {
                    guard try store.valueLength(record.key) == nil else {
                        throw BenchError("\(name): a deleted key still reads back")
                    }
                }
            }
        case .readrandomWarm:
            let path = try context.fixture(for: self)
            let store = try open(path)
            defer { try? store.close() }
            _ = try readRandom(store, data)
            return try timedReadRandom(store, data, bytesOnDisk: try context.fixtureSize(for: self))
        case .readrandomCold:
            return try measureColdReads(in: context).first { $0.part == nil }!.sample
        case .readseq:
            let path = try context.fixture(for: self)
            let store = try open(path)
            defer { try? store.close() }
            let (scanned, seconds) = try Stopwatch.time { try store.scanAll() }
            guard scanned.count == data.count, scanned.bytes == data.rawBytes else {
                throw BenchError("\(name): the scan found \(scanned.count) records of \(scanned.bytes) bytes, "
                    + "expected \(data.count) of \(data.rawBytes)")
            }
            return Sample(seconds: seconds, operations: data.count, rawBytes: data.rawBytes,
                          bytesOnDisk: try context.fixtureSize(for: self))
        case .open:
            // Open plus the first point read, the same for every store: what an app waits for
            // before it shows its first record. Some stores read everything at open (WALStore
            // replays its log), others only on demand (SQLite reads its schema, then the pages
            // of the B-tree path to the key).
            let path = try context.fixture(for: self)
            try StoreFiles.dropPageCache(path)
            let probe = data.records[data.count / 2]
            let (store, seconds) = try Stopwatch.time { () throws -> any BenchStore in
                let store = try open(path)
                guard try store.valueLength(probe.key) == probe.value.count else {
                    try? store.close()
                    throw BenchError("\(name): the first point read after open found no value of the right length")
                }
                return store
            }
            try store.close()
            return Sample(seconds: seconds, operations: 1, rawBytes: data.rawBytes,
                          bytesOnDisk: try context.fixtureSize(for: self))
        case .openCompacted:
            return try measureCompactedOpen(in: context).first { $0.part == Workload.coldPart }!.sample
        case .readmissing:
            return try measureReadMissing(in: context)
        case .memoryCompacted:
            return try measureCompactedMemory(in: context)
        case .openHints, .indexMemory, .compact, .assets, .readseqCached, .readrandomCached:
            throw BenchError("\(name) does not run \(workload.rawValue): it needs WALStore's own API")
        }
    }

    /// Writes `records` into a new store, `batchSize` per commit, timing only the writes.
    private func measureFill(_ records: [Record], batchSize: Int, in context: RunContext) throws -> Sample {
        let path = context.scratch.newStorePath(name)
        defer { ScratchDirectory.delete(path) }
        try open(path).close()
        let before = StoreFiles.bytesOnDisk(path)
        let store = try open(path)
        defer { try? store.close() }
        let (_, seconds) = try Stopwatch.time { try store.load(records, batchSize: batchSize) }
        return try finishWrite(store, path: path, before: before, seconds: seconds, records: records,
                               rawBytes: records.reduce(0) { $0 + $1.rawBytes }, batchSize: batchSize)
    }

    /// Copies the filled store of ``RunContext/fixture(for:)`` to a new directory and opens it
    /// (untimed), then times `body` writing `records` (carrying `rawBytes`) to it. A copy of the
    /// closed store is the same as filling a fresh one and reopening it, in a fraction of the time.
    private func measureOnFilledStore(
        _ records: [Record], rawBytes: Int, in context: RunContext, _ body: (any BenchStore, [Record]) throws -> Void,
        verify: (any BenchStore) throws -> Void
    ) throws -> Sample {
        let path = context.scratch.newStorePath(name)
        defer { ScratchDirectory.delete(path) }
        try StoreFiles.copyStore(from: try context.fixture(for: self), to: path)
        let before = StoreFiles.bytesOnDisk(path)
        let store = try open(path)
        defer { try? store.close() }
        let (_, seconds) = try Stopwatch.time { try body(store, records) }
        try verify(store)
        return try finishWrite(store, path: path, before: before, seconds: seconds, records: records,
                               rawBytes: rawBytes, batchSize: Workload.bulkBatchSize)
    }

    /// The sample of a write workload: settle and close the store, then measure its files at rest
    /// (WALStore trims its preallocated tail at close; SQLite's WAL is checkpointed away) and
    /// their growth per commit since `before`, measured at rest too.
    private func finishWrite(
        _ store: any BenchStore, path: String, before: UInt64, seconds: Double, records: [Record],
        rawBytes: Int, batchSize: Int
    ) throws -> Sample {
        let commits = (records.count + batchSize - 1) / batchSize
        try store.settle()
        try store.close()
        let after = StoreFiles.bytesOnDisk(path)
        return Sample(
            seconds: seconds, operations: records.count, rawBytes: rawBytes, bytesOnDisk: after,
            commits: commits, bytesPerCommit: Self.growth(from: before, to: after, commits: commits))
    }

    /// Bytes per commit between two sizes (negative when the files shrank).
    private static func growth(from before: UInt64, to after: UInt64, commits: Int) -> Double {
        commits == 0 ? 0 : (Double(after) - Double(before)) / Double(commits)
    }

    /// `fillsync-concurrent`: 8 threads, record `i` written by thread `i % 8`, one per commit.
    private func measureConcurrentFill(in context: RunContext) throws -> Sample {
        let path = context.scratch.newStorePath(name)
        defer { ScratchDirectory.delete(path) }
        let threads = Workload.concurrentThreads
        try openConcurrent(path, threads: threads).close()
        let before = StoreFiles.bytesOnDisk(path)
        let writer = try openConcurrent(path, threads: threads)
        defer { try? writer.close() }
        let records = Array(context.data.syncRecords)
        let seconds = try ThreadGang.run(count: threads) { thread in
            for index in stride(from: thread, to: records.count, by: threads) {
                try writer.put(records[index], thread: thread)
            }
        }
        try writer.settle()
        try writer.close()
        let after = StoreFiles.bytesOnDisk(path)
        return Sample(
            seconds: seconds, operations: records.count, rawBytes: records.reduce(0) { $0 + $1.rawBytes },
            bytesOnDisk: after, commits: records.count,
            bytesPerCommit: Self.growth(from: before, to: after, commits: records.count))
    }

    /// One pass of `readrandom` over `order` (all of ``DataSet/readOrder`` by default), checking
    /// every value's length.
    private func readRandom(_ store: any BenchStore, _ data: DataSet, _ order: ArraySlice<Int>? = nil) throws -> Int {
        var bytes = 0
        for index in order ?? data.readOrder[...] {
            let record = data.records[index]
            guard let length = try store.valueLength(record.key), length == record.value.count else {
                throw BenchError("\(name): key #\(index) is missing or has a value of the wrong length")
            }
            bytes += record.key.count + length
        }
        return bytes
    }

    /// A timed pass of `readrandom`.
    private func timedReadRandom(_ store: any BenchStore, _ data: DataSet, bytesOnDisk: UInt64) throws -> Sample {
        let (bytes, seconds) = try Stopwatch.time { try readRandom(store, data) }
        return Sample(seconds: seconds, operations: data.readOrder.count, rawBytes: bytes, bytesOnDisk: bytesOnDisk)
    }
}
