import Engine
import Foundation
import Snapshot

/// `walstore verify STORE`: every checksum of every file, then every record and the entries it
/// derives, all on a copy-on-write view (the store's files stay byte-identical).
enum VerifyCommand {
    static let spec = CommandSpec(
        name: "verify", usage: "verify STORE [--json] [--progress] [--limit N]",
        summary:
            "A full check, as SQLite's PRAGMA integrity_check: every checksum of every file (segments, tables, blobs, hints, manifest), every record decodes under the stored schema, and every index, uniqueness, back-reference, link and asset entry agrees with the records (none missing, none extra, no dangling reference).",
        positionals: ["STORE"],
        flags: [
            "json": "print one JSON object (docs/tool.md lists its fields)",
            "progress": "draw the progress line even when standard error is not a terminal",
        ],
        options: ["limit": "report at most N record problems (default 1000; all are counted)"],
        details:
            "Changes no byte of the store: it runs on a copy-on-write view of the files. Exit 0 when nothing is wrong, 1 when problems are found (walstore salvage repairs damaged files). A store with a quarantine/ folder (a salvage set damaged bytes aside) but no WALDataStore header lost its header: that is a problem, not a plain engine store."
    )

    static func run(_ arguments: Arguments, _ output: StandardOutput) throws -> ExitCode {
        let path = arguments.positionals[0]
        var limit = 1000
        if let text = arguments.value("limit") {
            guard let n = Int(text), n >= 0 else { throw ToolError.usage("walstore verify: --limit takes a count, not \(text)") }
            limit = n
        }
        let start = ContinuousClock.now
        try StoreAccess.checkDirectory(path)
        let progress = ProgressLine("verify \(path)", forced: arguments.has("progress"))
        progress.step("checking every file's checksums and every record")
        // Two views of the files, checked at once on two threads: salvage on one reads and
        // checks every frame, block and blob, and says what it would set aside; the records are
        // checked on the other (the store's own hints spare its open a replay of the log). When
        // salvage finds damage, the records are checked again on its view (the repaired store).
        // A store open refuses is salvaged first, then its records are checked on salvage's view.
        var salvage: LogStore.SalvageReport
        var check: RecordsCheck
        var stores: [LogStore] = []
        defer { for store in stores.reversed() { try? store.close() } }
        if let store = try? LogStore.open(at: path, options: StoreAccess.viewOptions, fileSystem: OverlayFileSystem(), collectingBlobs: false) {
            stores.append(store)
            // This process holds the directory lock (the open above) while the second view is used.
            let fileSystem = OverlayFileSystem(lockHeldElsewhere: true)
            let salvaging = SalvageThread(path: path, fileSystem: fileSystem)
            let first = Result { try RecordsCheck(store, limit: limit, progress: progress) }
            salvage = try salvaging.report()
            if salvage.isClean {
                check = try first.get()
            } else {
                let repaired = try LogStore.open(at: path, options: StoreAccess.viewOptions, fileSystem: fileSystem, collectingBlobs: false)
                stores.append(repaired)
                check = try RecordsCheck(repaired, limit: limit, progress: progress)
            }
        } else {
            let fileSystem = OverlayFileSystem()
            salvage = try LogStore.salvage(at: path, options: StoreAccess.viewOptions, fileSystem: fileSystem)
            let store = try LogStore.open(at: path, options: StoreAccess.viewOptions, fileSystem: fileSystem, collectingBlobs: false)
            stores.append(store)
            check = try RecordsCheck(store, limit: limit, progress: progress)
        }
        let checkedFiles = StoreAccess.files(path).filter { $0.name != "LOCK" }.reduce(0) { $0 + $1.count }
        let records = check.report
        let recordsSkipped = check.skipped
        let headerDamaged = check.headerDamaged
        // Salvage's folder (or damage salvage would set aside) beside no header: a WALDataStore
        // lost its header (not a plain engine store), and a WALDataStore refuses to open it
        // (DataStoreError.headerLost).
        let headerLost = (StoreAccess.holdsQuarantine(path) || !salvage.quarantined.isEmpty) && !check.hasHeader
        let skippedText = headerLost && check.noHeader ? Self.headerLostText : recordsSkipped
        progress.finish()
        // Damage salvage found: each range it set aside, or the lost keys alone (a missing blob).
        let fileProblems = salvage.quarantined.count + (salvage.quarantined.isEmpty && !salvage.lostKeys.isEmpty ? 1 : 0)
        let problemCount = fileProblems + (records?.problemCount ?? 0) + (headerDamaged || headerLost ? 1 : 0)
        if arguments.has("json") {
            let value = JSONValue.object([
                ("path", .string(path)),
                ("ok", .bool(problemCount == 0)),
                ("problemCount", .int(problemCount)),
                (
                    "files",
                    .object([
                        ("checked", .int(checkedFiles)),
                        (
                            "damage",
                            .array(
                                salvage.quarantined.map {
                                    .object([
                                        ("file", .string($0.file)), ("offset", .uint($0.range.lowerBound)),
                                        ("length", .uint($0.range.upperBound - $0.range.lowerBound)), ("reason", .string($0.reason)),
                                    ])
                                })
                        ),
                        ("lastIntactSequence", .uint(salvage.lastKeptSequence)),
                        (
                            "lostSequences",
                            salvage.lostSequences.map { .object([("first", .uint($0.lowerBound)), ("last", .uint($0.upperBound))]) } ?? .null
                        ),
                        ("lostSequenceRanges", LostCommits.json(salvage.lostSequenceRanges)),
                        ("lostSequencesWithUnknownKeys", LostCommits.json(salvage.lostSequencesWithUnknownKeys)),
                        ("laterCommitsMayDependOnLostOnes", .bool(salvage.laterCommitsMayDependOnLostOnes)),
                        ("lostKeys", .array(salvage.lostKeys.prefix(limit).map { .string(KeyText.escaped($0)) })),
                        ("lostKeyCount", .int(salvage.lostKeys.count)),
                    ])
                ),
                (
                    "records",
                    records.map { report in
                        .object([
                            ("records", .int(report.records)), ("entries", .int(report.entries)),
                            ("problemCount", .int(report.problemCount)), ("indexesChecked", .bool(!report.skippedIndexes)),
                            (
                                "problems",
                                .array(
                                    report.problems.map {
                                        .object([
                                            ("kind", .string($0.kind.rawValue)), ("key", .string(KeyText.escaped($0.key))),
                                            ("message", .string($0.message)),
                                        ])
                                    })
                            ),
                        ])
                    } ?? .null
                ),
                ("recordsSkipped", .optional(skippedText)),
                ("headerLost", .bool(headerLost)),
                ("seconds", .double(Self.seconds(since: start))),
            ])
            output.line(value.text)
        } else {
            if salvage.isClean {
                output.line("files: ok, every checksum of \(checkedFiles) files")
            } else {
                output.line("files: damaged")
                for q in salvage.quarantined {
                    output.line("  \(q.file) at offset \(q.range.lowerBound) (\(q.range.upperBound - q.range.lowerBound) bytes): \(q.reason)")
                }
                for line in LostCommits.lines(salvage) { output.line("  " + line) }
                if !salvage.lostKeys.isEmpty {
                    output.line(
                        "  \(salvage.lostKeys.count) keys lost: " + salvage.lostKeys.prefix(10).map(KeyText.escaped).joined(separator: ", ")
                            + (salvage.lostKeys.count > 10 ? ", …" : ""))
                }
                output.line("  walstore salvage \(path) keeps every intact commit and moves the damaged bytes to quarantine/")
            }
            if let records {
                let checked = "\(records.records) records, \(records.entries) entries" + (salvage.isClean ? "" : ", as salvage would leave the store")
                if records.problemCount == 0 {
                    output.line("records: ok, \(checked)" + (records.skippedIndexes ? " (index keys not compared: header version 2)" : ""))
                } else {
                    output.line("records: \(records.problemCount) problem\(records.problemCount == 1 ? "" : "s") in \(checked)")
                    for p in records.problems { output.line("  \(p.kind.rawValue) \(KeyText.escaped(p.key)): \(p.message)") }
                    if records.problemCount > records.problems.count {
                        output.line("  … and \(records.problemCount - records.problems.count) more (--limit)")
                    }
                }
            } else if let skippedText {
                output.line("records: \(skippedText)")
            }
            if headerLost {
                output.line(
                    "  what is left: walstore info \(path) and walstore keys \(path) show the keys it still holds; restore the store from a copy, or open it with WALStoreConfiguration.missingHeader = .createStore to start a new store there"
                )
            }
            output.line(problemCount == 0 ? "verify: ok" : "verify: \(problemCount) problem\(problemCount == 1 ? "" : "s") found")
        }
        return problemCount == 0 ? .ok : .problems
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    static let headerLostText =
        "the store lost its WALDataStore header: no header is left beside the damaged bytes that \(LogStore.quarantineDirectoryName)/ holds (or salvage would set aside), and a WALDataStore refuses to open it (headerLost)"
}

/// What the records of one view of a store came to: their check, or why there was none.
struct RecordsCheck {
    var report: RecordCheckReport?
    var skipped: String?
    var headerDamaged = false
    /// The store holds no `WALDataStore` header key at all.
    var noHeader = false
    /// The store holds a header key (damaged or not).
    var hasHeader: Bool

    init(_ store: LogStore, limit: Int, progress: ProgressLine) throws {
        hasHeader = (try? store.contains(StoreAccess.headerKey)) ?? true
        do {
            let inspector = try StoreInspector(engine: store)
            report = try inspector.checkRecords(limit: limit) { done, total in progress.update(done, of: total) }
        } catch let error as StoreInspectionError {
            switch error.code {
            case .noHeader:
                noHeader = true
                skipped = "a plain engine store: no records to check"
            case .noSchema, .olderRecordsFormat: skipped = error.message
            case .damagedHeader:
                skipped = error.message
                headerDamaged = true
            }
        }
    }
}

/// ``LogStore/salvage(at:options:fileSystem:)`` on a thread of its own, on a copy-on-write view.
final class SalvageThread: Sendable {
    private let result = Locked<Result<LogStore.SalvageReport, EngineError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(path: String, fileSystem: OverlayFileSystem) {
        let thread = Thread { [result, done] in
            let outcome = Result { () throws(EngineError) in
                try LogStore.salvage(at: path, options: StoreAccess.viewOptions, fileSystem: fileSystem)
            }
            result.withLock { $0 = outcome }
            done.signal()
        }
        thread.start()
    }

    /// Waits for the salvage to end, and returns its report.
    func report() throws(EngineError) -> LogStore.SalvageReport {
        done.wait()
        return try result.withLock { $0 }!.get()
    }
}
