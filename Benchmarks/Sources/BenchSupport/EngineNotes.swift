/// The names of the parts (table rows) of `compact` and `open-hints`; `assets` names its parts
/// after its groups (``AssetGroup/part(_:)``).
enum EnginePart {
    static let overwrite = "overwrite"
    static let commitsBefore = "commits before"
    static let commitsDuring = "commits during"
    static let compaction = "compact()"
    static let neverCompacted = "never compacted"
    static let compactedTables = "tables"
}

/// The lines under the table for `assets`, `compact` and `open-hints`: the figures their goals
/// are about, from the rows' medians and their ``Sample/figures``.
public enum EngineNotes {
    /// The notes for whichever of the three workloads ran; `plainFiles` is the contender whose
    /// `assets` rows are plain files.
    public static func lines(_ rows: [ResultRow], subject: String, plainFiles: String) -> [String] {
        assets(rows, subject, plainFiles) + compaction(rows, subject) + open(rows, subject) + memory(rows, subject)
    }

    /// The open targets: 1,000,000 records in at most this long, never compacted and compacted alike.
    public static let openGoalRecords = 1_000_000
    public static let openGoalSeconds = 0.3
    /// The index memory target: process memory growth per resident 16-byte key.
    public static let memoryGoalBytesPerKey = 96.0
    /// The assets target: WALStore ÷ plain files in MB/s, every group and step.
    public static let assetsGoalRatio = 0.8
    /// The compaction targets: the longest one-record commit during `compact()`, and the files
    /// after ÷ a fresh store's.
    public static let compactionGoalLongestMilliseconds = 10.0
    public static let compactionGoalSpaceRatio = 1.1

    /// The goals of whichever of `assets`, `compact`, `open-hints` and `index-memory` ran.
    public static func goals(_ rows: [ResultRow], subject: String, plainFiles: String) -> [Goal] {
        var goals: [Goal] = []
        // open-hints: both opens, judged at the size the target names only.
        for (part, words) in [(EnginePart.neverCompacted, "never compacted (segment hints)"), (EnginePart.compactedTables, "after compact() (tables)")] {
            guard let row = rows.row(.openHints, subject, part: part) else { continue }
            let records = Int(row.median.figures[Figure.records] ?? 0)
            let name = "open of \(TableFormat.count(Double(openGoalRecords))) records, \(words), page cache dropped"
            let target = "≤ \(integer(openGoalSeconds * 1e3)) ms"
            let measured = "\(TableFormat.count(row.median.seconds * 1e3)) ms"
            if records == openGoalRecords {
                goals.append(.judged(name, target: target, measured: measured, met: row.median.seconds <= openGoalSeconds))
            } else {
                goals.append(.notJudged(name, target: target, measured: measured + " for \(integer(Double(records))) records",
                    because: "the target is for \(TableFormat.count(Double(openGoalRecords))); run --workloads open-hints"))
            }
        }
        // index-memory: every part.
        for part in [EnginePart.neverCompacted, EnginePart.compactedTables] {
            guard let row = rows.row(.indexMemory, subject, part: part) else { continue }
            let f = row.median.figures
            let perKey = f[Figure.rssPerKey] ?? 0
            goals.append(.judged(
                "index memory per resident 16-byte key, process memory growth (open by \(part))",
                target: "≤ \(integer(memoryGoalBytesPerKey)) B", measured: "\(TableFormat.fixed(perKey, 1)) B",
                met: perKey <= memoryGoalBytesPerKey,
                remark: "RSS growth over \(integer(f[Figure.records] ?? 0)) keys; heap in use "
                    + "\(TableFormat.fixed(f[Figure.heapPerKey] ?? 0, 1)) B, engine estimate \(integer(f[Figure.engineEstimatePerKey] ?? 0)) B"))
        }
        // compact.
        if let compaction = rows.row(.compact, subject, part: EnginePart.compaction),
           let during = rows.row(.compact, subject, part: EnginePart.commitsDuring) {
            let space = compaction.median.figures[Figure.freshRatioAfter] ?? 0
            goals.append(.judged(
                "compact(): files after ÷ a fresh store of the live records", target: "≤ \(TableFormat.ratio(compactionGoalSpaceRatio))",
                measured: TableFormat.ratio(space), met: space <= compactionGoalSpaceRatio))
            let longest = (during.median.figures[Figure.commit + "LongestMicroseconds"] ?? 0) / 1e3
            goals.append(.judged(
                "longest one-record durable commit during compact()",
                target: "≤ \(integer(compactionGoalLongestMilliseconds)) ms", measured: "\(TableFormat.fixed(longest, 1)) ms",
                met: longest <= compactionGoalLongestMilliseconds))
        }
        // assets: each step, its worst group.
        let mine = rows.filter { $0.workload == .assets && $0.contender == subject }
        for step in AssetGroup.Step.allCases {
            let ratios = mine.compactMap { row -> (String, Double)? in
                guard let part = row.part, part.hasSuffix(" " + step.rawValue), let ratio = row.ratios[plainFiles] else { return nil }
                return (String(part.dropLast(step.rawValue.count + 1)), ratio)
            }
            guard let worst = ratios.min(by: { $0.1 < $1.1 }) else { continue }
            goals.append(.judged(
                "assets \(step.rawValue), WALStore ÷ plain files in MB/s, every group",
                target: "≥ \(TableFormat.ratio(assetsGoalRatio))", measured: "\(TableFormat.ratio(worst.1)) at worst (\(worst.0))",
                met: worst.1 >= assetsGoalRatio))
        }
        return goals
    }

    /// WALStore ÷ plain files by step, and what compression saved.
    private static func assets(_ rows: [ResultRow], _ subject: String, _ plainFiles: String) -> [String] {
        let mine = rows.filter { $0.workload == .assets && $0.contender == subject }
        guard !mine.isEmpty else { return [] }
        var steps: [String] = []
        for step in AssetGroup.Step.allCases {
            let ratios = mine.compactMap { row -> String? in
                guard let part = row.part, part.hasSuffix(" " + step.rawValue), let ratio = row.ratios[plainFiles] else {
                    return nil
                }
                return "\(TableFormat.ratio(ratio)) (\(part.dropLast(step.rawValue.count + 1)))"
            }
            if !ratios.isEmpty { steps.append("\(step.rawValue) " + ratios.joined(separator: ", ")) }
        }
        var lines = ["assets, WALStore ÷ plain files in MB/s: " + steps.joined(separator: "; ")]
        let writes = mine.filter { $0.part?.hasSuffix(" " + AssetGroup.Step.write.rawValue) ?? false }
        let stored = writes.map { row in
            "\(row.part!.dropLast(AssetGroup.Step.write.rawValue.count + 1)) "
                + TableFormat.ratio(Double(row.median.rawBytes) / Double(max(1, row.median.bytesOnDisk)))
        }
        lines.append("assets, WALStore's blobs smaller than their bytes by (zlib 1 per 1 MiB chunk when it saves 10%): "
            + stored.joined(separator: ", "))
        return lines
    }

    /// Space amplification before and after, commit and read stalls, and the compaction's pace.
    private static func compaction(_ rows: [ResultRow], _ subject: String) -> [String] {
        guard let compaction = rows.row(.compact, subject, part: EnginePart.compaction),
              let before = rows.row(.compact, subject, part: EnginePart.commitsBefore),
              let during = rows.row(.compact, subject, part: EnginePart.commitsDuring),
              let overwrite = rows.row(.compact, subject, part: EnginePart.overwrite) else {
            return []
        }
        let f = compaction.median.figures
        func value(_ name: String) -> Double { f[name] ?? 0 }
        func bytes(_ name: String) -> String { TableFormat.bytes(UInt64(max(0, value(name)))) }
        func ratio(_ name: String) -> String { TableFormat.ratio(value(name)) }
        func whole(_ name: String) -> String { integer(value(name)) }
        func milliseconds(_ micros: Double?) -> String { TableFormat.fixed((micros ?? 0) / 1e3, 1) + " ms" }
        func stalls(_ row: ResultRow) -> String {
            let g = row.median.figures
            return "(\(TableFormat.fixed(g[Figure.phaseSeconds] ?? 0, 1)) s, \(integer(Double(row.median.operations))) commits) "
                + "p99 \(milliseconds(g[Figure.commit + "P99Microseconds"])), "
                + "longest \(milliseconds(g[Figure.commit + "LongestMicroseconds"])) "
                + "at \(TableFormat.fixed(g[Figure.commitLongestAt] ?? 0, 2)) s; "
                + "reads \(TableFormat.count(g[Figure.readsPerSecond] ?? 0))/s, longest \(milliseconds(g[Figure.readLongestMicroseconds]))"
        }
        return [
            "compact: \(integer(Double(overwrite.median.operations))) puts to "
                + "\(whole(Figure.keys)) keys "
                + "(\(TableFormat.fixed(value(Figure.overwriteRounds), 1)) rounds) until the log held "
                + "\(bytes(Figure.bytesOnDiskBefore)); space amplification before → after compact(): "
                + "files ÷ a fresh store's holding the live records (\(bytes(Figure.freshFiles))) "
                + "\(ratio(Figure.freshRatioBefore)) → \(ratio(Figure.freshRatioAfter)); right after the "
                + "compaction under load, with the commits made meanwhile still in the log: \(ratio(Figure.freshRatioLoaded))",
            "compact: one-record durable commits back to back, a reader at \(WALStoreContender.readsPerMillisecond) reads/ms "
                + "beside them: without compaction \(stalls(before)); during compact() \(stalls(during))",
            "compact: compact() \(TableFormat.fixed(compaction.median.seconds, 2)) s under that load, "
                + "\(TableFormat.fixed(compaction.median.megabytesPerSecond, 1)) MB/s of the \(bytes(Figure.compactedBytesBefore)) "
                + "it replaced, \(whole(Figure.recordsWritten)) records (those still current at the switch) into "
                + "\(whole(Figure.tablesWritten)) table(s) of \(bytes(Figure.compactedBytesAfter)); "
                + "a second compact() at rest \(TableFormat.fixed(value(Figure.settleSeconds), 2)) s; reopening from the tables "
                + "\(TableFormat.fixed(value(Figure.reopenSeconds) * 1e3, 1)) ms; \(whole(Figure.keysVerified)) "
                + "keys read back their latest value after both; write amplification over the workload "
                + "(log + flush + merge bytes ÷ log bytes, statistics.writeAmplification) \(TableFormat.fixed(value(Figure.writeAmplification), 2))",
        ]
    }

    /// The two open times side by side.
    private static func open(_ rows: [ResultRow], _ subject: String) -> [String] {
        guard let replay = rows.row(.openHints, subject, part: EnginePart.neverCompacted),
              let hinted = rows.row(.openHints, subject, part: EnginePart.compactedTables) else {
            return []
        }
        let records = hinted.median.figures[Figure.records] ?? 0
        return [
            "open-hints: open of \(integer(records)) records with the OS page cache dropped: replaying the log "
                + "(\(TableFormat.bytes(replay.median.bytesOnDisk))) \(TableFormat.fixed(replay.median.seconds, 3)) s, "
                + "from tables after compact() (\(TableFormat.bytes(hinted.median.bytesOnDisk))) "
                + "\(TableFormat.fixed(hinted.median.seconds, 3)) s, \(TableFormat.ratio(replay.median.seconds / max(1e-9, hinted.median.seconds))) "
                + "faster",
        ]
    }

    /// The memory figures of both opens.
    private static func memory(_ rows: [ResultRow], _ subject: String) -> [String] {
        let parts = [EnginePart.neverCompacted, EnginePart.compactedTables].compactMap { (part: String) -> (String, [String: Double])? in
            rows.row(.indexMemory, subject, part: part).map { (part, $0.median.figures) }
        }
        guard !parts.isEmpty else { return [] }
        let described = parts.map { part, f in
            "open by \(part): RSS +\(TableFormat.bytes(UInt64(max(0, f[Figure.rssGrowth] ?? 0)))) = "
                + "\(TableFormat.fixed(f[Figure.rssPerKey] ?? 0, 1)) B/key, heap in use +\(TableFormat.bytes(UInt64(max(0, f[Figure.heapGrowth] ?? 0)))) = "
                + "\(TableFormat.fixed(f[Figure.heapPerKey] ?? 0, 1)) B/key (value cache \(TableFormat.bytes(UInt64(f[Figure.valueCacheBytes] ?? 0))))"
        }
        let records = parts[0].1[Figure.records] ?? 0
        let estimate = parts[0].1[Figure.engineEstimatePerKey] ?? 0
        return ["index-memory: a fresh process opening the store of \(integer(records)) records, growth after malloc_trim(0): "
            + described.joined(separator: "; ") + "; statistics.indexBytesPerKey \(integer(estimate)) B"]
    }

    /// A count, grouped in thousands, without decimals.
    private static func integer(_ value: Double) -> String {
        value < 100 ? String(Int(value.rounded())) : TableFormat.count(value)
    }
}
