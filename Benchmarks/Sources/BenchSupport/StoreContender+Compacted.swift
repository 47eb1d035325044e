/// A closed store of ``WorkloadSizes/compactedRecords`` records, written 1,000 per durable commit
/// and then compacted (``BenchStore/compact()``): what `open-compacted`, `readmissing` and
/// `memory-compacted` open. One per contender, built once per run.
public struct CompactedStore: Sendable {
    public var path: String
    public var records: Int
    /// Key plus value bytes of the records.
    public var rawBytes: Int
    /// Every file of the closed store.
    public var bytesOnDisk: UInt64
    /// The record the first point read after an open asks for: the middle one written.
    public var probe: Record
}

extension StoreContender {
    /// The seed of the compacted store's records (``RecordStream``), the same for every contender.
    static var compactedSeed: UInt64 { 0x09E4_0000_0002 }
    /// The seed of `readmissing`'s absent keys.
    static var absentSeed: UInt64 { 0x09E4_0000_0003 }

    /// The store of ``CompactedStore``, built on first use and shared by the three workloads.
    public func compactedStore(in context: RunContext) throws -> CompactedStore {
        try context.shared("compacted " + name) { try buildCompactedStore(in: context) }
    }

    private func buildCompactedStore(in context: RunContext) throws -> CompactedStore {
        let records = context.sizes.compactedRecords
        context.progress("  building the \(name) store of \(records) records and compacting it (untimed)")
        let path = context.scratch.newStorePath(name + "-compacted")
        let store = try open(path)
        defer { try? store.close() }
        var stream = RecordStream(seed: Self.compactedSeed)
        var written = 0
        var rawBytes = 0
        var probe: Record?
        while written < records {
            let batch = stream.next(min(Workload.bulkBatchSize, records - written))
            if probe == nil, written + batch.count > records / 2 { probe = batch[records / 2 - written] }
            try store.put(batch[...])
            rawBytes += batch.reduce(0) { $0 + $1.rawBytes }
            written += batch.count
        }
        try store.compact()
        try store.settle()
        try store.close()
        return CompactedStore(path: path, records: records, rawBytes: rawBytes, bytesOnDisk: StoreFiles.bytesOnDisk(path), probe: probe!)
    }

    /// `open-compacted`: open plus the first point read (``CompactedStore/probe``, its length
    /// checked) of the compacted store, twice: with every file of the store dropped from the OS
    /// page cache first (part `cold`), then again right after (part `warm`: what the first open
    /// read is cached).
    public func measureCompactedOpen(in context: RunContext) throws -> [Measurement] {
        let stored = try compactedStore(in: context)
        try StoreFiles.dropPageCache(stored.path)
        let cold = try timedOpen(stored)
        let warm = try timedOpen(stored)
        return [(Workload.coldPart, cold), (Workload.warmPart, warm)].map { part, seconds in
            Measurement(part: part, Sample(
                seconds: seconds, operations: 1, rawBytes: stored.rawBytes, bytesOnDisk: stored.bytesOnDisk,
                figures: [Figure.records: Double(stored.records)]))
        }
    }

    /// Seconds to open `stored` and read its probe record.
    private func timedOpen(_ stored: CompactedStore) throws -> Double {
        let probe = stored.probe
        let (store, seconds) = try Stopwatch.time { () throws -> any BenchStore in
            let store = try open(stored.path)
            guard try store.valueLength(probe.key) == probe.value.count else {
                try? store.close()
                throw BenchError("\(name): the first point read after opening the compacted store found no value of the right length")
            }
            return store
        }
        try store.close()
        return seconds
    }

    /// `readmissing`: N point reads of keys of the same shape as the stored ones (16 random bytes
    /// from another seed) that are not in the compacted store, each checked to find nothing,
    /// after an untimed first pass over the same keys.
    public func measureReadMissing(in context: RunContext) throws -> Sample {
        let stored = try compactedStore(in: context)
        let keys = context.shared("absent keys") { () -> [[UInt8]] in
            var rng = SplitMix64(seed: Self.absentSeed)
            return (0..<context.data.count).map { _ in rng.bytes(16) }
        }
        let store = try open(stored.path)
        defer { try? store.close() }
        try readAbsent(store, keys)
        let (_, seconds) = try Stopwatch.time { try readAbsent(store, keys) }
        try store.close()
        return Sample(seconds: seconds, operations: keys.count, rawBytes: keys.count * 16, bytesOnDisk: stored.bytesOnDisk)
    }

    private func readAbsent(_ store: any BenchStore, _ keys: [[UInt8]]) throws {
        for key in keys where try store.valueLength(key) != nil {
            throw BenchError("\(name): a key that was never written reads back a value")
        }
    }

    /// `memory-compacted`: the compacted store opened, and its probe record read, in a fresh child
    /// process (``OpenMemoryProbe``): the growth of that process's resident memory per record.
    /// ops/s is records per second of that open (page cache not dropped).
    public func measureCompactedMemory(in context: RunContext) throws -> Sample {
        let stored = try compactedStore(in: context)
        let result = try OpenMemoryProbe.measure(contender: name, path: stored.path, probe: stored.probe)
        let keys = Double(stored.records)
        return Sample(
            seconds: result.seconds, operations: stored.records, rawBytes: stored.rawBytes, bytesOnDisk: stored.bytesOnDisk,
            figures: [
                Figure.records: keys,
                Figure.residentGrowth: Double(result.residentGrowth),
                Figure.residentPerKey: Double(result.residentGrowth) / keys,
                Figure.rssGrowth: Double(result.anonymousGrowth),
                Figure.rssPerKey: Double(result.anonymousGrowth) / keys,
                Figure.heapGrowth: Double(result.heapGrowth),
                Figure.heapPerKey: Double(result.heapGrowth) / keys,
            ])
    }
}
