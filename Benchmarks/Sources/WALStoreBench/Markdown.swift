import BenchSupport

/// The README's tables, printed in Markdown at the end of a run so that README.md shows exactly
/// what the harness measured: the key–value table (one row per workload, ops/s of the median
/// repetition, ratios as in the text table), the goals, and WALStore's own figures.
enum Markdown {
    /// The contenders of the key–value table, in its column order.
    static let columns = [subject, sqliteFullRowid, sqliteFullWithoutRowid, sqliteNormalRowid, plainLoop]

    static func tables(_ rows: [ResultRow], _ data: DataSet, _ goals: [Goal]) -> [String] {
        var lines: [String] = []
        let keyValue = keyValueTable(rows, data)
        if !keyValue.isEmpty {
            lines.append("README tables (Markdown):")
            lines.append("")
            lines += keyValue
        }
        let cached = CachedTableReport.markdown(rows)
        if !cached.isEmpty {
            if lines.isEmpty { lines.append("README tables (Markdown):") }
            lines.append("")
            lines += cached
        }
        if !goals.isEmpty {
            if !lines.isEmpty { lines.append("") }
            lines += Goal.markdown(goals)
        }
        let own = EngineTables.markdown(rows, subject: subject, plainFiles: plainLoop)
        if !own.isEmpty {
            if !lines.isEmpty { lines.append("") }
            lines += own
        }
        return lines
    }

    /// One row per key–value workload (and part) that ran: each contender's ops/s (ms for
    /// `open` and `open-compacted`, bytes per record for `memory-compacted`), then WALStore ÷ the faster SQLite FULL layout (named) and ÷ the plain loop; and
    /// the bytes on disk per record after `fillseq`.
    static func keyValueTable(_ rows: [ResultRow], _ data: DataSet) -> [String] {
        let labels = rows.filter { !$0.workload.usesEngineAPI }.reduce(into: [(Workload, String?)]()) { list, row in
            if !list.contains(where: { $0.0 == row.workload && $0.1 == row.part }) { list.append((row.workload, row.part)) }
        }
        guard !labels.isEmpty else { return [] }
        var lines = [
            "| workload | " + columns.joined(separator: " | ") + " | WALStore ÷ faster SQLite FULL | WALStore ÷ plain loop |",
            "|---|" + String(repeating: "---:|", count: columns.count + 2),
        ]
        for (workload, part) in labels {
            let open = workload == .open || workload == .openCompacted
            var cells = [title(workload, part)]
            for contender in columns {
                guard let row = rows.row(workload, contender, part: part) else {
                    cells.append("")
                    continue
                }
                cells.append(
                    workload == .memoryCompacted ? TableFormat.fixed(row.median.figures[Figure.residentPerKey] ?? 0, 1)
                        : open ? TableFormat.fixed(row.median.seconds * 1e3, 1) : TableFormat.count(row.median.operationsPerSecond))
            }
            let mine = rows.row(workload, subject, part: part)
            if workload == .memoryCompacted {
                let ratio = mine.flatMap { row in
                    rows.row(workload, sqliteFullRowid).map { theirs in
                        (row.median.figures[Figure.residentPerKey] ?? 0) / max(1e-9, theirs.median.figures[Figure.residentPerKey] ?? 0)
                    }
                }
                cells.append(ratio.map { TableFormat.ratio($0) + " (rowid)" } ?? "")
                cells.append("")
                lines.append("| " + cells.joined(separator: " | ") + " |")
                continue
            }
            cells.append(mine.flatMap { row in
                row.ratios[fasterSQLite.name].map { ratio in
                    TableFormat.ratio(ratio) + (row.ratioBasis[fasterSQLite.name].map { " (\(fasterSQLite.label($0)))" } ?? "")
                }
            } ?? "")
            cells.append(mine.flatMap { $0.ratios[plainLoop].map(TableFormat.ratio) } ?? "")
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        if rows.row(.fillseq, subject) != nil {
            var cells = ["bytes on disk per record after fillseq (ratio: WALStore's ÷ the smaller SQLite FULL's)"]
            var perRecord: [String: Double] = [:]
            for contender in columns {
                guard contender != plainLoop, let row = rows.row(.fillseq, contender) else {
                    cells.append("")
                    continue
                }
                perRecord[contender] = Double(row.median.bytesOnDisk) / Double(max(1, row.median.operations))
                cells.append(TableFormat.fixed(perRecord[contender]!, 1))
            }
            let smaller = fasterSQLite.members.compactMap { name in perRecord[name].map { (name, $0) } }.min { $0.1 < $1.1 }
            if let mine = perRecord[subject], let smaller {
                cells.append(TableFormat.ratio(mine / smaller.1) + " (\(fasterSQLite.label(smaller.0)))")
            } else {
                cells.append("")
            }
            cells.append("")
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines
    }

    /// The first column: what the row measures, in words.
    static func title(_ workload: Workload, _ part: String?) -> String {
        switch (workload, part) {
        case (.fillseq, _): "fillseq (1,000 records per durable commit), ops/s"
        case (.fillbatch100, _): "fillbatch100 (100 per durable commit), ops/s"
        case (.fillsync, _): "fillsync (one record per durable commit), ops/s"
        case (.fillsyncConcurrent, _): "fillsync-concurrent (8 threads, one record per commit), ops/s"
        case (.overwrite, _): "overwrite (1,000 per commit), ops/s"
        case (.readrandomWarm, _): "readrandom, warm, ops/s"
        case (.readrandomCold, nil): "readrandom, cold (reopened, page cache dropped), all N reads, ops/s"
        case (.readrandomCold, _): "readrandom, cold, first 1,000 reads, ops/s"
        case (.readseq, _): "readseq (every value, key order), ops/s"
        case (.delete, _): "delete (1,000 per commit), ops/s"
        case (.open, _): "open plus first point read, page cache dropped, ms"
        case (.openCompacted, Workload.coldPart?): "open plus first point read of the compacted store, page cache dropped, ms"
        case (.openCompacted, _): "open plus first point read of the compacted store, page cache warm, ms"
        case (.readmissing, _): "readmissing (point reads of absent keys, compacted store), ops/s"
        case (.memoryCompacted, _): "resident memory growth per record, open plus first read of the compacted store (ratio: WALStore's ÷ SQLite's), B"
        default: workload.rawValue + (part.map { " " + $0 } ?? "")
        }
    }
}
