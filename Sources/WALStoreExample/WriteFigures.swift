import Engine

/// Figure a: durable single-record commits, beside a plain loop that appends the same frame size
/// with `write` + `fdatasync` per iteration.
struct SingleCommitFigure {
    var commits: Int
    /// Growth of `bytesOnDisk` per commit: the frame the store appends.
    var bytesPerCommit: Int
    var storeTime: Duration
    var plainTime: Duration

    var storeRate: Double { Double(commits) / storeTime.seconds }
    var plainRate: Double { Double(commits) / plainTime.seconds }

    static func measure(commits: Int, under parent: String) throws -> SingleCommitFigure {
        let directory = try TemporaryDirectory(under: parent, label: "commits")
        defer { directory.remove() }
        var generator = RecordGenerator(seed: 0xA)
        let records = generator.next(commits)

        let store = try LogStore.open(at: directory.path)  // LogStore.SyncMode.durable is the default
        defer { try? store.close() }
        let before = store.statistics.bytesOnDisk
        let storeTime = try timed {
            for record in records {
                try store.write { batch in batch.put(record.key, record.value) }
            }
        }
        let growth = Int(store.statistics.bytesOnDisk - before)
        try store.close()

        let bytesPerCommit = (growth + commits / 2) / commits
        let plainTime = try PlainLoop.appendAndSync(
            path: directory.path + "/plain-loop", appends: commits, bytesPerAppend: bytesPerCommit)
        return SingleCommitFigure(commits: commits, bytesPerCommit: bytesPerCommit, storeTime: storeTime, plainTime: plainTime)
    }

    func report() {
        print("a. Durable single-record commits: \(Text.grouped(commits)) commits of one ~300 B put, .durable")
        print("   frame appended per commit: \(bytesPerCommit) B (bytesOnDisk growth / commits)")
        print("   WALStore    \(Text.pad(Text.rate(storeRate), 9, right: true)) commits/s"
            + "  \(Text.fixed(1e6 / storeRate, 1)) µs/commit")
        print("   plain loop  \(Text.pad(Text.rate(plainRate), 9, right: true)) commits/s"
            + "  \(Text.fixed(1e6 / plainRate, 1)) µs/op  (write(2) \(bytesPerCommit) B + fdatasync)")
        print("   WALStore / plain loop: \(Text.fixed(storeRate / plainRate, 2))")
    }
}

/// Figure b: batched inserts, 1,000 records per durable commit, beside a plain loop that appends
/// the same bytes per commit with one `fdatasync` each.
struct BatchFigure {
    var commits: Int
    var recordsPerCommit: Int
    /// Key + value bytes of every record.
    var rawBytes: Int
    /// Growth of `bytesOnDisk` over all commits.
    var diskBytes: Int
    /// The time spent in `commit` (making the records is not counted).
    var storeTime: Duration
    var plainTime: Duration

    var records: Int { commits * recordsPerCommit }
    var bytesPerCommit: Int { (diskBytes + commits / 2) / commits }
    var storeRecordRate: Double { Double(records) / storeTime.seconds }
    var storeRawMBps: Double { Double(rawBytes) / 1e6 / storeTime.seconds }
    var plainRecordRate: Double { Double(records) / plainTime.seconds }
    var plainRawMBps: Double { Double(rawBytes) / 1e6 / plainTime.seconds }

    /// Commits to `store` (durable) and returns the figure with every key written, for figure c.
    static func measure(
        store: LogStore, commits: Int, recordsPerCommit: Int, plainLoopPath: String
    ) throws -> (figure: BatchFigure, keys: [[UInt8]]) {
        var generator = RecordGenerator(seed: 0xB)
        var keys: [[UInt8]] = []
        keys.reserveCapacity(commits * recordsPerCommit)
        var rawBytes = 0
        var storeTime = Duration.zero
        let before = store.statistics.bytesOnDisk
        for _ in 0..<commits {
            var batch = WriteBatch()
            for record in generator.next(recordsPerCommit) {
                batch.put(record.key, record.value)
                keys.append(record.key)
                rawBytes += record.rawBytes
            }
            storeTime += try timed { try store.commit(batch) }
        }
        let diskBytes = Int(store.statistics.bytesOnDisk - before)
        var figure = BatchFigure(
            commits: commits, recordsPerCommit: recordsPerCommit, rawBytes: rawBytes,
            diskBytes: diskBytes, storeTime: storeTime, plainTime: .zero)
        figure.plainTime = try PlainLoop.appendAndSync(
            path: plainLoopPath, appends: commits, bytesPerAppend: figure.bytesPerCommit)
        return (figure, keys)
    }

    func report() {
        print("b. Batched inserts: \(Text.grouped(commits)) durable commits of \(Text.grouped(recordsPerCommit))"
            + " records = \(Text.grouped(records)) records, \(Text.fixed(Double(rawBytes) / 1e6, 1)) MB raw")
        print("   appended per commit: \(Text.grouped(bytesPerCommit)) B on disk"
            + " (\(Text.grouped(rawBytes / commits)) B raw)")
        print("   WALStore    \(Text.pad(Text.rate(storeRecordRate), 9, right: true)) records/s"
            + "  \(Text.fixed(storeRawMBps, 1)) MB/s raw  \(Text.fixed(Double(commits) / storeTime.seconds, 1)) commits/s")
        print("   plain loop  \(Text.pad(Text.rate(plainRecordRate), 9, right: true)) records/s"
            + "  \(Text.fixed(plainRawMBps, 1)) MB/s raw-equivalent"
            + "  (write(2) \(Text.grouped(bytesPerCommit)) B + fdatasync per commit)")
        print("   WALStore / plain loop: \(Text.fixed(storeRecordRate / plainRecordRate, 2))")
    }
}
