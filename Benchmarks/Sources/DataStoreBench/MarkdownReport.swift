import Foundation

/// The Markdown tables of a run: the main workloads with WALStore's ratios to both SQLite
/// stores, and WALStore against the JSON store at the JSON store's scale.
enum MarkdownReport {
    static func tables(_ results: BenchResults) -> String {
        var lines: [String] = []
        let main = results.figures
        let contenders = [ContenderKind.wal, .sqliteFull, .sqliteNormal].filter { kind in main.contains { $0.contender == kind.rawValue } }
        let others = contenders.filter { $0 != .wal }
        lines.append("| workload | " + contenders.map(\.rawValue).joined(separator: " | ") + " | " + others.map { "WALStore ÷ \($0.rawValue)" }.joined(separator: " | ") + " |")
        lines.append("|---|" + Array(repeating: "---:|", count: contenders.count + others.count).joined())
        for workload in BenchResults.workloads(main) {
            var cells = [workload]
            for kind in contenders { cells.append(main.first { $0.workload == workload && $0.contender == kind.rawValue }.map { number($0.value) } ?? "") }
            for kind in others { cells.append(BenchResults.ratio(main, workload, to: kind.rawValue).map(ratio) ?? "") }
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        let capped = results.capped
        if !capped.isEmpty {
            lines.append("")
            lines.append("| at the JSON store's scale (\(number(Double(min(results.posts, results.jsonPosts)))) posts) | WALStore | JSON file | WALStore ÷ JSON file |")
            lines.append("|---|---:|---:|---:|")
            for workload in BenchResults.workloads(capped) {
                let wal = capped.first { $0.workload == workload && $0.contender == ContenderKind.wal.rawValue }
                let json = capped.first { $0.workload == workload && $0.contender == ContenderKind.json.rawValue }
                let r = BenchResults.ratio(capped, workload, to: ContenderKind.json.rawValue).map(ratio) ?? ""
                lines.append("| \(workload) | \(wal.map { number($0.value) } ?? "") | \(json.map { number($0.value) } ?? "") | \(r) |")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A figure with thousands separators above 100, two decimals below 10.
    static func number(_ value: Double) -> String {
        if value >= 100 {
            let digits = String(Int(value.rounded()))
            var grouped = ""
            for (i, c) in digits.reversed().enumerated() {
                if i > 0 && i % 3 == 0 { grouped.append(",") }
                grouped.append(c)
            }
            return String(grouped.reversed())
        }
        return String(format: value >= 10 ? "%.1f" : "%.2f", value)
    }

    /// A ratio as `2.31x` (`1,234x` when large).
    static func ratio(_ value: Double) -> String {
        value >= 100 ? number(value) + "x" : String(format: value >= 10 ? "%.1fx" : "%.2fx", value)
    }
}
