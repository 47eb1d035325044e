import BenchSupport

/// The figures of `readseq-cached` and `readrandom-cached` in nanoseconds: WALStore beside the
/// plain loop (the C table floor, ``TableFloor``), as a note under the table and a Markdown table.
enum CachedTableReport {
    /// The two workloads, with what their figure is per.
    static let workloads: [(Workload, words: String)] = [
        (.readseqCached, "full scan reading every key and value, ns per entry"),
        (.readrandomCached, "point read of a present key, ns per read"),
    ]

    /// Nanoseconds per operation of the row's median repetition.
    static func nanoseconds(_ row: ResultRow) -> Double {
        row.median.seconds * 1e9 / Double(max(1, row.median.operations))
    }

    /// The note: the table read, both figures of both contenders, and any table cache miss in
    /// WALStore's timed passes (every block is meant to be cached).
    static func notes(_ rows: [ResultRow]) -> [String] {
        let ran = workloads.filter { rows.row($0.0, subject) != nil || rows.row($0.0, plainLoop) != nil }
        guard !ran.isEmpty else { return [] }
        var lines: [String] = []
        let floorRow = ran.lazy.compactMap { rows.row($0.0, plainLoop) }.first
        var header = "readseq-cached, readrandom-cached: the store of N records compacted into one table"
        if let f = floorRow?.median.figures {
            header += " (\(TableFormat.bytes(UInt64(f[Figure.tableBytes] ?? 0))), \(TableFormat.count(f[Figure.tableBlocks] ?? 0)) data blocks, "
                + "\(TableFormat.count(f[Figure.zlibBlocks] ?? 0)) of them zlib, \(TableFormat.bytes(UInt64(f[Figure.inflatedBytes] ?? 0))) inflated)"
        }
        let figures = ran.map { workload, _ -> String in
            let mine = rows.row(workload, subject).map { TableFormat.micros(nanoseconds($0)) + " ns" } ?? "–"
            let floor = rows.row(workload, plainLoop).map { TableFormat.micros(nanoseconds($0)) + " ns" } ?? "–"
            var text = "\(workload.rawValue) WALStore \(mine), plain loop \(floor)"
            if let a = rows.row(workload, subject), let b = rows.row(workload, plainLoop) {
                text += " (WALStore takes \(TableFormat.ratio(nanoseconds(a) / max(1e-9, nanoseconds(b)))) the floor's time)"
            }
            return text
        }
        lines.append(header + ", every block in WALStore's table cache; plain loop = a C decode of that table's blocks, "
            + "inflated in memory beforehand: " + figures.joined(separator: "; "))
        for (workload, _) in ran {
            guard let row = rows.row(workload, subject) else { continue }
            let misses = row.median.figures[Figure.tableCacheMisses] ?? 0
            if misses > 0 {
                lines.append("WARNING: \(workload.rawValue): WALStore's timed pass missed its table cache \(TableFormat.count(misses)) times: "
                    + "not every block was cached, so the row is not a cached read")
            }
        }
        return lines
    }

    /// The Markdown table: one row per workload that ran, both contenders' ns per operation and
    /// WALStore's time ÷ the plain loop's (the inverse of the text table's ops/s ratio, which
    /// rounds to 0.01x here).
    static func markdown(_ rows: [ResultRow]) -> [String] {
        let ran = workloads.filter { rows.row($0.0, subject) != nil || rows.row($0.0, plainLoop) != nil }
        guard !ran.isEmpty else { return [] }
        let records = ran.lazy.compactMap { (rows.row($0.0, subject) ?? rows.row($0.0, plainLoop))?.median.figures[Figure.records] }.first ?? 0
        var lines = [
            "| cached reads of the store of \(TableFormat.count(records)) records compacted into one table | WALStore | plain loop (C decode of the table) | WALStore's time ÷ plain loop's |",
            "|---|---:|---:|---:|",
        ]
        for (workload, words) in ran {
            let mine = rows.row(workload, subject)
            let floor = rows.row(workload, plainLoop)
            var cells = ["\(workload.rawValue): \(words)"]
            cells.append(mine.map { TableFormat.micros(nanoseconds($0)) } ?? "")
            cells.append(floor.map { TableFormat.micros(nanoseconds($0)) } ?? "")
            cells.append(mine.flatMap { mine in floor.map { TableFormat.ratio(nanoseconds(mine) / max(1e-9, nanoseconds($0))) } } ?? "")
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines
    }
}
