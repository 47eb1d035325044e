import Engine

extension WALStoreContender {
    /// `index-memory`: opens `open-hints`' two stores (the log as written, and its compacted copy)
    /// each in a fresh child process (``MemoryProbe``) and measures how much that process's
    /// memory grew, per key. One part per store; ops/s is keys per second of that open (not
    /// dropped from the page cache: the open's time is `open-hints`' figure, this one's is memory).
    func measureIndexMemory(in context: RunContext) throws -> [Measurement] {
        let stores = try openStores(in: context)
        return try [(EnginePart.neverCompacted, stores.log), (EnginePart.compactedTables, stores.hinted)].map { part, path in
            let result = try MemoryProbe.measure(path: path)
            guard result.keys == stores.records else {
                throw BenchError("\(name): the probe opened \(result.keys) keys, not \(stores.records)")
            }
            return Measurement(part: part, Sample(
                seconds: result.openSeconds, operations: result.keys, rawBytes: stores.rawBytes,
                bytesOnDisk: StoreFiles.bytesOnDisk(path),
                figures: [
                    Figure.records: Double(result.keys),
                    Figure.rssGrowth: Double(result.rssGrowth),
                    Figure.heapGrowth: Double(result.heapGrowth),
                    Figure.rssPerKey: result.rssPerKey,
                    Figure.heapPerKey: result.heapPerKey,
                    Figure.engineEstimatePerKey: Double(result.engineEstimate),
                    Figure.valueCacheBytes: Double(result.cacheBytes),
                ]))
        }
    }
}
