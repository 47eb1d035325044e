import BenchSupport

/// The command line of `walstore-datastore-bench`.
///
/// - `--posts N`: posts of the main workloads (default 100,000; at least 1,000).
/// - `--tags N`: tags the posts pick their two from (default 100).
/// - `--users N`: objects of `save-million` (default 1,000,000).
/// - `--json-posts N`: the whole-file JSON store's cap (default 10,000).
/// - `--quick`: CI's smoke scale (2,000 posts, 20,000 users, JSON store at 2,000 posts).
/// - `--contenders a,b`: run only these (`wal`, `sqlite-full`, `sqlite-normal`, `json`).
/// - `--json PATH`, `--svg PATH`: write the results as JSON, and the chart of WALStore's ratios
///   to SQLite FULL as SVG.
/// - `--child WORKLOAD --contender X --dir D`: run one part in this process (the harness
///   starts itself so for each contender, so that memory is measured per contender).
struct HarnessOptions {
    var posts = 100_000
    var tags = 100
    var users = 1_000_000
    var jsonPosts = 10_000
    var quick = false
    var contenders = ContenderKind.allCases
    var jsonPath: String?
    var svgPath: String?
    var child: String?
    var contender: ContenderKind?
    var directory: String?

    init(_ arguments: [String]) throws {
        var rest = arguments.dropFirst()
        func number(_ flag: String, atLeast minimum: Int) throws -> Int {
            guard let value = rest.popFirst().flatMap({ Int($0) }), value >= minimum else {
                throw BenchError("\(flag) needs a number of at least \(minimum)")
            }
            return value
        }
        func text(_ flag: String) throws -> String {
            guard let value = rest.popFirst() else { throw BenchError("\(flag) needs a value") }
            return value
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick":
                quick = true
                posts = 2_000
                users = 20_000
                jsonPosts = 2_000
            case "--posts": posts = try number(argument, atLeast: 1_000)
            case "--tags": tags = try number(argument, atLeast: 2)
            case "--users": users = try number(argument, atLeast: 10_000)
            case "--json-posts": jsonPosts = try number(argument, atLeast: 1_000)
            case "--contenders":
                contenders = try text(argument).split(separator: ",").map { name in
                    guard let kind = ContenderKind(flag: String(name)) else { throw BenchError("unknown contender \(name)") }
                    return kind
                }
            case "--json": jsonPath = try text(argument)
            case "--svg": svgPath = try text(argument)
            case "--markdown": break  // the Markdown table is always printed
            case "--child": child = try text(argument)
            case "--contender":
                let name = try text(argument)
                guard let kind = ContenderKind(flag: name) else { throw BenchError("unknown contender \(name)") }
                contender = kind
            case "--dir": directory = try text(argument)
            default:
                throw BenchError("unknown argument \(argument); see Benchmarks/README.md (--posts N, --quick, --json PATH, --svg PATH)")
            }
        }
    }

    /// The arguments that give a child this run's scale.
    var scaleArguments: [String] {
        ["--posts", "\(posts)", "--tags", "\(tags)", "--users", "\(users)", "--json-posts", "\(jsonPosts)"]
    }

    /// Single-post saves timed by `save-single`.
    var singleSaves: Int { quick ? 50 : 200 }
}
