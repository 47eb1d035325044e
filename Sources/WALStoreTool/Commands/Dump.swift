import Engine
import Foundation
import Snapshot

/// `walstore dump STORE [--entity E] [--where FIELD=VALUE]`: records as JSON Lines in the
/// CloudKit record shape.
enum DumpCommand {
    static let spec = CommandSpec(
        name: "dump", usage: "dump STORE [--entity E] [--where FIELD=VALUE]... [--format jsonl|table] [--progress]",
        summary:
            "Prints a WALDataStore's records as JSON Lines, one CloudKit record dictionary a line: {\"recordName\", \"recordType\" (CD_<Root>), \"fields\" {name: {value, type}}}, then its CDMR link records.",
        positionals: ["STORE"],
        flags: ["progress": "draw the progress line even when standard error is not a terminal"],
        options: [
            "entity": "only objects of entity E and its sub-entities (no links)",
            "format": "jsonl (the default): one JSON record a line; table: one aligned table per record type, a row per record",
            "where":
                "only records whose field FIELD (CD_ prefix optional) reads VALUE: a string as is, a number, a TIMESTAMP in milliseconds, a reference's record name (no links)",
        ],
        repeatable: ["where"],
        details:
            "Assets are file references ({\"size\", \"file\"}, type ASSETID) naming where walstore export --cloudkit writes their bytes; dump writes no files. Reads through a copy-on-write view: the store's files stay byte-identical."
    )

    static func run(_ arguments: Arguments, _ output: StandardOutput) throws -> ExitCode {
        let path = arguments.positionals[0]
        var filters: [(name: String, value: String)] = []
        for condition in arguments.values("where") {
            guard let equals = condition.firstIndex(of: "="), equals != condition.startIndex else {
                throw ToolError.usage("--where takes FIELD=VALUE, not \(condition)")
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
                    "the schema has no entity \(entity); it has " + inspector.schema.entities.map(\.name).joined(separator: ", "))
            }
            roots = [inspector.root(of: entity)]
            entities = Set([entity] + inspector.schema.subentities(of: entity).map(\.name))
        }
        let fieldNames = Self.fieldNames(inspector, entities: entities.map(Array.init) ?? inspector.schema.entities.map(\.name))
        for filter in filters where !fieldNames.contains(filter.name) {
            throw ToolError.usage(
                "--where names no field \(filter.name)\(arguments.value("entity").map { " of \($0)" } ?? ""); the fields are "
                    + fieldNames.sorted().joined(separator: ", "))
        }
        let format = arguments.value("format") ?? "jsonl"
        guard format == "jsonl" || format == "table" else {
            throw ToolError.usage("--format takes jsonl or table, not \(format)")
        }
        var table = RecordTable()
        func emit(_ record: CloudKitRecord) {
            if format == "table" {
                table.add(record, output)
                return
            }
            var w = JSONWriter()
            w.record(record)
            output.line(bytes: w.bytes)
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
                emit(record)
            }
        }
        if roots == nil && filters.isEmpty {
            try export.forEachLink { emit($0) }
        }
        table.finish(output)
        progress.update(total, of: total)
        progress.finish()
        return .ok
    }

    /// Every field name a record of `entities` can have: `CD_entityName`, `CD_<attribute>` (and
    /// `CD_<attribute>_ckAsset` for a `data` attribute, which is an asset when external or large),
    /// `CD_<to-one relationship>`.
    static func fieldNames(_ inspector: StoreInspector, entities: [String]) -> Set<String> {
        var names: Set<String> = ["CD_entityName"]
        for entity in entities {
            for property in inspector.schema.allProperties(of: entity) {
                switch property {
                case .attribute(let a) where !a.options.contains(.ephemeral):
                    if case .data = a.valueType { names.insert("CD_\(a.name)_ckAsset") }
                    if case .data = a.valueType, inspector.isExternal(a) { continue }
                    names.insert("CD_\(a.name)")
                case .relationship(let r) where !r.isToMany: names.insert("CD_\(r.name)")
                default: continue
                }
            }
        }
        return names
    }

    /// The table output: the records of one record type buffered, then printed as one table
    /// (a header of `recordName` and the fields' names less `CD_`, a row per record, columns
    /// aligned), a blank line between two tables.
    struct RecordTable {
        private var recordType: String?
        private var rows: [CloudKitRecord] = []
        private var printed = false

        mutating func add(_ record: CloudKitRecord, _ output: StandardOutput) {
            if record.recordType != recordType { finish(output) }
            recordType = record.recordType
            rows.append(record)
        }

        mutating func finish(_ output: StandardOutput) {
            guard let recordType, !rows.isEmpty else { return }
            var columns: [String] = []
            var seen: Set<String> = []
            for row in rows {
                for field in row.fields where seen.insert(field.name).inserted { columns.append(field.name) }
            }
            let header = ["recordName"] + columns.map { $0.hasPrefix("CD_") ? String($0.dropFirst(3)) : $0 }
            let cells = rows.map { row in [row.recordName] + columns.map { name in row[name].map(Self.text) ?? "" } }
            var widths = header.map(\.count)
            for line in cells { for (i, cell) in line.enumerated() { widths[i] = max(widths[i], cell.count) } }
            func render(_ line: [String]) -> String {
                var text = ""
                for (i, cell) in line.enumerated() {
                    text += i == line.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count + 2)
                }
                return text
            }
            if printed { output.line("") }
            output.line("\(recordType) (\(rows.count) record\(rows.count == 1 ? "" : "s"))")
            output.line(render(header))
            for line in cells { output.line(render(line)) }
            printed = true
            rows = []
            self.recordType = nil
        }

        /// A field's value in one cell: text as is (tabs and new lines escaped), numbers,
        /// `<N bytes>` for bytes, `<asset N bytes>` for an asset, a list in brackets.
        static func text(_ field: CloudKitField) -> String {
            func clean(_ s: String) -> String {
                s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
                    .replacingOccurrences(of: "\t", with: "\\t")
            }
            switch field {
            case .string(let s): return clean(s)
            case .int64(let i): return String(i)
            case .double(let d): return String(d)
            case .timestamp(let ms): return String(ms)
            case .bytes(let d): return "<\(d.count) bytes>"
            case .asset(_, let size): return "<asset \(size) bytes>"
            case .stringList(let l): return "[" + l.map(clean).joined(separator: ", ") + "]"
            case .int64List(let l): return "[" + l.map(String.init).joined(separator: ", ") + "]"
            case .doubleList(let l): return "[" + l.map { String($0) }.joined(separator: ", ") + "]"
            case .timestampList(let l): return "[" + l.map { String($0) }.joined(separator: ", ") + "]"
            case .bytesList(let l): return "[" + l.map { "<\($0.count) bytes>" }.joined(separator: ", ") + "]"
            }
        }
    }

    /// Whether `field` reads as `text`.
    static func reads(_ field: CloudKitField, _ text: String) -> Bool {
        switch field {
        case .string(let s): return s == text
        case .int64(let i): return Int64(text) == i
        case .double(let d): return Double(text) == d
        case .timestamp(let ms): return Int64(text) == ms || Double(text).map { $0.rounded() == Double(ms) } == true
        case .bytes(let data): return data.base64EncodedString() == text
        case .asset(let path, _): return path == text
        default: return false
        }
    }
}
