import Engine
import Snapshot

/// `walstore get STORE KEY` and `walstore scan STORE`: the engine's keys, for debugging.
enum GetCommand {
    static let spec = CommandSpec(
        name: "get", usage: "get STORE KEY [--hex] [--json]",
        summary:
            "Prints the value of one engine key. KEY is in the escaped form (printable ASCII as is, \\\\ for a backslash, \\xHH for any byte; R\\x00 is not R0) or, with --hex, hex digits.",
        positionals: ["STORE", "KEY"],
        flags: ["hex": "KEY is hex, and the value is printed in hex", "json": "print one JSON object (docs/tool.md lists its fields)"],
        details: "Exit 1 when the store has no such key. Reads through a copy-on-write view: the store's files stay byte-identical.")

    static func run(_ arguments: Arguments, _ output: StandardOutput) throws -> ExitCode {
        let hex = arguments.has("hex")
        guard let key = KeyText.parse(arguments.positionals[1], isHex: hex), !key.isEmpty else {
            throw ToolError.usage("\(arguments.positionals[1]) is not a key in the \(hex ? "hex" : "escaped") form")
        }
        let (store, _) = try StoreAccess.openReadOnly(arguments.positionals[0])
        defer { try? store.close() }
        let value = try store.value(forKey: key)
        if arguments.has("json") {
            output.line(
                JSONValue.object([
                    ("key", .string(KeyText.escaped(key))), ("found", .bool(value != nil)),
                    ("bytes", value.map { .int($0.count) } ?? .null),
                    ("value", value.map { .string(KeyText.escaped($0)) } ?? .null),
                    ("valueHex", value.map { .string(KeyText.hex($0)) } ?? .null),
                ]).text)
        } else if let value {
            output.line(hex ? KeyText.hex(value) : KeyText.escaped(value))
        } else {
            writeStandardError("walstore get: no such key \(KeyText.escaped(key))\n")
        }
        return value == nil ? .problems : .ok
    }
}

enum ScanCommand {
    static let spec = CommandSpec(
        name: "scan", usage: "scan STORE [--prefix P | --from K --to K] [--limit N] [--values] [--hex] [--json]",
        summary:
            "Lists engine keys in order: each line the key, its value's size and the commit that wrote it (and the value with --values). Keys in the escaped form (\\xHH for a byte that is not printable ASCII) or, with --hex, hex.",
        positionals: ["STORE"],
        flags: [
            "values": "print each value too", "hex": "keys given and printed in hex (values too)",
            "json": "print one JSON object (docs/tool.md lists its fields)",
        ],
        options: [
            "prefix": "only keys that start with P", "from": "keys from K (inclusive)", "to": "keys below K (exclusive)", "limit": "at most N keys",
        ],
        details: "Reads through a copy-on-write view: the store's files stay byte-identical.")

    static func run(_ arguments: Arguments, _ output: StandardOutput) throws -> ExitCode {
        let hex = arguments.has("hex")
        func key(_ option: String) throws(ToolError) -> [UInt8]? {
            guard let text = arguments.value(option) else { return nil }
            guard let bytes = KeyText.parse(text, isHex: hex) else {
                throw ToolError.usage("--\(option) \(text) is not a key in the \(hex ? "hex" : "escaped") form")
            }
            return bytes
        }
        var range = LogStore.KeyRange.all
        if let prefix = try key("prefix") {
            guard arguments.value("from") == nil && arguments.value("to") == nil else {
                throw ToolError.usage("--prefix cannot be given with --from or --to")
            }
            range = .prefix(prefix)
        }
        if let from = try key("from") { range.lower = .inclusive(from) }
        if let to = try key("to") { range.upper = .exclusive(to) }
        var limit: Int?
        if let text = arguments.value("limit") {
            guard let n = Int(text), n >= 0 else { throw ToolError.usage("--limit takes a count, not \(text)") }
            limit = n
        }
        let (store, _) = try StoreAccess.openReadOnly(arguments.positionals[0])
        defer { try? store.close() }
        var scan = try store.scan(range, limit: limit)
        let withValues = arguments.has("values")
        let show = { (bytes: [UInt8]) -> String in hex ? KeyText.hex(bytes) : KeyText.escaped(bytes) }
        var entries: [JSONValue] = []
        let json = arguments.has("json")
        while let entry = try scan.next() {
            let value = try entry.value()
            if json {
                var members: [(String, JSONValue)] = [
                    ("key", .string(show(entry.key))), ("bytes", .int(value.count)), ("sequence", .uint(entry.sequence)),
                    ("isBlob", .bool(entry.isBlob)),
                ]
                if withValues { members.append(("value", .string(show(value)))) }
                entries.append(.object(members))
            } else {
                var line = "\(show(entry.key))  \(value.count) bytes  seq \(entry.sequence)" + (entry.isBlob ? "  blob" : "")
                if withValues { line += "  = " + show(value) }
                output.line(line)
            }
        }
        if json { output.line(JSONValue.object([("count", .int(entries.count)), ("entries", .array(entries))]).text) }
        return .ok
    }
}
