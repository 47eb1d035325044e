/// The command line of both benches.
public struct BenchOptions: Sendable {
    /// `--quick`: 5,000 records and one repetition.
    public var quick = false
    /// `--scale X`: multiplies the number of records.
    public var scale = 1.0
    /// `--full`: every workload at its full size, as if `--workloads` named them all: the run
    /// whose Markdown tables README.md shows.
    public var full = false
    /// `--workloads a,b,c`; nil runs the bench's default list.
    public var workloads: [Workload]?
    /// `--json FILE`: where to write every figure as JSON.
    public var jsonPath: String?
    /// `--compact-bytes SIZE`: the log `compact` builds before compacting; nil for the size that
    /// ``WorkloadSizes`` picks.
    public var compactBytes: Int?
    /// `--dir PATH`: where the scratch directory is made.
    public var directory = "/tmp"
    /// `--help`.
    public var help = false

    /// Records at scale 1.
    public static let defaultRecords = 100_000
    /// Records with `--quick` (at scale 1).
    public static let quickRecords = 5_000

    /// The defaults: no option given.
    public init() {}

    /// N: the number of records.
    public var recordCount: Int {
        max(1, Int((Double(quick ? Self.quickRecords : Self.defaultRecords) * scale).rounded()))
    }

    /// Repetitions of each workload: 1 with `--quick`, else 3.
    public var repetitions: Int { quick ? 1 : 3 }

    /// The sizes of `assets`, `compact` and `open-hints`.
    public var sizes: WorkloadSizes { WorkloadSizes(self) }

    /// A bad command line; the message says what is wrong.
    public struct UsageError: Error {
        public let message: String
    }

    /// Parses `arguments` (without the program name). Only workloads in `available` are accepted.
    public static func parse(_ arguments: [String], available: [Workload]) -> Result<BenchOptions, UsageError> {
        var options = BenchOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            var flag = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                flag = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() -> String? {
                if let inlineValue { return inlineValue }
                return remaining.popFirst()
            }
            switch flag {
            case "--quick":
                options.quick = true
            case "--full":
                options.full = true
            case "-h", "--help":
                options.help = true
            case "--scale":
                guard let text = value() else { return .failure(UsageError(message: "--scale needs a number")) }
                guard let scale = Double(text), scale.isFinite, scale > 0 else {
                    return .failure(UsageError(message: "--scale needs a positive number, not '\(text)'"))
                }
                options.scale = scale
            case "--workloads":
                guard let text = value() else { return .failure(UsageError(message: "--workloads needs a list")) }
                switch Workload.parseList(text) {
                case .success(let list):
                    if let missing = list.first(where: { !available.contains($0) }) {
                        return .failure(UsageError(message: "this bench does not run workload '\(missing.rawValue)'"))
                    }
                    options.workloads = list
                case .failure(let failure):
                    return .failure(UsageError(message: "unknown workload '\(failure.name)'"))
                }
            case "--compact-bytes":
                guard let text = value() else { return .failure(UsageError(message: "--compact-bytes needs a size")) }
                guard let bytes = parseSize(text), bytes > 0 else {
                    return .failure(UsageError(message: "--compact-bytes needs a positive size such as 256M or 1G, not '\(text)'"))
                }
                options.compactBytes = bytes
            case "--json":
                guard let path = value(), !path.isEmpty else { return .failure(UsageError(message: "--json needs a file")) }
                options.jsonPath = path
            case "--dir":
                guard let path = value(), !path.isEmpty else { return .failure(UsageError(message: "--dir needs a path")) }
                options.directory = path
            default:
                return .failure(UsageError(message: "unknown argument '\(argument)'"))
            }
        }
        if options.quick && options.full {
            return .failure(UsageError(message: "--quick and --full exclude each other"))
        }
        return .success(options)
    }

    /// A byte count, optionally followed by K, M or G (binary: 1K = 1,024 bytes); nil when it is
    /// not one.
    static func parseSize(_ text: String) -> Int? {
        let multipliers: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = Substring(text.uppercased())
        var multiplier = 1
        if let last = digits.last, let factor = multipliers[last] {
            multiplier = factor
            digits = digits.dropLast()
        }
        guard let number = Int(digits) else { return nil }
        let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : product
    }

    /// The `--help` text.
    public static func usage(tool: String, available: [Workload], defaults: [Workload]) -> String {
        let compacts = available.contains(.compact)
        var text = """
            usage: \(tool) [--quick | --full] [--scale X] [--workloads a,b,c]\(compacts ? " [--compact-bytes SIZE]" : "") \
            [--json FILE] [--dir PATH]

              --quick            N = \(quickRecords) records (times the scale) and 1 repetition instead of 3
              --full             the workloads run at full size, as when --workloads names them (README's run)
              --scale X          multiply N (default \(defaultRecords)) by X
              --workloads LIST   comma-separated workloads to run (default: \(defaults.map(\.rawValue).joined(separator: ",")))

            """
        if compacts {
            text += """
                  --compact-bytes S  the log compact builds before compacting, e.g. 256M (default: 1G times the
                                     scale with --full or when --workloads names compact, 128M in the default run,
                                     32M with --quick)

                """
        }
        text += """
              --json FILE        also write every figure, every repetition included, as JSON
              --dir PATH         make the scratch directory under PATH (default /tmp); it is removed at the end

            workloads:

            """
        let width = available.map(\.rawValue.count).max() ?? 0
        for workload in available {
            text += "  " + TableFormat.pad(workload.rawValue, width) + "  " + workload.summary + "\n"
        }
        text += "\nexit status: 0 done, 1 an error (printed), 2 a bad command line"
        return text
    }
}
