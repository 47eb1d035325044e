/// Runs every workload on every contender, repetitions interleaved, and collects the rows.
public struct BenchmarkRun {
    /// The contenders, in table order. The subject comes first; a contender that reads another's
    /// sample of the same repetition (the physical limit) must come after it.
    public var contenders: [any Contender]
    /// The workloads, in table order.
    public var workloads: [Workload]
    /// Repetitions of each (workload, contender); the table shows the median.
    public var repetitions: Int
    /// The contender the ratio columns are about.
    public var subject: String
    /// The contenders the subject is compared to, one ratio column each.
    public var references: [String]

    public init(contenders: [any Contender], workloads: [Workload], repetitions: Int, subject: String, references: [String]) {
        self.contenders = contenders
        self.workloads = workloads
        self.repetitions = repetitions
        self.subject = subject
        self.references = references
    }

    /// Runs it all on `data` under `scratch`, telling `progress` what it is doing.
    public func run(data: DataSet, scratch: ScratchDirectory, progress: @escaping (String) -> Void) throws -> [ResultRow] {
        let context = RunContext(data: data, scratch: scratch, progress: progress)
        var rows: [ResultRow] = []
        let clock = ContinuousClock()
        for workload in workloads {
            let started = clock.now
            defer {
                progress("  (\(workload.rawValue) took \(TableFormat.fixed(Stopwatch.seconds(started.duration(to: clock.now)), 1)) s)")
            }
            progress("\(workload.rawValue): \(workload.summary)")
            let running = contenders.filter { $0.supports(workload) }
            var samples: [String: [Sample]] = [:]
            for repetition in 0..<repetitions {
                context.currentRepetition = [:]
                for contender in running {
                    let sample: Sample
                    do {
                        sample = try contender.measure(workload, in: context)
                    } catch {
                        throw BenchError("\(workload.rawValue) on \(contender.name): \(error)")
                    }
                    context.currentRepetition[contender.name] = sample
                    samples[contender.name, default: []].append(sample)
                    progress("  \(contender.name) #\(repetition + 1): \(TableFormat.fixed(sample.seconds, 3)) s, "
                        + "\(TableFormat.count(sample.operationsPerSecond)) ops/s")
                }
            }
            for contender in running {
                rows.append(ResultRow(workload: workload, contender: contender.name, samples: samples[contender.name] ?? []))
            }
        }
        rows.computeRatios(subject: subject, references: references)
        return rows
    }
}
