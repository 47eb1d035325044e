#if canImport(Glibc)
import Glibc
#endif
import BenchSupport

/// `walstore-bench`: WALStore against SQLite (WAL; FULL and NORMAL; both table layouts) and the
/// plain loop that writes WALStore's bytes with its syncs (and, for the cached reads of a
/// compacted store, decodes its table file in C), on the same seeded data. See
/// `Benchmarks/README.md`.

let subject = "WALStore"
let sqliteFullRowid = SQLiteContender.name(.full, .rowid)
let sqliteFullWithoutRowid = SQLiteContender.name(.full, .withoutRowid)
let sqliteNormalRowid = SQLiteContender.name(.normal, .rowid)
let plainLoop = "plain loop"
let plainLoopAppending = "plain loop, appending"

/// The ratio column against SQLite: the faster of its two layouts at `synchronous=FULL`, per
/// workload.
let fasterSQLite = ReferenceGroup(
    name: "faster SQLite FULL", members: [sqliteFullRowid, sqliteFullWithoutRowid],
    labels: [sqliteFullRowid: "rowid", sqliteFullWithoutRowid: "WITHOUT ROWID"])

/// The goal of `open`: open plus the first point read of this many records within this factor of
/// the faster SQLite layout's.
let openGoalRecords = 100_000
let openGoalFactor = 2.0

/// The lines under the table: the concurrent workload against one connection, compression, bytes
/// per record, what the plain loop wrote, and the figures of WALStore's own workloads.
func notes(_ rows: [ResultRow], _ data: DataSet) -> [String] {
    var lines: [String] = []
    if let concurrent = rows.row(.fillsyncConcurrent, subject),
       let baseline = rows.fastest(.fillsync, among: fasterSQLite.members) {
        let ratio = concurrent.median.operationsPerSecond / baseline.median.operationsPerSecond
        lines.append(
            "fillsync-concurrent baseline: WALStore with 8 threads \(TableFormat.count(concurrent.median.operationsPerSecond)) ops/s "
                + "vs \(baseline.contender) fillsync on one connection \(TableFormat.count(baseline.median.operationsPerSecond)) ops/s: "
                + TableFormat.ratio(ratio))
    }
    if let fill = rows.row(.fillseq, subject) {
        let raw = Double(fill.median.rawBytes)
        lines.append(
            "WALStore compression: fillseq stored \(TableFormat.bytes(UInt64(raw))) raw in \(TableFormat.bytes(fill.median.bytesOnDisk)) "
                + "(\(TableFormat.fixed(raw / Double(max(1, fill.median.bytesOnDisk)), 2))x smaller)")
    }
    let perRecord = [subject, sqliteFullRowid, sqliteFullWithoutRowid, sqliteNormalRowid].compactMap { name in
        rows.row(.fillseq, name).map { "\(name) \(TableFormat.fixed(Double($0.median.bytesOnDisk) / Double(max(1, $0.median.operations)), 1)) B" }
    }
    if !perRecord.isEmpty {
        let raw = Double(data.rawBytes) / Double(max(1, data.count))
        lines.append("bytes on disk per record after fillseq (raw key + value \(TableFormat.fixed(raw, 1)) B): "
            + perRecord.joined(separator: ", "))
    }
    let limits = rows.filter { $0.contender == plainLoop && $0.workload.writes }.map { row in
        "\(row.workload.rawValue) \(row.median.commits) × \(TableFormat.bytes(UInt64(row.median.bytesPerCommit)))"
    }
    if !limits.isEmpty {
        lines.append("plain loop (syncs × bytes per sync, from WALStore's growth per commit): " + limits.joined(separator: ", "))
    }
    return lines + compactedStoreNotes(rows) + CachedTableReport.notes(rows)
        + EngineNotes.lines(rows, subject: subject, plainFiles: plainLoop)
}

/// The figures of `open-compacted` and `memory-compacted`, WALStore beside SQLite's rowid table.
func compactedStoreNotes(_ rows: [ResultRow]) -> [String] {
    var lines: [String] = []
    let contenders = [subject, sqliteFullRowid]
    let opens = contenders.compactMap { name -> String? in
        guard let cold = rows.row(.openCompacted, name, part: Workload.coldPart),
              let warm = rows.row(.openCompacted, name, part: Workload.warmPart) else { return nil }
        return "\(name) \(TableFormat.fixed(cold.median.seconds * 1e3, 1)) ms cold, \(TableFormat.fixed(warm.median.seconds * 1e3, 1)) ms warm"
    }
    if let any = rows.first(where: { $0.workload == .openCompacted }) {
        let records = any.median.figures[Figure.records] ?? 0
        lines.append("open-compacted: open plus first point read of a store of \(TableFormat.count(records)) records written 1,000 per "
            + "commit and compacted (WALStore compact(), SQLite VACUUM): " + opens.joined(separator: "; "))
    }
    let memory = contenders.compactMap { name -> String? in
        guard let row = rows.row(.memoryCompacted, name) else { return nil }
        let f = row.median.figures
        return "\(name) \(TableFormat.fixed(f[Figure.residentPerKey] ?? 0, 1)) B/key (VmRSS +\(TableFormat.bytes(UInt64(max(0, f[Figure.residentGrowth] ?? 0))))), "
            + "anonymous \(TableFormat.fixed(f[Figure.rssPerKey] ?? 0, 1)) B/key, heap \(TableFormat.fixed(f[Figure.heapPerKey] ?? 0, 1)) B/key"
    }
    if !memory.isEmpty {
        let records = rows.first { $0.workload == .memoryCompacted }?.median.figures[Figure.records] ?? 0
        lines.append("memory-compacted: a fresh process's resident memory growth over open plus first point read of the compacted store "
            + "of \(TableFormat.count(records)) records, per record, after malloc_trim(0) and one unmeasured open and close: "
            + memory.joined(separator: "; "))
    }
    return lines
}

/// The goal of `open`, then those of WALStore's own workloads.
func goals(_ rows: [ResultRow], _ data: DataSet) -> [Goal] {
    var goals: [Goal] = []
    if let mine = rows.row(.open, subject), let theirs = rows.fastest(.open, among: fasterSQLite.members) {
        let name = "open plus first point read of \(TableFormat.count(Double(openGoalRecords))) records, page cache dropped"
        let target = "≤ \(TableFormat.fixed(openGoalFactor, 0))x the faster SQLite layout's"
        let factor = mine.median.seconds / max(1e-9, theirs.median.seconds)
        let measured = "\(TableFormat.fixed(mine.median.seconds * 1e3, 1)) ms = \(TableFormat.ratio(factor)) "
            + "\(theirs.contender)'s \(TableFormat.fixed(theirs.median.seconds * 1e3, 1)) ms"
        if data.count == openGoalRecords {
            goals.append(.judged(name, target: target, measured: measured, met: factor <= openGoalFactor))
        } else {
            goals.append(.notJudged(name, target: target, measured: measured + " for \(TableFormat.count(Double(data.count))) records",
                because: "the target is for \(TableFormat.count(Double(openGoalRecords))) records: the default run"))
        }
    }
    return goals + throughputGoals(rows) + compactedStoreGoals(rows) + EngineNotes.goals(rows, subject: subject, plainFiles: plainLoop)
}

/// The key–value targets: WALStore's ops/s ÷ the faster SQLite FULL layout's, per workload (for
/// `readmissing`, SQLite FULL rowid's: the only layout it runs).
let throughputTargets: [(Workload, part: String?, words: String, factor: Double)] = [
    (.fillseq, nil, "fillseq (1,000 records per durable commit)", 2.0),
    (.fillsync, nil, "fillsync (one record per durable commit)", 1.3),
    (.readseq, nil, "readseq (every value, key order)", 1.0),
    (.readrandomCold, Workload.coldFirstReadsPart, "readrandom, cold, first 1,000 reads after reopen", 1.0),
    (.readrandomWarm, nil, "readrandom, warm", 2.0),
    (.readmissing, nil, "readmissing (point reads of absent keys)", 2.0),
]

func throughputGoals(_ rows: [ResultRow]) -> [Goal] {
    throughputTargets.compactMap { workload, part, words, factor in
        let members = workload == .readmissing ? [sqliteFullRowid] : fasterSQLite.members
        guard let mine = rows.row(workload, subject, part: part), let theirs = rows.fastest(workload, among: members, part: part) else {
            return nil
        }
        let ratio = mine.median.operationsPerSecond / max(1e-9, theirs.median.operationsPerSecond)
        return .judged(
            "\(words), ops/s", target: "≥ \(TableFormat.ratio(factor)) \(theirs.contender)'s",
            measured: "\(TableFormat.ratio(ratio)) (\(TableFormat.count(mine.median.operationsPerSecond)) against "
                + "\(TableFormat.count(theirs.median.operationsPerSecond)))",
            met: ratio >= factor)
    }
}

/// The compacted store's targets: its open of 1,000,000 records cold, its memory per key, and its
/// bytes on disk against SQLite FULL rowid's after VACUUM.
let compactedOpenGoalRecords = 1_000_000
let compactedOpenGoalSeconds = 0.010
let compactedMemoryGoalBytesPerKey = 8.0
let compactedBytesGoalRatio = 0.4

func compactedStoreGoals(_ rows: [ResultRow]) -> [Goal] {
    var goals: [Goal] = []
    if let cold = rows.row(.openCompacted, subject, part: Workload.coldPart) {
        let records = Int(cold.median.figures[Figure.records] ?? 0)
        let name = "open plus first point read of \(TableFormat.count(Double(compactedOpenGoalRecords))) compacted records, page cache dropped"
        let target = "≤ \(TableFormat.fixed(compactedOpenGoalSeconds * 1e3, 0)) ms"
        let measured = "\(TableFormat.fixed(cold.median.seconds * 1e3, 1)) ms"
        if records == compactedOpenGoalRecords {
            goals.append(.judged(name, target: target, measured: measured, met: cold.median.seconds <= compactedOpenGoalSeconds))
        } else {
            goals.append(.notJudged(name, target: target, measured: measured + " for \(TableFormat.count(Double(records))) records",
                because: "the target is for \(TableFormat.count(Double(compactedOpenGoalRecords))) records: --full or --workloads open-compacted"))
        }
        if let theirs = rows.row(.openCompacted, sqliteFullRowid, part: Workload.coldPart), theirs.median.bytesOnDisk > 0 {
            let ratio = Double(cold.median.bytesOnDisk) / Double(theirs.median.bytesOnDisk)
            goals.append(.judged(
                "bytes on disk of the compacted store ÷ SQLite FULL rowid's after VACUUM", target: "≤ \(TableFormat.ratio(compactedBytesGoalRatio))",
                measured: "\(TableFormat.ratio(ratio)) (\(TableFormat.bytes(cold.median.bytesOnDisk)) against \(TableFormat.bytes(theirs.median.bytesOnDisk)))",
                met: ratio <= compactedBytesGoalRatio))
        }
    }
    if let memory = rows.row(.memoryCompacted, subject) {
        let perKey = memory.median.figures[Figure.residentPerKey] ?? 0
        goals.append(.judged(
            "memory per key of the compacted store, a fresh process's resident growth over open plus first read",
            target: "≤ \(TableFormat.fixed(compactedMemoryGoalBytesPerKey, 0)) B", measured: "\(TableFormat.fixed(perKey, 1)) B",
            met: perKey <= compactedMemoryGoalBytesPerKey))
    }
    if let before = rows.row(.compact, subject, part: "commits before"), let during = rows.row(.compact, subject, part: "commits during") {
        let without = (before.median.figures[Figure.commit + "LongestMicroseconds"] ?? 0) / 1e3
        let with = (during.median.figures[Figure.commit + "LongestMicroseconds"] ?? 0) / 1e3
        goals.append(.judged(
            "longest one-record durable commit during compact() ÷ the longest without", target: "≤ 2.00x",
            measured: "\(TableFormat.ratio(with / max(1e-9, without))) (\(TableFormat.fixed(with, 1)) ms against \(TableFormat.fixed(without, 1)) ms)",
            met: with <= 2 * without))
    }
    return goals
}

let bench = BenchDescription(
    tool: "walstore-bench",
    title: "walstore-bench: WALStore vs SQLite \(SQLiteContender.version) (both table layouts) vs a plain write + fdatasync loop",
    available: Workload.allCases,
    defaults: Workload.allCases,
    references: [fasterSQLite.name, plainLoop],
    columnTitles: [fasterSQLite.name: "vs faster SQLite FULL", plainLoop: "vs plain loop"],
    referenceGroups: [fasterSQLite],
    legend: [
        "contenders: WALStore default options (durable: fdatasync per commit, zlib 3 in 32 KiB blocks, 32 MiB value cache "
            + "+ 32 MiB block cache); SQLite WAL mode, 64 MiB page cache, prepared statements, BEGIN/COMMIT per batch, "
            + "8 connections for fillsync-concurrent, table kv(k BLOB PRIMARY KEY, v BLOB) as a rowid table and WITHOUT ROWID, "
            + "synchronous=FULL (durable) for both, and NORMAL (not durable on power loss) for the rowid table",
        "ratios: vs faster SQLite FULL = WALStore ÷ the faster of the two FULL layouts on that workload (named in the cell); "
            + "vs plain loop = WALStore ÷ a write(2)+fdatasync loop writing WALStore's bytes with WALStore's syncs over a "
            + "zero-filled, preallocated file (overwrite in place): a floor for WALStore's format, not a bound for SQLite, which "
            + "writes other bytes; plain loop, appending = the same loop appending to a new file (each sync also writes the size); "
            + "for assets the plain loop is one plain file per blob (write, fsync, rename, fsync of the directory; read(2) in "
            + "1 MiB chunks, mmap); for readseq-cached and readrandom-cached it is a plain C decode, in place, of the one table "
            + "file WALStore's compact() wrote, every data block inflated in memory beforehand: a floor for WALStore's table "
            + "format, not a bound a real store reaches",
        "open-compacted, readmissing and memory-compacted run on WALStore and SQLite FULL rowid only, each on a store of its own "
            + "written 1,000 records per commit and compacted once (WALStore compact(), SQLite VACUUM) before the run's first use",
        "assets, compact, open-hints and index-memory run on WALStore's own API (blobs, compact(), tables, statistics), "
            + "compact, open-hints and index-memory with LogStore.Options.compaction = .manual",
        "readseq-cached and readrandom-cached run on WALStore and the plain loop, on a copy of the store of N records "
            + "compacted into one table; WALStore opens it with its table block cache raised to twice the raw data "
            + "(at least the default 32 MiB) and reads everything once, untimed, so that every block is cached",
    ],
    versions: [
        sqliteFullRowid: SQLiteContender.version, sqliteFullWithoutRowid: SQLiteContender.version,
        sqliteNormalRowid: SQLiteContender.version,
    ],
    makeContenders: { _ in
        let walStore = WALStoreContender(name: subject)
        return [
            walStore,
            SQLiteContender(synchronous: .full, layout: .rowid),
            SQLiteContender(synchronous: .full, layout: .withoutRowid),
            SQLiteContender(synchronous: .normal, layout: .rowid),
            PhysicalLimit(name: plainLoop, reference: subject, preallocated: true, measuresAssets: true),
            PhysicalLimit(name: plainLoopAppending, reference: subject, preallocated: false, measuresAssets: false),
            TableFloor(name: plainLoop, reference: walStore),
        ]
    },
    notes: notes,
    goals: goals,
    appendix: { rows, data, goals in
        Markdown.tables(rows, data, goals)
    })

exit(BenchMain.run(bench, arguments: Array(CommandLine.arguments.dropFirst())))
