import Foundation

/// What makes one bench executable: its contenders, workloads and words.
public struct BenchDescription {
    /// The executable's name.
    public var tool: String
    /// The table's first line.
    public var title: String
    /// The workloads `--workloads` accepts.
    public var available: [Workload]
    /// The workloads run without `--workloads`.
    public var defaults: [Workload]
    /// The contender the ratio columns are about.
    public var subject: String
    /// The contenders the subject is compared to, one ratio column each.
    public var references: [String]
    /// Headings of the ratio columns, by reference (default "vs <name>").
    public var columnTitles: [String: String]
    /// The references that are the fastest of several contenders (SQLite's two layouts).
    public var referenceGroups: [ReferenceGroup]
    /// Lines printed above the table that say what each contender is.
    public var legend: [String]
    /// Library versions, by contender, for the JSON report.
    public var versions: [String: String]
    /// Makes the contenders, subject first.
    public var makeContenders: (DataSet) -> [any Contender]
    /// Extra lines for under the table, computed from the rows.
    public var notes: ([ResultRow], DataSet) -> [String]
    /// The project's targets, judged on the rows: printed after the notes, met or MISS.
    public var goals: ([ResultRow], DataSet) -> [Goal]
    /// Lines printed last, after the goals (walstore-bench: the README's tables in Markdown).
    public var appendix: ([ResultRow], DataSet, [Goal]) -> [String]

    public init(
        tool: String, title: String, available: [Workload], defaults: [Workload], subject: String = "WALStore",
        references: [String], columnTitles: [String: String] = [:], referenceGroups: [ReferenceGroup] = [],
        legend: [String], versions: [String: String],
        makeContenders: @escaping (DataSet) -> [any Contender],
        notes: @escaping ([ResultRow], DataSet) -> [String] = { _, _ in [] },
        goals: @escaping ([ResultRow], DataSet) -> [Goal] = { _, _ in [] },
        appendix: @escaping ([ResultRow], DataSet, [Goal]) -> [String] = { _, _, _ in [] }
    ) {
        self.tool = tool
        self.title = title
        self.available = available
        self.defaults = defaults
        self.subject = subject
        self.references = references
        self.columnTitles = columnTitles
        self.referenceGroups = referenceGroups
        self.legend = legend
        self.versions = versions
        self.makeContenders = makeContenders
        self.notes = notes
        self.goals = goals
        self.appendix = appendix
    }
}

/// The shared `main` of both benches: parse, generate, run, print, clean up.
public enum BenchMain {
    /// Runs the bench described by `bench` with `arguments` (without the program name) and
    /// returns the exit status: 0 done, 1 an error, 2 a bad command line.
    public static func run(_ bench: BenchDescription, arguments: [String]) -> Int32 {
        if arguments.count == 2, arguments[0] == MemoryProbe.flag {
            return MemoryProbe.run(path: arguments[1])
        }
        if arguments.first == OpenMemoryProbe.flag {
            return OpenMemoryProbe.run(Array(arguments.dropFirst()), contenders: bench.makeContenders(DataSet(count: 1)))
        }
        let options: BenchOptions
        switch BenchOptions.parse(arguments, available: bench.available) {
        case .success(let parsed):
            options = parsed
        case .failure(let error):
            printError("\(bench.tool): \(error.message)")
            printError(BenchOptions.usage(tool: bench.tool, available: bench.available, defaults: bench.defaults))
            return 2
        }
        if options.help {
            print(BenchOptions.usage(tool: bench.tool, available: bench.available, defaults: bench.defaults))
            return 0
        }
        do {
            try run(bench, options)
            return 0
        } catch {
            printError("\(bench.tool): error: \(error)")
            return 1
        }
    }

    private static func run(_ bench: BenchDescription, _ options: BenchOptions) throws {
        let clock = ContinuousClock()
        let start = clock.now
        let started = ISO8601DateFormatter().string(from: Date())
        let machine = MachineInfo(directory: options.directory)
        if machine.syncIsFree {
            printError("warning: \(options.directory) is on \(machine.fileSystem): fdatasync costs nothing there, "
                + "so every durable figure is meaningless; use --dir on a disk")
        }
        let scratch = try ScratchDirectory(under: options.directory)
        defer { scratch.remove() }
        scratch.removeOnInterrupt()

        let (data, generation) = Stopwatch.time { DataSet(count: options.recordCount) }
        printError("generated \(data.count) records in \(TableFormat.fixed(generation, 2)) s")
        let workloads = options.workloads ?? bench.defaults
        let runner = BenchmarkRun(
            contenders: bench.makeContenders(data), workloads: workloads, repetitions: options.repetitions,
            subject: bench.subject, references: bench.references, groups: bench.referenceGroups, sizes: options.sizes)
        let rows = try runner.run(data: data, scratch: scratch) { printError($0) }
        let notes = bench.notes(rows, data)
        let goals = bench.goals(rows, data)
        let totalSeconds = Stopwatch.seconds(start.duration(to: clock.now))

        var lines = [bench.title, machine.line]
        lines.append(
            "data: N = \(TableFormat.count(Double(data.count))) records (fillsync: \(TableFormat.count(Double(data.syncCount)))), "
                + "16 B random keys, JSON-like values \(data.valueLengths.minimum)–\(data.valueLengths.maximum) B "
                + "(mean \(TableFormat.fixed(data.valueLengths.mean, 0)) B), \(TableFormat.bytes(UInt64(data.rawBytes))) raw; "
                + "SplitMix64 seed 0x\(String(DataSet.seed, radix: 16))")
        if let sizes = options.sizes.line(for: workloads) { lines.append(sizes) }
        let capped = workloads.filter { $0.maximumRepetitions < options.repetitions }
            .map { " (\($0.rawValue): \($0.maximumRepetitions))" }.joined()
        lines.append(
            "median of \(options.repetitions) repetition\(options.repetitions == 1 ? "" : "s")\(capped); ops/s and µs/op per record "
                + "(per open for open, open-compacted and open-hints, per record opened for memory-compacted, per blob for assets, per commit for compact's commits, per record moved for "
                + "compact()); MB/s counts raw key+value bytes (keys for delete and readmissing; blob bytes for assets; the files replaced for "
                + "compact()); on disk = all files in the store's directory after the workload; "
                + "ratios = \(bench.subject) ops/s ÷ theirs (above 1: \(bench.subject) is faster)")
        lines.append(contentsOf: bench.legend)
        lines.append("")
        lines.append(ResultTable(
            rows: rows, subject: bench.subject, references: bench.references, columnTitles: bench.columnTitles,
            groups: bench.referenceGroups).render())
        if !notes.isEmpty {
            lines.append("")
            lines.append(contentsOf: notes)
        }
        if !goals.isEmpty {
            lines.append("")
            lines.append("goals (the project's targets; MISS = not reached in this run):")
            lines.append(contentsOf: goals.map { "  " + $0.line })
        }
        let appendix = bench.appendix(rows, data, goals)
        if !appendix.isEmpty {
            lines.append("")
            lines.append(contentsOf: appendix)
        }
        lines.append("")
        lines.append("total time: \(TableFormat.fixed(totalSeconds, 1)) s")
        print(lines.joined(separator: "\n"))

        if let path = options.jsonPath {
            let report = BenchReport(
                tool: bench.tool, started: started, totalSeconds: totalSeconds, machine: machine, records: data.count,
                syncRecords: data.syncCount, repetitions: options.repetitions, scale: options.scale, quick: options.quick,
                rawBytes: data.rawBytes, keyBytes: 16, valueBytesMinimum: data.valueLengths.minimum,
                valueBytesMean: data.valueLengths.mean, valueBytesMaximum: data.valueLengths.maximum,
                sizes: options.sizes, versions: bench.versions, rows: rows, notes: notes, goals: goals)
            try report.write(to: path)
            printError("wrote \(path)")
        }
    }

    /// Writes `text` and a newline to standard error (progress and errors; the table goes to
    /// standard output).
    public static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
