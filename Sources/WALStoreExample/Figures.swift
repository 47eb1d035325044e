import Engine
import Glibc

/// How much work each figure does.
struct Workload {
    var name: String
    /// a. durable single-record commits.
    var singleCommits: Int
    /// b. durable commits of `recordsPerCommit` records.
    var batchCommits: Int
    var recordsPerCommit = 1_000
    /// c. reads per pass.
    var pointReads: Int
    /// d–f. records in the store that is reopened.
    var openRecords: Int

    static let full = Workload(name: "full", singleCommits: 2_000, batchCommits: 200, pointReads: 10_000, openRecords: 1_000_000)
    static let quick = Workload(name: "quick", singleCommits: 200, batchCommits: 10, pointReads: 2_000, openRecords: 20_000)
}

/// Part 2: the figures, each printed as it is measured, then a summary table.
func runFigures(_ workload: Workload, under parent: String) throws {
    print("== Figures (\(workload.name) workload) ==")
    printMachineFacts(parent: parent)
    print("")

    let single = try SingleCommitFigure.measure(commits: workload.singleCommits, under: parent)
    single.report()
    print("")

    let (batch, reads) = try measureBatchesAndReads(workload, under: parent)
    batch.report()
    print("")
    reads.report()
    print("")

    let open = try OpenFigure.measure(records: workload.openRecords, under: parent)
    open.report()
    print("")

    printSummary(single: single, batch: batch, reads: reads, open: open)
}

/// Figures b and c share one store: c reads the keys b wrote.
private func measureBatchesAndReads(
    _ workload: Workload, under parent: String
) throws -> (BatchFigure, PointReadFigure) {
    let directory = try TemporaryDirectory(under: parent, label: "batches")
    defer { directory.remove() }
    let plain = try TemporaryDirectory(under: parent, label: "plain")
    defer { plain.remove() }

    let store = try LogStore.open(at: directory.path)
    defer { try? store.close() }
    let (batch, keys) = try BatchFigure.measure(
        store: store, commits: workload.batchCommits, recordsPerCommit: workload.recordsPerCommit,
        plainLoopPath: plain.path + "/plain-loop")
    try store.close()

    let reads = try PointReadFigure.measure(directory: directory.path, keys: keys, reads: workload.pointReads)
    return (batch, reads)
}

/// The machine the figures come from.
private func printMachineFacts(parent: String) {
    var system = utsname()
    uname(&system)
    func field<T>(_ value: T) -> String {
        withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
    print("machine: \(sysconf(Int32(_SC_NPROCESSORS_ONLN))) online CPUs (nproc),"
        + " \(field(system.sysname)) \(field(system.release)) \(field(system.machine))")
    print("temporary directories under \(parent); every figure is from this one run, not an average")
    #if DEBUG
    print("WARNING: this is a debug build; build with -c release for meaningful figures")
    #endif
}

/// Every figure in one table.
private func printSummary(single: SingleCommitFigure, batch: BatchFigure, reads: PointReadFigure, open: OpenFigure) {
    let rows: [[String]] = [
        ["figure", "WALStore", "plain loop", "ratio"],
        ["a. durable 1-record commits/s", Text.rate(single.storeRate), Text.rate(single.plainRate),
         Text.fixed(single.storeRate / single.plainRate, 2)],
        ["   µs per commit", Text.fixed(1e6 / single.storeRate, 1), Text.fixed(1e6 / single.plainRate, 1), ""],
        ["b. batched records/s (\(Text.grouped(batch.recordsPerCommit))/commit)", Text.rate(batch.storeRecordRate),
         Text.rate(batch.plainRecordRate), Text.fixed(batch.storeRecordRate / batch.plainRecordRate, 2)],
        ["   MB/s raw key+value", Text.fixed(batch.storeRawMBps, 1), Text.fixed(batch.plainRawMBps, 1), ""],
        ["c. point reads/s, cached", Text.rate(reads.cachedRate), "", ""],
        ["   µs per cached read", Text.fixed(1e6 / reads.cachedRate, 2), "", ""],
        ["   point reads/s, cold", Text.rate(reads.coldRate), "", ""],
        ["   µs per cold read", Text.fixed(1e6 / reads.coldRate, 2), "", ""],
        ["d. open \(Text.grouped(open.records)) records, s", Text.fixed(open.medianOpen.seconds, 3), "", ""],
        ["   records replayed/s", Text.rate(open.replayRate), "", ""],
        ["   open after compact() (hint files), s", Text.fixed(open.medianHintOpen.seconds, 3), "", ""],
        ["e. bytes on disk per record", Text.fixed(open.diskPerRecord, 1), "", ""],
        ["   raw bytes per record", Text.fixed(open.rawPerRecord, 1), "",
         Text.fixed(open.diskPerRecord / open.rawPerRecord, 3)],
        ["f. index bytes per key (mallinfo2)", open.measuredBytesPerKey.map { Text.fixed($0, 1) } ?? "n/a", "", ""],
        ["   engine estimate (indexBytesPerKey)", String(open.engineEstimate), "", ""],
    ]
    let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
    print("== Summary ==")
    for (index, row) in rows.enumerated() {
        let cells = row.enumerated().map { column, cell in
            Text.pad(cell, widths[column], right: column > 0)
        }
        var line = cells.joined(separator: "  ")
        while line.last == " " { line.removeLast() }
        print(line)
        if index == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
    }
    print("ratio: WALStore / plain loop for a and b; bytes on disk / raw bytes for e")
}
