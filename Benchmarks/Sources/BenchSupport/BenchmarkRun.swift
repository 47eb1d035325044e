/// Runs every workload on every contender, repetitions interleaved, and collects the rows.
public struct BenchmarkRun {
    /// The contenders, in table order. The subject comes first; a contender that reads another's
    /// sample of the same repetition (the physical limit) must come after it.
    public var contenders: [any Contender]
    /// The workloads, in table order.
    public var workloads: [Workload]
    /// Repetitions of each (workload, contender), at most the workload's
    /// ``Workload/maximumRepetitions``; the table shows the median.
    public var repetitions: Int
    /// The contender the ratio columns are about.
    public var subject: String
    /// The contenders the subject is compared to, one ratio column each.
    public var references: [String]
    /// The references that are the fastest of several contenders.
    public var groups: [ReferenceGroup]
    /// The sizes of `assets`, `compact` and `open-hints`.
    public var sizes: WorkloadSizes

    public init(
        contenders: [any Contender], workloads: [Workload], repetitions: Int, subject: String, references: [String],
        groups: [ReferenceGroup] = [], sizes: WorkloadSizes = WorkloadSizes(BenchOptions())
    ) {
        self.groups = groups
        self.contenders = contenders
        self.workloads = workloads
        self.repetitions = repetitions
        self.subject = subject
        self.references = references
        self.sizes = sizes
    }

    /// Runs it all on `data` under `scratch`, telling `progress` what it is doing.
    public func run(data: DataSet, scratch: ScratchDirectory, progress: @escaping (String) -> Void) throws -> [ResultRow] {
        let context = RunContext(data: data, scratch: scratch, sizes: sizes, progress: progress)
        var rows: [ResultRow] = []
        let clock = ContinuousClock()
        for workload in workloads {
            let started = clock.now
            defer {
                progress("  (\(workload.rawValue) took \(TableFormat.fixed(Stopwatch.seconds(started.duration(to: clock.now)), 1)) s)")
            }
            progress("\(workload.rawValue): \(workload.summary)")
            let running = contenders.filter { $0.supports(workload) }
            var samples: [RowKey: [Sample]] = [:]
            // Parts in the order first measured: the table's order within the workload.
            var parts: [String?] = []
            for repetition in 0..<min(repetitions, workload.maximumRepetitions) {
                context.currentRepetition = [:]
                for contender in running {
                    let measured: [Measurement]
                    do {
                        measured = try contender.measureParts(workload, in: context)
                    } catch {
                        throw BenchError("\(workload.rawValue) on \(contender.name): \(error)")
                    }
                    for measurement in measured {
                        let sample = measurement.sample
                        if measurement.part == nil { context.currentRepetition[contender.name] = sample }
                        if !parts.contains(measurement.part) { parts.append(measurement.part) }
                        samples[RowKey(part: measurement.part, contender: contender.name), default: []].append(sample)
                        progress("  \(contender.name) #\(repetition + 1)\(measurement.part.map { " " + $0 } ?? ""): "
                            + "\(TableFormat.fixed(sample.seconds, 3)) s, \(TableFormat.count(sample.operationsPerSecond)) ops/s")
                    }
                }
            }
            for part in parts {
                for contender in running {
                    guard let measured = samples[RowKey(part: part, contender: contender.name)] else { continue }
                    rows.append(ResultRow(workload: workload, part: part, contender: contender.name, samples: measured))
                }
            }
        }
        rows.computeRatios(subject: subject, references: references, groups: groups)
        return rows
    }

    /// The samples of one row while they are collected.
    private struct RowKey: Hashable {
        var part: String?
        var contender: String
    }
}
