/// The command line: `[--quick] [--demo-only] [--dir PATH]`.
struct Arguments {
    /// Shrink every workload so the whole run takes a few seconds.
    var quick = false
    /// Run the demo only, no figures.
    var demoOnly = false
    /// Where the temporary directories are made.
    var directory = "/tmp"

    static let usage = """
        usage: walstore-example [--quick] [--demo-only] [--dir PATH]
          --quick      small workloads: the whole run takes a few seconds (for CI)
          --demo-only  run the API demo only, skip the figures
          --dir PATH   make temporary directories under PATH (default /tmp)
        """

    /// What the command line asks for.
    enum Parsed {
        case run(Arguments)
        case help
        case invalid(String)
    }

    static func parse(_ words: some Sequence<String>) -> Parsed {
        var arguments = Arguments()
        var words = words.makeIterator()
        while let word = words.next() {
            switch word {
            case "--quick": arguments.quick = true
            case "--demo-only": arguments.demoOnly = true
            case "--dir":
                guard let path = words.next(), !path.isEmpty else { return .invalid("--dir needs a path") }
                arguments.directory = path
            case "-h", "--help": return .help
            default: return .invalid("unknown argument '\(word)'")
            }
        }
        return .run(arguments)
    }
}
