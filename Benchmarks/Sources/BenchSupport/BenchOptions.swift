/// The command line of both benches.
public struct BenchOptions: Sendable {
    /// `--quick`: 5,000 records and one repetition.
    public var quick = false
    /// `--scale X`: multiplies the number of records.
    public var scale = 1.0
    /// `--workloads a,b,c`; nil runs the bench's default list.
    public var workloads: [Workload]?
    /// `--json FILE`: where to write every figure as JSON.
    public var jsonPath: String?
    /// `--dir PATH`: where the scratch directory is made.
    public var directory = "/tmp"
    /// `--help`.
    public var help = false

    /// Records at scale 1.
    public static let defaultRecords = 100_000
    /// Records with `--quick` (at scale 1).
    public static let quickRecords = 5_000

    /// N: the number of records.
    public var recordCount: Int {
        max(1, Int((Double(quick ? Self.quickRecords : Self.defaultRecords) * scale).rounded()))
    }

    /// Repetitions of each workload: 1 with `--quick`, else 3.
    public var repetitions: Int { quick ? 1 : 3 }

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
        return .success(options)
    }

    /// The `--help` text.
    public static func usage(tool: String, available: [Workload], defaults: [Workload]) -> String {
        var text = """
            usage: \(tool) [--quick] [--scale X] [--workloads a,b,c] [--json FILE] [--dir PATH]

              --quick            N = \(quickRecords) records (times the scale) and 1 repetition instead of 3
              --scale X          multiply N (default \(defaultRecords)) by X
              --workloads LIST   comma-separated workloads to run (default: \(defaults.map(\.rawValue).joined(separator: ",")))
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
