import Engine
import Foundation
import Snapshot

/// `walstore dump STORE [--entity E] [--where FIELD=VALUE]`: records as JSON Lines in the
/// CloudKit record shape.
enum DumpCommand {
    static let spec = CommandSpec(
        name: "dump", usage: "dump STORE [--entity E] [--where FIELD=VALUE]... [--progress]",
        summary:
            "Prints a WALDataStore's records as JSON Lines, one CloudKit record dictionary a line: {\"recordName\", \"recordType\" (CD_<Root>), \"fields\" {name: {value, type}}}, then its CDMR link records.",
        positionals: ["STORE"],
        flags: ["progress": "draw the progress line even when standard error is not a terminal"],
        options: [
            "entity": "only objects of entity E and its sub-entities (no links)",
            "where":
                "only records whose field FIELD (CD_ prefix optional) reads VALUE: a string as is, a number, a TIMESTAMP in milliseconds, a reference's record name (no links)",
        ],
        repeatable: ["where"],
        details:
            "Assets are file references ({\"size\", \"downloadURL\"}, type ASSETID) naming where walstore export --cloudkit writes their bytes; dump writes no files. Reads through a copy-on-write view: the store's files stay byte-identical."
    )

    static func run(_ arguments: Arguments, _ output: StandardOutput) throws -> ExitCode {
        let path = arguments.positionals[0]
        var filters: [(name: String, value: String)] = []
        for condition in arguments.values("where") {
            guard let equals = condition.firstIndex(of: "="), equals != condition.startIndex else {
                throw ToolError.usage("walstore dump: --where takes FIELD=VALUE, not \(condition)")
            }
            var name = String(condition[..<equals])
            if !name.hasPrefix("CD_") { name = "CD_" + name }
            filters.append((name, String(condition[condition.index(after: equals)...])))
        }
        let (store, _) = try StoreAccess.openReadOnly(path)
        defer { try? store.close() }
        let inspector = try StoreAccess.inspector(store)
        var roots: [String]? = nil
        var entities: Set<String>? = nil
        if let entity = arguments.value("entity") {
            guard inspector.schema.entity(named: entity) != nil else {
                throw ToolError.usage(
                    "walstore dump: the schema has no entity \(entity); it has " + inspector.schema.entities.map(\.name).joined(separator: ", "))
            }
            roots = [inspector.root(of: entity)]
            entities = Set([entity] + inspector.schema.subentities(of: entity).map(\.name))
        }
        let export = CloudKitExport(inspector: inspector)
        let progress = ProgressLine("dump \(path)", forced: arguments.has("progress"))
        let total = try (roots ?? inspector.roots.map(\.name)).reduce(0) { $0 + (try inspector.recordCount(root: $1)) }
        var done = 0
        for root in roots ?? inspector.roots.map(\.name) {
            try export.forEachObject(root: root) { snapshot in
                done += 1
                if done % 1024 == 0 { progress.update(done, of: total) }
                if let entities, !entities.contains(snapshot.persistentIdentifier.entityName) { return }
                let (record, _) = export.record(of: snapshot)
                guard filters.allSatisfy({ filter in record[filter.name].map { Self.reads($0, filter.value) } ?? false }) else { return }
                var w = JSONWriter()
                w.record(record)
                output.line(bytes: w.bytes)
            }
        }
        if roots == nil && filters.isEmpty {
            try export.forEachLink { link in
                var w = JSONWriter()
                w.record(link)
                output.line(bytes: w.bytes)
            }
        }
        progress.update(total, of: total)
        progress.finish()
        return .ok
    }

    /// Whether `field` reads as `text`.
    static func reads(_ field: CloudKitField, _ text: String) -> Bool {
        switch field {
        case .string(let s): return s == text
        case .int64(let i): return Int64(text) == i
        case .double(let d), .timestamp(let d): return Double(text) == d
        case .bytes(let data): return data.base64EncodedString() == text
        case .asset(let path, _): return path == text
        default: return false
        }
    }
}
