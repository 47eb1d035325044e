#if canImport(Glibc)
import Glibc
#endif
import BenchSupport

/// `walstore-bench`: WALStore against SQLite (WAL, FULL and NORMAL) and the physical limit of
/// the disk, on the same seeded data. See `Benchmarks/README.md`.

let subject = "WALStore"
let sqliteFull = "SQLite FULL"
let sqliteNormal = "SQLite NORMAL"
let limit = "physical limit"
let preallocatedLimit = "limit, preallocated"

/// The lines under the table: the goal's baseline for the concurrent workload, compression, what
/// the physical limit wrote, and the figures of `assets`, `compact` and `open-hints`.
func notes(_ rows: [ResultRow], _ data: DataSet) -> [String] {
    var lines: [String] = []
    if let concurrent = rows.row(.fillsyncConcurrent, subject), let baseline = rows.row(.fillsync, sqliteFull) {
        let ratio = concurrent.median.operationsPerSecond / baseline.median.operationsPerSecond
        lines.append(
            "fillsync-concurrent baseline: WALStore with 8 threads \(TableFormat.count(concurrent.median.operationsPerSecond)) ops/s "
                + "vs SQLite FULL fillsync on one connection \(TableFormat.count(baseline.median.operationsPerSecond)) ops/s: "
                + TableFormat.ratio(ratio))
    }
    if let fill = rows.row(.fillseq, subject) {
        let raw = Double(fill.median.rawBytes)
        lines.append(
            "WALStore compression: fillseq stored \(TableFormat.bytes(UInt64(raw))) raw in \(TableFormat.bytes(fill.median.bytesOnDisk)) "
                + "(\(TableFormat.fixed(raw / Double(max(1, fill.median.bytesOnDisk)), 2))x smaller)")
    }
    let limits = rows.filter { $0.contender == limit && $0.workload.writes }.map { row in
        "\(row.workload.rawValue) \(row.median.commits) × \(TableFormat.bytes(UInt64(row.median.bytesPerCommit)))"
    }
    if !limits.isEmpty {
        lines.append("physical limit (syncs × bytes per sync, from WALStore's growth per commit): " + limits.joined(separator: ", "))
    }
    return lines + EngineNotes.lines(rows, subject: subject, plainFiles: limit)
}

let bench = BenchDescription(
    tool: "walstore-bench",
    title: "walstore-bench: WALStore vs SQLite \(SQLiteContender.version) vs the physical limit (write + fdatasync)",
    available: Workload.allCases,
    defaults: Workload.allCases,
    references: [sqliteFull, limit],
    columnTitles: [sqliteFull: "vs SQLite FULL", limit: "vs limit"],
    legend: [
        "contenders: WALStore default options (durable: fdatasync per commit, zlib 3 in 32 KiB blocks, 32 MiB value cache + 32 MiB block cache); "
            + "SQLite WAL mode, synchronous=FULL (durable) and NORMAL (not durable on power loss), 64 MiB page cache, "
            + "table kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID, prepared statements, BEGIN/COMMIT per batch, "
            + "8 connections for fillsync-concurrent; physical limit = write(2)+fdatasync loop appending to one file "
            + "(write workloads only), and for assets one plain file per blob (write, fsync, rename, fsync of the directory; "
            + "read(2) in 1 MiB chunks, mmap); limit, preallocated = the same loop over a file zero-filled beforehand; "
            + "assets, compact and open-hints run on WALStore's own API (blobs, compact(), hint files), compact and "
            + "open-hints with LogStore.Options.compaction = .manual",
    ],
    versions: [sqliteFull: SQLiteContender.version, sqliteNormal: SQLiteContender.version],
    makeContenders: { _ in
        [
            WALStoreContender(name: subject),
            SQLiteContender(name: sqliteFull, synchronous: .full),
            SQLiteContender(name: sqliteNormal, synchronous: .normal),
            PhysicalLimit(name: limit, reference: subject, preallocated: false),
            PhysicalLimit(name: preallocatedLimit, reference: subject, preallocated: true),
        ]
    },
    notes: notes)

exit(BenchMain.run(bench, arguments: Array(CommandLine.arguments.dropFirst())))
