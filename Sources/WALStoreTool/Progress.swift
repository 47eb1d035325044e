#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The progress line on standard error: `label: done/total (percent), rate/s, time left`,
/// redrawn at most ten times a second and cleared at the end. Silent unless standard error is a
/// terminal or `--progress` was given.
final class ProgressLine {
    private let label: String
    private let enabled: Bool
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private var lastDraw: ContinuousClock.Instant
    private var drawn = false

    init(_ label: String, forced: Bool) {
        self.label = label
        self.enabled = forced || isatty(2) == 1
        self.start = clock.now
        self.lastDraw = start
    }

    /// `done` of `total` units (records, objects) are done.
    func update(_ done: Int, of total: Int) {
        guard enabled else { return }
        let now = clock.now
        guard now - lastDraw >= .milliseconds(100) || done >= total else { return }
        lastDraw = now
        let seconds = Self.seconds(now - start)
        let rate = seconds > 0 ? Double(done) / seconds : 0
        var line = "\(label): \(done)/\(total)"
        if total > 0 { line += " (\(min(100, done * 100 / total))%)" }
        line += ", \(Int(rate))/s"
        if rate > 0 && total > done { line += ", \(Self.clockText(Double(total - done) / rate)) left" }
        draw(line)
    }

    /// A step without a count (a compaction, the files' check): the time it has taken so far.
    func step(_ what: String) {
        guard enabled else { return }
        draw("\(label): \(what), \(Self.clockText(Self.seconds(clock.now - start))) so far")
    }

    /// Clears the line.
    func finish() {
        guard enabled, drawn else { return }
        writeStandardError("\r\u{1B}[K")
        drawn = false
    }

    private func draw(_ line: String) {
        writeStandardError("\r\u{1B}[K" + line)
        drawn = true
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func clockText(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        return s >= 3600 ? "\(s / 3600)h\(s % 3600 / 60)m" : "\(s / 60):" + (s % 60 < 10 ? "0" : "") + "\(s % 60)"
    }
}

func writeStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    bytes.withUnsafeMutableBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = write(2, buffer.baseAddress! + offset, buffer.count - offset)
            if n <= 0 { break }
            offset += n
        }
    }
}
