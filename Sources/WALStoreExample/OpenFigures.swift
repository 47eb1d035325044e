import Engine
import Glibc

/// Figures d, e and f, all from one store of `records` records built in commits of 1,000:
/// d. the time `LogStore.open` takes to replay it (median of 3), and, after `compact()`, to load
///    it from hint files (median of 3);
/// e. bytes on disk per record against raw key + value bytes;
/// f. the index's heap bytes per key, measured with glibc's `mallinfo2()` around an open.
struct OpenFigure {
    var records: Int
    var rawBytes: Int
    /// Commit time with `.none` plus the closing sync (making the records is not counted).
    var buildTime: Duration
    /// The three timed opens, sorted.
    var openTimes: [Duration]
    /// The time `compact()` took, and the three timed opens after it (from hint files), sorted.
    var compactionTime: Duration
    var hintOpenTimes: [Duration]
    var bytesOnDisk: UInt64
    var segments: Int
    var keyCount: Int
    /// Heap growth over one open; nil when glibc has no `mallinfo2` (before 2.33).
    var heapGrowth: HeapUsage?
    var engineEstimate: Int

    var medianOpen: Duration { openTimes[openTimes.count / 2] }
    var medianHintOpen: Duration { hintOpenTimes[hintOpenTimes.count / 2] }
    var replayRate: Double { Double(records) / medianOpen.seconds }
    var diskPerRecord: Double { Double(bytesOnDisk) / Double(keyCount) }
    var rawPerRecord: Double { Double(rawBytes) / Double(records) }
    var measuredBytesPerKey: Double? { heapGrowth.map { Double($0.total) / Double(keyCount) } }

    static func measure(records: Int, under parent: String) throws -> OpenFigure {
        let directory = try TemporaryDirectory(under: parent, label: "open")
        defer { directory.remove() }
        let (rawBytes, buildTime) = try build(records: records, in: directory.path)

        var openTimes: [Duration] = []
        for _ in 0..<3 {
            var store: LogStore?
            openTimes.append(try timed { store = try LogStore.open(at: directory.path) })
            try store?.close()
        }

        let before = HeapUsage.now()
        let store = try LogStore.open(at: directory.path)
        let after = HeapUsage.now()
        let growth = after.flatMap { after in before.map { after - $0 } }
        defer { try? store.close() }
        let statistics = store.statistics
        let compactionTime = try timed { try store.compact() }
        try store.close()

        var hintOpenTimes: [Duration] = []
        for _ in 0..<3 {
            var store: LogStore?
            hintOpenTimes.append(try timed { store = try LogStore.open(at: directory.path) })
            precondition(store?.statistics.keyCount == statistics.keyCount, "the compacted store lost keys")
            try store?.close()
        }

        return OpenFigure(
            records: records, rawBytes: rawBytes, buildTime: buildTime, openTimes: openTimes.sorted(),
            compactionTime: compactionTime, hintOpenTimes: hintOpenTimes.sorted(),
            bytesOnDisk: statistics.bytesOnDisk, segments: statistics.segments.count,
            keyCount: statistics.keyCount, heapGrowth: growth, engineEstimate: statistics.indexBytesPerKey)
    }

    /// Writes `records` records in commits of 1,000 with `SyncMode.none`; `close()` syncs.
    /// Returns the raw bytes written and the time spent committing and closing.
    private static func build(records: Int, in path: String) throws -> (rawBytes: Int, time: Duration) {
        var options = LogStore.Options()
        options.syncMode = .none
        let store = try LogStore.open(at: path, options: options)
        defer { try? store.close() }
        var generator = RecordGenerator(seed: 0xD)
        var rawBytes = 0
        var time = Duration.zero
        var remaining = records
        while remaining > 0 {
            var batch = WriteBatch()
            for record in generator.next(min(1_000, remaining)) {
                batch.put(record.key, record.value)
                rawBytes += record.rawBytes
            }
            remaining -= batch.count
            time += try timed { try store.commit(batch) }
        }
        time += try timed { try store.close() }
        return (rawBytes, time)
    }

    func report() {
        print("d. Open (replay) of \(Text.grouped(records)) records in \(segments) segment(s),"
            + " \(Text.fixed(Double(bytesOnDisk) / 1e6, 1)) MB on disk")
        print("   built with .none in commits of 1,000: \(Text.fixed(buildTime.seconds, 2)) s"
            + " (\(Text.rate(Double(records) / buildTime.seconds)) records/s, including the closing sync)")
        print("   LogStore.open  \(Text.fixed(medianOpen.seconds, 3)) s median of 3"
            + " (\(openTimes.map { Text.fixed($0.seconds, 3) }.joined(separator: " / ")) s),"
            + " \(Text.rate(replayRate)) records/s replayed (page cache warm)")
        print("   compact() \(Text.fixed(compactionTime.seconds, 2)) s; then LogStore.open from hint files"
            + " \(Text.fixed(medianHintOpen.seconds, 3)) s median of 3"
            + " (\(hintOpenTimes.map { Text.fixed($0.seconds, 3) }.joined(separator: " / ")) s)")
        print("e. Bytes on disk per record  \(Text.fixed(diskPerRecord, 1)) B"
            + "  vs raw key + value \(Text.fixed(rawPerRecord, 1)) B"
            + "  (on disk / raw = \(Text.fixed(diskPerRecord / rawPerRecord, 3)),"
            + " \(Text.fixed(rawPerRecord / diskPerRecord, 2))x compression)")
        if let heapGrowth, let measuredBytesPerKey {
            print("f. Index memory per key  \(Text.fixed(measuredBytesPerKey, 1)) B measured"
                + " (mallinfo2 growth over one open: \(Text.grouped(heapGrowth.arena)) B uordblks"
                + " + \(Text.grouped(heapGrowth.mmapped)) B hblkhd, / \(Text.grouped(keyCount)) keys)")
        } else {
            print("f. Index memory per key: not measured (this glibc has no mallinfo2)")
        }
        print("   statistics.indexBytesPerKey (engine estimate)  \(engineEstimate) B")
    }
}
