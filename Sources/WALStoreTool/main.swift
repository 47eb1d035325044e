// walstore: the command-line tool for a store (docs/tool.md).
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every command: its spec and what runs it.
let commands: [(spec: CommandSpec, run: (Arguments, StandardOutput) throws -> ExitCode)] = [
    (InfoCommand.spec, InfoCommand.run),
    (VerifyCommand.spec, VerifyCommand.run),
    (StatsCommand.spec, StatsCommand.run),
    (CompactCommand.spec, CompactCommand.run),
    (SalvageCommand.spec, SalvageCommand.run),
    (DumpCommand.spec, DumpCommand.run),
    (GetCommand.spec, GetCommand.run),
    (ScanCommand.spec, ScanCommand.run),
    (ExportCommand.spec, ExportCommand.run),
    (ImportCommand.spec, ImportCommand.run),
]

@MainActor func overview() -> String {
    var text = "usage: walstore COMMAND STORE [options]   (walstore COMMAND --help for each)\n\ncommands:\n"
    for (spec, _) in commands {
        text +=
            "  " + spec.name + String(repeating: " ", count: 9 - spec.name.count)
            + spec.summary.prefix(while: { $0 != ":" && $0 != "(" && $0 != "." }) + "\n"
    }
    text += "\nexit codes: 0 ok, 1 problems found, 2 usage, 3 locked, 4 corrupt, 5 not a store, 6 refused, 7 failed (docs/tool.md)\n"
    return text
}

@MainActor func main() -> Int32 {
    let words = Array(CommandLine.arguments.dropFirst())
    let output = StandardOutput()
    defer { output.flush() }
    guard let name = words.first else {
        writeStandardError(overview())
        return ExitCode.usage.rawValue
    }
    if name == "--help" || name == "-h" || name == "help" {
        if words.count > 1, let command = commands.first(where: { $0.spec.name == words[1] }) {
            output.line(command.spec.help)
        } else {
            output.line(overview())
        }
        return ExitCode.ok.rawValue
    }
    guard let command = commands.first(where: { $0.spec.name == name }) else {
        writeStandardError("walstore: unknown command \(name)\n\n" + overview())
        return ExitCode.usage.rawValue
    }
    let rest = Array(words.dropFirst())
    if rest.contains("--help") || rest.contains("-h") {
        output.line(command.spec.help)
        return ExitCode.ok.rawValue
    }
    let json = rest.contains("--json")
    do {
        let arguments = try Arguments.parse(rest, as: command.spec)
        return try command.run(arguments, output).rawValue
    } catch {
        var failure = ToolError.from(error)
        // One prefix per message: a message that already names the command keeps its own words.
        let prefix = "walstore \(name): "
        while failure.message.hasPrefix(prefix) { failure.message.removeFirst(prefix.count) }
        var line = "walstore \(name): \(failure.message)"
        if let path = failure.path, !failure.message.contains(path) { line += " [\(path)" + (failure.offset.map { " at offset \($0)" } ?? "") + "]" }
        writeStandardError(line + "\n")
        if json {
            output.line(
                JSONValue.object([
                    (
                        "error",
                        .object([
                            ("exitCode", .int(Int(failure.exitCode.rawValue))), ("code", .string(failure.exitCode.name)),
                            ("message", .string(failure.message)), ("path", .optional(failure.path)), ("offset", .optional(failure.offset)),
                        ])
                    )
                ]).text)
        }
        return failure.exitCode.rawValue
    }
}

exit(main())
