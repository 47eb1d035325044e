import Dispatch
import Engine
import Snapshot
import Synchronization

/// `walstore compact STORE` and `walstore salvage STORE`: the two commands that change a store.
enum CompactCommand {
    static let spec = CommandSpec(
        name: "compact", usage: "compact STORE [--json] [--progress]",
        summary:
            "Flushes the log's tail into sorted tables and merges every table into one, removing dead versions, tombstones and unreferenced blobs.",
        positionals: ["STORE"],
        flags: [
            "json": "print one JSON object (docs/tool.md lists its fields)",
            "progress": "draw the progress line even when standard error is not a terminal",
        ],
        details: "Writes to the store: run it while no program has the store open (a held store is refused, exit 3).")

    static func run(_ arguments: Arguments, _ output: StandardOutput) throws -> ExitCode {
        let path = arguments.positionals[0]
        let progress = ProgressLine("compact \(path)", forced: arguments.has("progress"))
        progress.step("opening")
        let store = try StoreAccess.openForWriting(path)
        defer { try? store.close() }
        let before = store.statistics
        let what =
            "compacting \(before.segments.count) segment\(before.segments.count == 1 ? "" : "s"), \(before.tables.count) table\(before.tables.count == 1 ? "" : "s"), \(before.blobDirectoryFiles) blob file\(before.blobDirectoryFiles == 1 ? "" : "s")"
        progress.step(what)
        // The compaction runs on another thread; this one redraws the line (the time so far)
        // until it ends.
        let outcome = Mutex<Result<LogStore.Statistics.Compaction, EngineError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result = Result { () throws(EngineError) in try store.compact() }
            outcome.withLock { $0 = result }
            done.signal()
        }
        while done.wait(timeout: .now() + .milliseconds(100)) == .timedOut { progress.step(what) }
        let result = try outcome.withLock { $0! }.get()
        progress.step("closing")
        try store.close()
        progress.finish()
        let seconds = ProgressLine.seconds(result.duration)
        if arguments.has("json") {
            output.line(
                JSONValue.object([
                    ("path", .string(path)), ("seconds", .double(seconds)), ("bytesBefore", .uint(result.bytesBefore)),
                    ("bytesAfter", .uint(result.bytesAfter)), ("recordsWritten", .int(result.recordsWritten)),
                    ("tablesWritten", .int(result.tablesWritten)), ("blobsRemoved", .int(result.blobsRemoved)),
                ]).text)
        } else {
            output.line(
                "compacted \(path): \(result.bytesBefore) → \(result.bytesAfter) bytes, \(result.recordsWritten) records in \(result.tablesWritten) table\(result.tablesWritten == 1 ? "" : "s"), \(result.blobsRemoved) blobs removed"
            )
        }
        return .ok
    }
}

enum SalvageCommand {
    static let spec = CommandSpec(
        name: "salvage", usage: "salvage STORE [--json]",
        summary:
            "Repairs a store that open refuses as corrupt: keeps every intact commit, table block and blob, moves every damaged byte range into the store's quarantine/ folder, and reports what it kept and lost; for a WALDataStore, then makes every index, uniqueness, back-reference, link and count entry agree with the surviving records.",
        positionals: ["STORE"], flags: ["json": "print one JSON object (docs/tool.md lists its fields)"],
        details:
            "Writes to the store. Exit 0 when nothing was damaged, 1 when damage was found and repaired (or derived entries rebuilt).")

    static func run(_ arguments: Arguments, _ output: StandardOutput) throws -> ExitCode {
        let path = arguments.positionals[0]
        try StoreAccess.checkDirectory(path)
        let report = try LogStore.salvage(at: path, options: StoreAccess.options)
        // A WALDataStore's derived entries follow its records: after lost commits, the surviving
        // records say what they must be.
        var rebuild: DerivedEntryRebuild?
        var recordsSkipped: String?
        let store = try StoreAccess.openForWriting(path)
        do {
            rebuild = try StoreInspector(engine: store).rebuildDerivedEntries()
        } catch let error as StoreInspectionError {
            recordsSkipped = error.code == .noHeader ? "no WALDataStore header: no records to rebuild from" : error.message
        } catch {
            try? store.close()
            throw error
        }
        try store.close()
        let rebuilt = (rebuild?.written ?? 0) + (rebuild?.removed ?? 0)
        let clean = report.isClean && (rebuild?.before.problemCount ?? 0) == 0
        if arguments.has("json") {
            output.line(
                JSONValue.object([
                    ("path", .string(path)), ("clean", .bool(clean)),
                    (
                        "quarantined",
                        .array(
                            report.quarantined.map {
                                .object([
                                    ("file", .string($0.file)), ("offset", .uint($0.range.lowerBound)),
                                    ("length", .uint($0.range.upperBound - $0.range.lowerBound)),
                                    ("savedAs", .string($0.savedAs)), ("reason", .string($0.reason)),
                                ])
                            })
                    ),
                    ("lastKeptSequence", .uint(report.lastKeptSequence)),
                    (
                        "lostSequences",
                        report.lostSequences.map { .object([("first", .uint($0.lowerBound)), ("last", .uint($0.upperBound))]) } ?? .null
                    ),
                    ("lostSequenceRanges", LostCommits.json(report.lostSequenceRanges)),
                    ("lostSequencesWithUnknownKeys", LostCommits.json(report.lostSequencesWithUnknownKeys)),
                    ("laterCommitsMayDependOnLostOnes", .bool(report.laterCommitsMayDependOnLostOnes)),
                    ("lostKeys", .array(report.lostKeys.map { .string(KeyText.escaped($0)) })),
                    ("deletedKeys", .array(report.deletedKeys.map { .string(KeyText.escaped($0)) })),
                    (
                        "records",
                        rebuild.map { rebuild in
                            .object([
                                ("problemsFound", .int(rebuild.before.problemCount)), ("entriesWritten", .int(rebuild.written)),
                                ("entriesRemoved", .int(rebuild.removed)), ("problemsLeft", .int(rebuild.after.problemCount)),
                                (
                                    "problems",
                                    .array(
                                        rebuild.after.problems.map {
                                            .object([
                                                ("kind", .string($0.kind.rawValue)), ("key", .string(KeyText.escaped($0.key))),
                                                ("message", .string($0.message)),
                                            ])
                                        })
                                ),
                            ])
                        } ?? .null
                    ),
                    ("recordsSkipped", .optional(recordsSkipped)),
                ]).text)
        } else if clean {
            output.line("salvage \(path): nothing damaged; every commit kept (last sequence \(report.lastKeptSequence))")
        } else {
            output.line(
                "salvage \(path): repaired; every intact commit kept, the last sequence \(report.lastKeptSequence)")
            for q in report.quarantined {
                output.line("  set aside \(q.file) bytes \(q.range.lowerBound)..<\(q.range.upperBound) as \(q.savedAs): \(q.reason)")
            }
            for line in LostCommits.lines(report) { output.line("  " + line) }
            if !report.lostKeys.isEmpty {
                output.line(
                    "  keys lost (\(report.lostKeys.count)): " + report.lostKeys.prefix(20).map(KeyText.escaped).joined(separator: ", ")
                        + (report.lostKeys.count > 20 ? ", …" : ""))
            }
            if !report.deletedKeys.isEmpty { output.line("  keys deleted, their blobs unreadable: \(report.deletedKeys.count)") }
            if let rebuild, rebuilt > 0 {
                output.line(
                    "  records: \(rebuilt) derived entries made to agree with the surviving records (\(rebuild.written) written, \(rebuild.removed) removed)"
                )
            }
            if let rebuild, rebuild.after.problemCount > 0 {
                output.line("  records: \(rebuild.after.problemCount) problems the records alone cannot settle (walstore verify lists them):")
                for problem in rebuild.after.problems.prefix(10) {
                    output.line("    \(problem.kind.rawValue) \(KeyText.escaped(problem.key)): \(problem.message)")
                }
            }
        }
        return clean ? .ok : .problems
    }
}

/// How `salvage` and `verify` print the commits a salvage loses.
enum LostCommits {
    /// `[{first, last}]`.
    static func json(_ ranges: [ClosedRange<UInt64>]) -> JSONValue {
        .array(ranges.map { .object([("first", .uint($0.lowerBound)), ("last", .uint($0.upperBound))]) })
    }

    /// `3, 7...9`.
    static func text(_ ranges: [ClosedRange<UInt64>]) -> String {
        ranges.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)...\($0.upperBound)" }
            .joined(separator: ", ")
    }

    /// The lines that say which commits are lost, whose keys are unknown, and that kept commits
    /// may depend on lost ones (none when nothing is lost).
    static func lines(_ report: LogStore.SalvageReport) -> [String] {
        guard !report.lostSequenceRanges.isEmpty else { return [] }
        let count = report.lostSequenceRanges.reduce(UInt64(0)) { $0 + ($1.upperBound - $1.lowerBound + 1) }
        var lines = ["commits lost (\(count)): \(text(report.lostSequenceRanges))"]
        if !report.lostSequencesWithUnknownKeys.isEmpty {
            lines.append(
                "keys unknown of commits \(text(report.lostSequencesWithUnknownKeys)) (no segment hint or readable frame describes them)")
        }
        if report.laterCommitsMayDependOnLostOnes {
            lines.append(
                "commits after a lost one were kept: what they wrote may depend on the lost ones (check derived data, or restore a copy)"
            )
        }
        return lines
    }
}
