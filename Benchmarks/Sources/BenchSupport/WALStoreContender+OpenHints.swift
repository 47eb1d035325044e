import Engine

extension WALStoreContender {
    /// `open-hints`: opens a store of ``WorkloadSizes/openRecords`` records (``RecordStream``,
    /// 1,000 per commit) with its files dropped from the OS page cache, twice per repetition:
    /// as written, so open loads the segment hints written as segments were sealed and at close
    /// (it replays no frame); and a copy of it after `compact()` and close, so open reads the
    /// table's footer, filter and index instead (and the hint of the segment the compaction
    /// left). Both stores are built once per run, untimed; each open is checked for the right
    /// key count.
    func measureOpenHints(in context: RunContext) throws -> [Measurement] {
        let options = openOptions
        let stores = try openStores(in: context)
        return try [(EnginePart.neverCompacted, stores.log), (EnginePart.compactedTables, stores.hinted)].map { part, path in
            try StoreFiles.dropPageCache(path)
            let (store, seconds) = try Stopwatch.time { try LogStore.open(at: path, options: options) }
            defer { try? store.close() }
            let statistics = store.statistics
            try store.close()
            guard statistics.keyCount == stores.records else {
                throw BenchError("\(name): the store of \(stores.records) records opened with \(statistics.keyCount) keys")
            }
            return Measurement(part: part, Sample(
                seconds: seconds, operations: 1, rawBytes: stores.rawBytes, bytesOnDisk: StoreFiles.bytesOnDisk(path),
                figures: [
                    Figure.records: Double(stores.records),
                    Figure.segments: Double(statistics.segments.count),
                    Figure.tables: Double(statistics.tables.count),
                ]))
        }
    }

    /// The options `open-hints` and `index-memory` open their stores with: the contender's, with
    /// compaction manual.
    var openOptions: LogStore.Options {
        var options = self.options
        options.compaction = .manual
        return options
    }

    /// The stores of ``buildOpenStores(options:in:)``, built on first use and shared by
    /// `open-hints` and `index-memory` for the whole run.
    func openStores(in context: RunContext) throws -> OpenStores {
        try context.shared("open-hints " + name) { try buildOpenStores(options: openOptions, in: context) }
    }

    /// The two closed stores of `open-hints`: the log as written, and a compacted copy.
    struct OpenStores {
        var log: String
        var hinted: String
        var records: Int
        /// Key plus value bytes of the records.
        var rawBytes: Int
    }

    func buildOpenStores(options: LogStore.Options, in context: RunContext) throws -> OpenStores {
        let records = context.sizes.openRecords
        context.progress("  building the \(name) store of \(records) records and a compacted copy (untimed)")
        let log = context.scratch.newStorePath(name + "-open-log")
        let store = try LogStore.open(at: log, options: options)
        defer { try? store.close() }
        var stream = RecordStream(seed: 0x09E4_0000_0001)
        var rawBytes = 0
        var written = 0
        while written < records {
            let batchRecords = stream.next(min(Workload.bulkBatchSize, records - written))
            var batch = WriteBatch()
            for record in batchRecords {
                batch.put(record.key, record.value)
                rawBytes += record.rawBytes
            }
            _ = try store.commit(batch)
            written += batchRecords.count
        }
        try store.close()

        let hinted = context.scratch.newStorePath(name + "-open-hints")
        try StoreFiles.copyStore(from: log, to: hinted)
        let copy = try LogStore.open(at: hinted, options: options)
        defer { try? copy.close() }
        let report = try copy.compact()
        try copy.close()
        guard report.tablesWritten > 0 else {
            throw BenchError("\(name): compact() of \(records) records wrote no table")
        }
        return OpenStores(log: log, hinted: hinted, records: records, rawBytes: rawBytes)
    }
}
