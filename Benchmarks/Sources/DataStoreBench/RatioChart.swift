import Foundation

/// An SVG bar chart of WALStore's ratio to one contender per workload: a log-scale axis, a
/// line at 1× (right of it WALStore is better), one bar per workload from 1× to its ratio.
/// Written as text: no library.
enum RatioChart {
    static func svg(_ results: BenchResults, against contender: ContenderKind) -> String {
        let rows = BenchResults.workloads(results.figures).compactMap { workload in
            BenchResults.ratio(results.figures, workload, to: contender.rawValue).map { (workload, $0) }
        }
        let labelWidth = 470.0, plotWidth = 430.0, rowHeight = 24.0, top = 56.0, right = 60.0
        let width = labelWidth + plotWidth + right
        let height = top + Double(rows.count) * rowHeight + 44
        // Decades covering every ratio and 1.
        let lowest = floor(log10(min(rows.map(\.1).min() ?? 1, 1) * 0.9))
        let highest = ceil(log10(max(rows.map(\.1).max() ?? 1, 1) * 1.1))
        let span = max(highest - lowest, 1)
        func x(_ ratio: Double) -> Double { labelWidth + (log10(ratio) - lowest) / span * plotWidth }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Int(width / 2))" y="22" text-anchor="middle" font-size="15" font-weight="bold">WALStore ÷ \(escape(contender.rawValue)) (Core Data-shaped SQLite), per workload</text>
            <text x="\(Int(width / 2))" y="40" text-anchor="middle" fill="#555">log scale; right of 1× WALStore is better; \(results.posts) posts\(results.quick ? " (quick scale)" : "")</text>

            """
        var decade = lowest
        while decade <= highest {
            let value = pow(10, decade)
            let px = x(value)
            svg += "<line x1=\"\(f(px))\" y1=\"\(f(top - 4))\" x2=\"\(f(px))\" y2=\"\(f(top + Double(rows.count) * rowHeight))\" stroke=\"#ddd\"/>\n"
            svg += "<text x=\"\(f(px))\" y=\"\(f(top + Double(rows.count) * rowHeight + 16))\" text-anchor=\"middle\" fill=\"#555\">\(label(value))</text>\n"
            decade += 1
        }
        for (i, row) in rows.enumerated() {
            let y = top + Double(i) * rowHeight
            let from = x(1), to = x(row.1)
            let colour = row.1 >= 1 ? "#2e7d32" : "#c62828"
            svg += "<text x=\"\(f(labelWidth - 8))\" y=\"\(f(y + rowHeight * 0.65))\" text-anchor=\"end\">\(escape(row.0))</text>\n"
            svg += "<rect x=\"\(f(min(from, to)))\" y=\"\(f(y + 4))\" width=\"\(f(max(abs(to - from), 1)))\" height=\"\(f(rowHeight - 8))\" fill=\"\(colour)\"/>\n"
            let anchor = row.1 >= 1 ? "start" : "end"
            let tx = row.1 >= 1 ? to + 4 : to - 4
            svg += "<text x=\"\(f(tx))\" y=\"\(f(y + rowHeight * 0.65))\" text-anchor=\"\(anchor)\">\(escape(MarkdownReport.ratio(row.1)))</text>\n"
        }
        svg += "<line x1=\"\(f(x(1)))\" y1=\"\(f(top - 8))\" x2=\"\(f(x(1)))\" y2=\"\(f(top + Double(rows.count) * rowHeight + 4))\" stroke=\"black\" stroke-width=\"1.5\"/>\n"
        svg += "</svg>\n"
        return svg
    }

    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    private static func label(_ value: Double) -> String {
        value >= 1 ? "\(Int(value.rounded()))×" : "\(String(format: "%g", value))×"
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
