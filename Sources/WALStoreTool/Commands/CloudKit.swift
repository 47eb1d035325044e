import Engine
import Snapshot

/// `walstore export --cloudkit DIR STORE` and `walstore import --cloudkit DIR STORE`.
enum ExportCommand {
    static let spec = CommandSpec(
        name: "export", usage: "export --cloudkit DIR STORE [--operation create|forceReplace|forceUpdate] [--json] [--progress]",
        summary:
            "Writes a WALDataStore as CloudKit Web Services records/modify request bodies (JSON) into DIR, for Core Data's zone com.apple.coredata.cloudkit.zone in the private database: requests/NNNNNN.json (at most 200 operations and 2 MB each), assets/ (the bytes of each CD_<name>_ckAsset field, to upload with assets/upload), manifest.json (the database, the schema, the request files and the asset uploads with each file's size and SHA-256).",
        positionals: ["STORE"],
        flags: [
            "json": "print one JSON object (docs/tool.md lists its fields)",
            "progress": "draw the progress line even when standard error is not a terminal",
        ],
        options: [
            "cloudkit": "the export directory: missing or empty",
            "operation":
                "every operation's operationType: create (the default; a record that exists fails), forceReplace or forceUpdate (a retried upload is safe)",
        ],
        details:
            "Reads the store through a copy-on-write view: its files stay byte-identical. A DIR that is not empty is refused (exit 6), as is a record CloudKit cannot take (a non-finite number, named with its field); a refused export leaves DIR as it was."
    )

    static func run(_ arguments: Arguments, _ output: StandardOutput) throws -> ExitCode {
        guard let directory = arguments.value("cloudkit") else {
            throw ToolError.usage("--cloudkit DIR is required (the only export format)")
        }
        let path = arguments.positionals[0]
        var options = CloudKitExport.Options()
        if let operation = arguments.value("operation") {
            guard let type = CloudKitExport.OperationType(rawValue: operation) else {
                throw ToolError.usage(
                    "--operation takes " + CloudKitExport.OperationType.allCases.map(\.rawValue).joined(separator: ", ") + ", not \(operation)")
            }
            options.operationType = type
        }
        let (store, _) = try StoreAccess.openReadOnly(path)
        defer { try? store.close() }
        let export = CloudKitExport(inspector: try StoreAccess.inspector(store), options: options)
        let progress = ProgressLine("export \(path)", forced: arguments.has("progress"))
        let clock = ContinuousClock()
        let start = clock.now
        let summary = try export.write(to: directory) { progress.update($0, of: $1) }
        progress.finish()
        let seconds = ProgressLine.seconds(clock.now - start)
        if arguments.has("json") {
            output.line(
                JSONValue.object([
                    ("directory", .string(directory)), ("records", .int(summary.records)), ("links", .int(summary.links)),
                    ("assets", .int(summary.assets)), ("assetBytes", .int(summary.assetBytes)), ("requests", .int(summary.requests)),
                    ("requestBytes", .int(summary.requestBytes)), ("zoneName", .string(export.options.zoneName)),
                    ("database", .string(export.options.database)), ("operationType", .string(export.options.operationType.rawValue)),
                    ("seconds", .double(seconds)),
                ]).text)
        } else {
            output.line(
                "exported \(summary.records) records, \(summary.links) links and \(summary.assets) assets in \(summary.requests) requests to \(directory)"
            )
        }
        return .ok
    }
}

enum ImportCommand {
    static let spec = CommandSpec(
        name: "import", usage: "import --cloudkit DIR STORE [--json] [--progress]",
        summary:
            "Makes a new WALDataStore at STORE (missing or an empty directory) from a directory walstore export --cloudkit wrote: the schema its manifest names, every record under its record name's primary key, its assets and CDMR links.",
        positionals: ["STORE"],
        flags: [
            "json": "print one JSON object (docs/tool.md lists its fields)",
            "progress": "draw the progress line even when standard error is not a terminal",
        ],
        options: ["cloudkit": "the export directory to read"],
        details: "Every record is checked against the schema before the store is made; a refused import (exit 6) leaves nothing at STORE.")

    static func run(_ arguments: Arguments, _ output: StandardOutput) throws -> ExitCode {
        guard let directory = arguments.value("cloudkit") else {
            throw ToolError.usage("--cloudkit DIR is required (the only import format)")
        }
        let path = arguments.positionals[0]
        let progress = ProgressLine("import \(path)", forced: arguments.has("progress"))
        progress.step("reading \(directory)")
        let clock = ContinuousClock()
        let start = clock.now
        var options = LogStore.Options()
        options.compaction = .manual
        let summary = try CloudKitImport.makeStore(from: directory, at: path, options: options) { progress.update($0, of: $1) }
        progress.finish()
        let seconds = ProgressLine.seconds(clock.now - start)
        if arguments.has("json") {
            output.line(
                JSONValue.object([
                    ("store", .string(path)), ("records", .int(summary.records)), ("links", .int(summary.links)),
                    ("assets", .int(summary.assets)), ("seconds", .double(seconds)),
                ]).text)
        } else {
            output.line("imported \(summary.records) records, \(summary.links) links and \(summary.assets) assets into \(path)")
        }
        return .ok
    }
}
