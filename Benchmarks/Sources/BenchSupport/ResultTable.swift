/// The plain-text table: one row per (workload, contender), figures of the median repetition.
public struct ResultTable {
    public var rows: [ResultRow]
    /// The subject whose rows carry ratios.
    public var subject: String
    /// The reference contenders, one ratio column each, headed by their ``columnTitles``.
    public var references: [String]
    /// Column headings for the references (default "vs <name>").
    public var columnTitles: [String: String]
    /// The references that are the fastest of several contenders: their cells name the member.
    public var groups: [ReferenceGroup]

    public init(
        rows: [ResultRow], subject: String, references: [String], columnTitles: [String: String] = [:],
        groups: [ReferenceGroup] = []
    ) {
        self.rows = rows
        self.groups = groups
        self.subject = subject
        self.references = references
        self.columnTitles = columnTitles
    }

    /// The table's lines, a blank line between workloads and between the parts of a workload
    /// that several contenders ran.
    public func render() -> String {
        let titles = references.map { columnTitles[$0] ?? "vs \($0)" }
        let ratioWidths = zip(references, titles).map { reference, title in
            max(8, title.count, rows.map { cell($0, reference).count }.max() ?? 0)
        }
        let workloadWidth = max(8, rows.map(\.label.count).max() ?? 0)
        let contenderWidth = max(9, rows.map(\.contender.count).max() ?? 0)
        let numeric = [11, 10, 8, 10]
        var header = TableFormat.pad("workload", workloadWidth) + "  " + TableFormat.pad("contender", contenderWidth)
        for (title, width) in zip(["ops/s", "µs/op", "MB/s", "on disk"], numeric) {
            header += "  " + TableFormat.pad(title, width, right: true)
        }
        for (title, width) in zip(titles, ratioWidths) { header += "  " + TableFormat.pad(title, width, right: true) }
        let rule = String(repeating: "-", count: header.count)
        var lines = [header, rule]
        var previous: ResultRow?
        for row in rows {
            if let previous, previous.workload != row.workload || (previous.part != row.part && sharesPart(previous)) {
                lines.append("")
            }
            previous = row
            let m = row.median
            var line = TableFormat.pad(row.label, workloadWidth) + "  "
                + TableFormat.pad(row.contender, contenderWidth)
            let cells = [
                TableFormat.count(m.operationsPerSecond), TableFormat.micros(m.microsecondsPerOperation),
                TableFormat.fixed(m.megabytesPerSecond, 1), TableFormat.bytes(m.bytesOnDisk),
            ]
            for (cell, width) in zip(cells, numeric) { line += "  " + TableFormat.pad(cell, width, right: true) }
            for (reference, width) in zip(references, ratioWidths) {
                line += "  " + TableFormat.pad(cell(row, reference), width, right: true)
            }
            while line.last == " " { line.removeLast() }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// The ratio cell of `row` for `reference`: empty but for the subject's rows; against a
    /// group, followed by the member it used ("1.25x rowid").
    public func cell(_ row: ResultRow, _ reference: String) -> String {
        guard row.contender == subject, let ratio = row.ratios[reference] else { return "" }
        guard let basis = row.ratioBasis[reference], let group = groups.first(where: { $0.name == reference }) else {
            return TableFormat.ratio(ratio)
        }
        return TableFormat.ratio(ratio) + " " + group.label(basis)
    }

    /// True when another contender has a row for the same workload and part as `row`.
    private func sharesPart(_ row: ResultRow) -> Bool {
        rows.contains { $0.workload == row.workload && $0.part == row.part && $0.contender != row.contender }
    }
}
