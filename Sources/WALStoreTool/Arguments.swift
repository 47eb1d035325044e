/// What one command accepts, and its help text.
struct CommandSpec {
    var name: String
    /// The synopsis after `walstore`.
    var usage: String
    var summary: String
    /// Names of the positional arguments, in order.
    var positionals: [String]
    /// Flags without a value (`--json`).
    var flags: [String: String] = [:]
    /// Options with a value (`--entity E`).
    var options: [String: String] = [:]
    /// Options that may be given more than once.
    var repeatable: Set<String> = []
    var details: String = ""

    var help: String {
        var text = "usage: walstore \(usage)\n\n\(summary)\n"
        if !details.isEmpty { text += "\n\(details)\n" }
        let all = options.map { ("--\($0.key) \($0.key.uppercased())", $0.value) } + flags.map { ("--\($0.key)", $0.value) }
        if !all.isEmpty {
            text += "\noptions:\n"
            let width = all.map(\.0.count).max() ?? 0
            for (name, about) in all.sorted(by: { $0.0 < $1.0 }) {
                text += "  " + name + String(repeating: " ", count: width - name.count + 2) + about + "\n"
            }
        }
        text += "\nexit codes: 0 ok, 1 problems found, 2 usage, 3 locked, 4 corrupt, 5 not a store, 6 refused, 7 failed (docs/tool.md)\n"
        return text
    }
}

/// A command line, checked against its command's spec.
struct Arguments {
    var positionals: [String] = []
    var flags: Set<String> = []
    var options: [String: [String]] = [:]

    func has(_ flag: String) -> Bool { flags.contains(flag) }
    func value(_ option: String) -> String? { options[option]?.last }
    func values(_ option: String) -> [String] { options[option] ?? [] }

    /// `words` (after the command name) parsed as `spec` says; `--help` is the caller's.
    static func parse(_ words: [String], as spec: CommandSpec) throws(ToolError) -> Arguments {
        var result = Arguments()
        var i = 0
        var onlyPositionals = false
        while i < words.count {
            let word = words[i]
            i += 1
            if onlyPositionals || !word.hasPrefix("--") || word == "-" {
                if word.hasPrefix("-") && !onlyPositionals && word != "-" {
                    throw .usage("unknown flag \(word); see walstore \(spec.name) --help")
                }
                result.positionals.append(word)
                continue
            }
            if word == "--" {
                onlyPositionals = true
                continue
            }
            var name = String(word.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if spec.flags[name] != nil {
                guard inline == nil else { throw .usage("--\(name) takes no value") }
                result.flags.insert(name)
            } else if spec.options[name] != nil {
                let value: String
                if let inline {
                    value = inline
                } else {
                    guard i < words.count else { throw .usage("--\(name) needs a value") }
                    value = words[i]
                    i += 1
                }
                if result.options[name] != nil && !spec.repeatable.contains(name) {
                    throw .usage("--\(name) is given twice")
                }
                result.options[name, default: []].append(value)
            } else {
                throw .usage("unknown flag --\(name); see walstore \(spec.name) --help")
            }
        }
        guard result.positionals.count == spec.positionals.count else {
            let expected = spec.positionals.joined(separator: " ")
            throw .usage(
                "expected \(expected), got \(result.positionals.count) argument\(result.positionals.count == 1 ? "" : "s"); usage: walstore \(spec.usage)"
            )
        }
        return result
    }
}
