import Engine
import Foundation

extension WALStoreContender {
    /// `compact`, once (``Workload/maximumRepetitions``), with `Options.compaction = .manual`:
    ///
    /// 1. *overwrite*: every key of the data set, round after round in a fixed random order, each
    ///    round with other values, 1,000 per durable commit, until `statistics.bytesOnDisk`
    ///    reaches ``WorkloadSizes/compactLogBytes`` (after at least one whole round);
    /// 2. *commits before*: a committer thread makes one-record durable commits (a random key, a
    ///    new value) back to back and a reader thread makes random `value(forKey:)` calls, for
    ///    ``WorkloadSizes/stallBaselineSeconds``;
    /// 3. *compact()* on this thread while both go on (*commits during*), then both stop;
    /// 4. untimed: a second `compact()` with nothing else running (it also takes in the commits
    ///    of step 3), every key the committer wrote and 1,000 random ones read back and compared
    ///    with their latest value, the same after close and reopen (from the tables), and a fresh
    ///    store loaded once with exactly the live records, for the space figures.
    func measureCompaction(in context: RunContext) throws -> [Measurement] {
        let data = context.data
        let sizes = context.sizes
        var options = self.options
        options.compaction = .manual
        let path = context.scratch.newStorePath(name + "-compact")
        defer { ScratchDirectory.delete(path) }
        let store = try LogStore.open(at: path, options: options)
        defer { try? store.close() }

        context.progress("  overwriting \(data.count) keys until the log holds \(TableFormat.bytes(UInt64(sizes.compactLogBytes)))")
        let (fill, fillSeconds) = try Stopwatch.time { try overwrite(store, data, untilLogBytes: sizes.compactLogBytes) }
        let filled = store.statistics

        // Steps 2 and 3: the committer and the reader run until the compaction has finished.
        let phase = StallPhase()
        let committer = BackgroundThread(name: "bench-committer") { try Self.commitLoop(store, data, phase) }
        let reader = BackgroundThread(name: "bench-reader") { try Self.readLoop(store, data, phase) }
        let clock = ContinuousClock()
        let started = clock.now
        var baselineSeconds = 0.0
        var before = filled
        var filesBefore: UInt64 = 0
        let compaction = Result { () throws -> (LogStore.Statistics.Compaction, Double) in
            Thread.sleep(forTimeInterval: sizes.stallBaselineSeconds)
            before = store.statistics
            filesBefore = StoreFiles.bytesOnDisk(path) - before.preallocatedBytes
            baselineSeconds = Stopwatch.seconds(started.duration(to: clock.now))
            phase.enter(.compacting)
            context.progress("  compacting \(TableFormat.bytes(before.bytesOnDisk)) while committing and reading")
            return try Stopwatch.time { try store.compact() }
        }
        phase.enter(.finished)
        let committed = Result { try committer.join() }
        let read = Result { try reader.join() }
        let (report, compactSeconds) = try compaction.get()
        let commits = try committed.get()
        let reads = try read.get()
        let loaded = store.statistics
        let filesLoaded = StoreFiles.bytesOnDisk(path) - loaded.preallocatedBytes

        // Step 4.
        let (settle, settleSeconds) = try Stopwatch.time { try store.compact() }
        let after = store.statistics
        var latest = fill.latest
        for write in commits.writes { latest[write.key] = write.value }
        var rng = SplitMix64(seed: 0xC0_4AC7_C4EC)
        let checked = Array(Set(commits.writes.map(\.key) + (0..<min(1_000, data.count)).map { _ in rng.below(data.count) }))
        try verify(store, data, latest, keys: checked, when: "after compact()")
        try store.close()
        let filesAfter = StoreFiles.bytesOnDisk(path)
        let (reopened, reopenSeconds) = try Stopwatch.time { try LogStore.open(at: path, options: options) }
        defer { try? reopened.close() }
        try verify(reopened, data, latest, keys: checked, when: "after compact() and reopening")
        try reopened.close()
        let fresh = try freshStore(data, latest, options: options, in: context)

        func ratio(_ part: UInt64, _ whole: Int) -> Double { whole > 0 ? Double(part) / Double(whole) : 0 }
        func ratio(_ part: UInt64, _ whole: UInt64) -> Double { whole > 0 ? Double(part) / Double(whole) : 0 }
        let compactionFigures: [String: Double] = [
            Figure.logBytesTarget: Double(sizes.compactLogBytes),
            Figure.keys: Double(data.count),
            Figure.overwriteRounds: fill.rounds,
            Figure.bytesOnDiskBefore: Double(before.bytesOnDisk),
            Figure.bytesOnDiskLoaded: Double(loaded.bytesOnDisk),
            Figure.bytesOnDiskAfter: Double(after.bytesOnDisk),
            Figure.filesBefore: Double(filesBefore),
            Figure.filesLoaded: Double(filesLoaded),
            Figure.filesAfter: Double(filesAfter),
            Figure.freshFiles: Double(fresh.files),
            Figure.freshRatioBefore: ratio(filesBefore, fresh.files),
            Figure.freshRatioLoaded: ratio(filesLoaded, fresh.files),
            Figure.freshRatioAfter: ratio(filesAfter, fresh.files),
            Figure.engineSeconds: Stopwatch.seconds(report.duration),
            Figure.compactedBytesBefore: Double(report.bytesBefore),
            Figure.compactedBytesAfter: Double(report.bytesAfter),
            Figure.recordsWritten: Double(report.recordsWritten),
            Figure.tablesWritten: Double(report.tablesWritten),
            Figure.writeAmplification: after.writeAmplification,
            Figure.settleSeconds: settleSeconds,
            Figure.settleBytesBefore: Double(settle.bytesBefore),
            Figure.reopenSeconds: reopenSeconds,
            Figure.keysVerified: Double(checked.count),
        ]
        let phases: [(String, StallPhase.Phase, Double, UInt64)] = [
            (EnginePart.commitsBefore, .baseline, baselineSeconds, before.bytesOnDisk),
            (EnginePart.commitsDuring, .compacting, compactSeconds, loaded.bytesOnDisk),
        ]
        return [
            Measurement(part: EnginePart.overwrite, Sample(
                seconds: fillSeconds, operations: fill.records, rawBytes: fill.rawBytes, bytesOnDisk: filled.bytesOnDisk,
                commits: (fill.records + Workload.bulkBatchSize - 1) / Workload.bulkBatchSize)),
        ] + phases.map { part, phase, seconds, bytesOnDisk in
            let latencies = LatencySummary(commits.latencies[phase.rawValue])
            var figures = latencies.figures(Figure.commit)
            figures[Figure.phaseSeconds] = seconds
            figures[Figure.commitLongestAt] = commits.longestAt[phase.rawValue]
            figures[Figure.readsPerSecond] = seconds > 0 ? Double(reads.counts[phase.rawValue]) / seconds : 0
            figures[Figure.readLongestMicroseconds] = reads.longest[phase.rawValue] * 1e6
            return Measurement(part: part, Sample(
                seconds: latencies.total, operations: latencies.count, rawBytes: commits.rawBytes[phase.rawValue],
                bytesOnDisk: bytesOnDisk, commits: latencies.count, figures: figures))
        } + [
            Measurement(part: EnginePart.compaction, Sample(
                seconds: compactSeconds, operations: report.recordsWritten, rawBytes: Int(report.bytesBefore),
                bytesOnDisk: loaded.bytesOnDisk, figures: compactionFigures)),
        ]
    }

    /// What the overwrites of step 1 did.
    private struct Overwrites {
        /// The index (into the data set's records) of the value each key was last given.
        var latest: [Int]
        /// Records written, their key plus value bytes, and the rounds over every key.
        var records = 0
        var rawBytes = 0
        var rounds = 0.0
    }

    /// Step 1: round `r` gives key `k` the value of record `(k + r + 1) % N`.
    private func overwrite(_ store: LogStore, _ data: DataSet, untilLogBytes target: Int) throws -> Overwrites {
        let count = data.count
        var order = Array(0..<count)
        var rng = SplitMix64(seed: 0x0E_5701_7E)
        rng.shuffle(&order)
        var result = Overwrites(latest: Array(0..<count))
        var round = 0
        while true {
            for start in stride(from: 0, to: count, by: Workload.bulkBatchSize) {
                let end = min(start + Workload.bulkBatchSize, count)
                var batch = WriteBatch()
                for key in order[start..<end] {
                    let value = (key + round + 1) % count
                    batch.put(data.records[key].key, data.records[value].value)
                    result.latest[key] = value
                    result.rawBytes += data.records[key].key.count + data.records[value].value.count
                }
                _ = try store.commit(batch)
                result.records += end - start
                if round > 0, store.statistics.bytesOnDisk >= UInt64(target) {
                    result.rounds = Double(round) + Double(end) / Double(count)
                    return result
                }
            }
            round += 1
            if store.statistics.bytesOnDisk >= UInt64(target) {
                result.rounds = Double(round)
                return result
            }
        }
    }

    /// What the committer thread did, by ``StallPhase/Phase`` raw value (baseline, compacting).
    private struct CommitterLog: Sendable {
        var latencies: [[Double]] = [[], []]
        var rawBytes = [0, 0]
        /// When the phase's first commit started, and how long after it the longest one started
        /// (seconds): where in the phase the worst stall came.
        var firstStart: [ContinuousClock.Instant?] = [nil, nil]
        var longest = [0.0, 0.0]
        var longestAt = [0.0, 0.0]
        /// Every commit in order: the key's and the value's record index.
        var writes: [(key: Int, value: Int)] = []
    }

    /// The committer: one record per durable commit, back to back, until the phase is finished.
    private static func commitLoop(_ store: LogStore, _ data: DataSet, _ phase: StallPhase) throws -> CommitterLog {
        var log = CommitterLog()
        var rng = SplitMix64(seed: 0xC0_3317)
        let clock = ContinuousClock()
        while true {
            let now = phase.current
            if now == .finished { return log }
            let key = rng.below(data.count)
            let value = rng.below(data.count)
            var batch = WriteBatch()
            batch.put(data.records[key].key, data.records[value].value)
            let start = clock.now
            _ = try store.commit(batch)
            let seconds = Stopwatch.seconds(start.duration(to: clock.now))
            let first = log.firstStart[now.rawValue] ?? start
            log.firstStart[now.rawValue] = first
            if seconds > log.longest[now.rawValue] {
                log.longest[now.rawValue] = seconds
                log.longestAt[now.rawValue] = Stopwatch.seconds(first.duration(to: start))
            }
            log.latencies[now.rawValue].append(seconds)
            log.rawBytes[now.rawValue] += data.records[key].key.count + data.records[value].value.count
            log.writes.append((key, value))
        }
    }

    /// What the reader thread did, by ``StallPhase/Phase`` raw value.
    private struct ReaderLog: Sendable {
        var counts = [0, 0]
        /// The longest read, in seconds.
        var longest = [0.0, 0.0]
    }

    /// Point reads per millisecond the reader thread paces itself to: a busy app's read load,
    /// not a thread spinning on the index lock (which on 2 cores would also take the CPU the
    /// compaction and the committer need).
    static let readsPerMillisecond = 100

    /// The reader: random point reads in bursts of ``readsPerMillisecond``, one burst per
    /// millisecond, each read checked for a value of a plausible length (the committer changes
    /// values meanwhile), until the phase is finished.
    private static func readLoop(_ store: LogStore, _ data: DataSet, _ phase: StallPhase) throws -> ReaderLog {
        var log = ReaderLog()
        var rng = SplitMix64(seed: 0x2EAD_E2)
        let clock = ContinuousClock()
        let lengths = ValueGenerator.minimumLength...ValueGenerator.maximumLength
        var deadline = clock.now
        while true {
            let now = phase.current
            if now == .finished { return log }
            for _ in 0..<readsPerMillisecond {
                let key = rng.below(data.count)
                let start = clock.now
                let value = try store.value(forKey: data.records[key].key)
                let seconds = Stopwatch.seconds(start.duration(to: clock.now))
                guard let value, lengths.contains(value.count) else {
                    throw BenchError("key #\(key) reads back \(value.map { "\($0.count) bytes" } ?? "nothing") during compaction")
                }
                log.counts[now.rawValue] += 1
                log.longest[now.rawValue] = max(log.longest[now.rawValue], seconds)
            }
            // The next burst a millisecond after this one's start; after a stall, no catching up.
            deadline = max(deadline + .milliseconds(1), clock.now - .milliseconds(1))
            let wait = Stopwatch.seconds(clock.now.duration(to: deadline))
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
        }
    }

    /// Checks that the store holds every key and that each of `keys` reads back its latest value.
    private func verify(_ store: LogStore, _ data: DataSet, _ latest: [Int], keys: [Int], when: String) throws {
        let count = store.statistics.keyCount
        guard count == data.count else {
            throw BenchError("\(name): \(count) keys \(when), expected \(data.count)")
        }
        for key in keys {
            guard try store.value(forKey: data.records[key].key) == data.records[latest[key]].value else {
                throw BenchError("\(name): key #\(key) does not read back its latest value \(when)")
            }
        }
    }

    /// A new store holding exactly the live records (each key with its latest value), loaded
    /// 1,000 per commit and closed: its files' size, and its statistics before the close.
    private func freshStore(
        _ data: DataSet, _ latest: [Int], options: LogStore.Options, in context: RunContext
    ) throws -> (files: UInt64, statistics: LogStore.Statistics) {
        let path = context.scratch.newStorePath(name + "-fresh")
        defer { ScratchDirectory.delete(path) }
        let store = try LogStore.open(at: path, options: options)
        defer { try? store.close() }
        for start in stride(from: 0, to: data.count, by: Workload.bulkBatchSize) {
            var batch = WriteBatch()
            for key in start..<min(start + Workload.bulkBatchSize, data.count) {
                batch.put(data.records[key].key, data.records[latest[key]].value)
            }
            _ = try store.commit(batch)
        }
        let statistics = store.statistics
        try store.close()
        return (StoreFiles.bytesOnDisk(path), statistics)
    }
}
