/// WALStore's own workloads (`open-hints`, `index-memory`, `compact`, `assets`) as the Markdown
/// tables README.md shows: what each row's figure is, and this run's value.
public enum EngineTables {
    public static func markdown(_ rows: [ResultRow], subject: String, plainFiles: String) -> [String] {
        var figures: [(String, String)] = []
        func ms(_ seconds: Double) -> String { TableFormat.count(seconds * 1e3) + " ms" }
        for (part, words) in [(EnginePart.neverCompacted, "never compacted (segment hints)"), (EnginePart.compactedTables, "after compact() (tables)")] {
            guard let row = rows.row(.openHints, subject, part: part) else { continue }
            let records = TableFormat.count(row.median.figures[Figure.records] ?? 0)
            figures.append(("open of \(records) records, \(words), page cache dropped", ms(row.median.seconds)))
        }
        for part in [EnginePart.neverCompacted, EnginePart.compactedTables] {
            guard let row = rows.row(.indexMemory, subject, part: part) else { continue }
            let f = row.median.figures
            figures.append((
                "memory per key of a fresh process opening \(TableFormat.count(f[Figure.records] ?? 0)) records by \(part): "
                    + "RSS growth / heap in use / engine estimate",
                "\(TableFormat.fixed(f[Figure.rssPerKey] ?? 0, 1)) B / \(TableFormat.fixed(f[Figure.heapPerKey] ?? 0, 1)) B / "
                    + "\(TableFormat.count(f[Figure.engineEstimatePerKey] ?? 0)) B"))
        }
        if let compaction = rows.row(.compact, subject, part: EnginePart.compaction),
           let before = rows.row(.compact, subject, part: EnginePart.commitsBefore),
           let during = rows.row(.compact, subject, part: EnginePart.commitsDuring) {
            let f = compaction.median.figures
            func ratio(_ name: String) -> String { TableFormat.ratio(f[name] ?? 0) }
            func latency(_ row: ResultRow, _ name: String) -> String {
                TableFormat.fixed((row.median.figures[Figure.commit + name] ?? 0) / 1e3, 1)
            }
            figures.append((
                "compact: space, files ÷ a fresh store of the live records, before → after (log of \(TableFormat.bytes(UInt64(f[Figure.bytesOnDiskBefore] ?? 0))))",
                "\(ratio(Figure.freshRatioBefore)) → \(ratio(Figure.freshRatioAfter))"))
            figures.append(("compact: write amplification over the workload (statistics.writeAmplification)", TableFormat.fixed(f[Figure.writeAmplification] ?? 0, 2)))
            figures.append((
                "compact: one-record durable commits during compact(), p99 / longest (baseline without compaction)",
                "\(latency(during, "P99Microseconds")) / \(latency(during, "LongestMicroseconds")) ms "
                    + "(\(latency(before, "P99Microseconds")) / \(latency(before, "LongestMicroseconds")) ms)"))
            figures.append((
                "compact: reads during compact(), longest",
                TableFormat.fixed((during.median.figures[Figure.readLongestMicroseconds] ?? 0) / 1e3, 1) + " ms"))
            figures.append((
                "compact: compact() under that load",
                "\(TableFormat.fixed(compaction.median.seconds, 2)) s, \(TableFormat.fixed(compaction.median.megabytesPerSecond, 0)) MB/s"))
        }
        var lines: [String] = []
        if !figures.isEmpty {
            lines = ["| WALStore figure | this run |", "|---|---:|"] + figures.map { "| \($0.0) | \($0.1) |" }
        }
        let assets = rows.filter { $0.workload == .assets && $0.contender == subject }
        let groups = assets.compactMap { row -> String? in
            guard let part = row.part, part.hasSuffix(" " + AssetGroup.Step.write.rawValue) else { return nil }
            return String(part.dropLast(AssetGroup.Step.write.rawValue.count + 1))
        }
        if !groups.isEmpty {
            if !lines.isEmpty { lines.append("") }
            lines.append("| blobs, WALStore ÷ plain files (MB/s) | " + AssetGroup.Step.allCases.map(\.rawValue).joined(separator: " | ")
                + " | stored smaller by |")
            lines.append("|---|" + String(repeating: "---:|", count: AssetGroup.Step.allCases.count + 1))
            for group in groups {
                var cells = [group]
                for step in AssetGroup.Step.allCases {
                    cells.append(rows.row(.assets, subject, part: group + " " + step.rawValue)?.ratios[plainFiles]
                        .map(TableFormat.ratio) ?? "")
                }
                let write = rows.row(.assets, subject, part: group + " " + AssetGroup.Step.write.rawValue)
                cells.append(write.map { TableFormat.ratio(Double($0.median.rawBytes) / Double(max(1, $0.median.bytesOnDisk))) } ?? "")
                lines.append("| " + cells.joined(separator: " | ") + " |")
            }
        }
        return lines
    }
}
