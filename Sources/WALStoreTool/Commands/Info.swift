import Engine
import Snapshot

/// `walstore info STORE` and `walstore stats STORE`.
enum InfoCommand {
    static let spec = CommandSpec(
        name: "info", usage: "info STORE [--json]",
        summary:
            "What a store is: its format, files, keys, tail, tables, blobs, last sequence, whether it was closed cleanly; for a WALDataStore, its schema, version and objects per entity.",
        positionals: ["STORE"], flags: ["json": "print one JSON object (docs/tool.md lists its fields)"],
        details: "Reads the store through a copy-on-write view: its files stay byte-identical.")

    static func run(_ arguments: Arguments, _ output: StandardOutput) throws -> ExitCode {
        let path = arguments.positionals[0]
        let (store, _) = try StoreAccess.openReadOnly(path)
        defer { try? store.close() }
        let statistics = store.statistics
        let keys = try store.countKeys()
        let files = StoreAccess.files(path)
        let dataStore = try dataStoreInfo(store)
        let formatVersion = statistics.recovery.upgradedFromFormat3 ? 3 : 4
        if arguments.has("json") {
            let value = JSONValue.object([
                ("path", .string(path)),
                ("formatVersion", .int(formatVersion)),
                ("closedCleanly", .bool(statistics.recovery.closedCleanly)),
                ("lastSequence", .uint(statistics.lastSequence)),
                ("keys", .int(keys)),
                ("tailKeys", .int(statistics.tailLiveKeyCount)),
                ("tailBytes", .uint(statistics.tailBytes)),
                ("bytesOnDisk", .uint(statistics.bytesOnDisk)),
                ("segments", .array(statistics.segments.map { .object([("number", .uint($0.number)), ("bytes", .uint($0.bytesOnDisk))]) })),
                (
                    "tables",
                    .array(
                        statistics.tables.map {
                            .object([
                                ("number", .uint($0.number)), ("level", .int($0.level)), ("bytes", .uint($0.bytesOnDisk)),
                                ("entries", .int($0.entryCount)),
                            ])
                        })
                ),
                ("blobs", .int(statistics.blobCount)),
                ("blobBytes", .uint(statistics.blobBytes)),
                ("files", .array(files.map { .object([("name", .string($0.name)), ("bytes", .uint($0.bytes)), ("files", .int($0.count))]) })),
                ("dataStore", dataStore?.json ?? .null),
                ("quarantine", .bool(StoreAccess.holdsQuarantine(path))),
            ])
            output.line(value.text)
            return .ok
        }
        output.line("store        \(path)")
        output.line("format       \(formatVersion)\(formatVersion == 3 ? " (the next open for writing upgrades it to 4)" : "")")
        output.line("closed       \(statistics.recovery.closedCleanly ? "cleanly" : "not cleanly (the next open recovers the log's tail)")")
        output.line("sequence     \(statistics.lastSequence)")
        output.line("keys         \(keys) (\(statistics.tailLiveKeyCount) in the tail)")
        output.line("tail         \(statistics.tailBytes) bytes in \(statistics.segments.count) segment\(statistics.segments.count == 1 ? "" : "s")")
        output.line(
            "tables       \(statistics.tables.count)"
                + (statistics.tables.isEmpty
                    ? "" : " (" + statistics.tables.map { "L\($0.level) #\($0.number) \($0.entryCount) entries" }.joined(separator: ", ") + ")"))
        output.line("blobs        \(statistics.blobCount) (\(statistics.blobBytes) bytes)")
        output.line("on disk      \(statistics.bytesOnDisk) bytes")
        output.line("files        " + files.map { "\($0.name) \($0.bytes)" }.joined(separator: ", "))
        if let dataStore {
            dataStore.printHuman(output)
        } else {
            output.line(
                StoreAccess.holdsQuarantine(path)
                    ? "records      none: no WALDataStore header, but \(LogStore.quarantineDirectoryName)/ holds what a salvage set aside: the store lost its header (walstore verify)"
                    : "records      none: a plain engine store (no WALDataStore header)")
        }
        return .ok
    }

    /// The WALDataStore part of `info`: nil for a plain engine store.
    struct DataStoreInfo {
        var inspector: StoreInspector
        var counts: [String: Int]

        var json: JSONValue {
            let schema = inspector.schema
            return .object([
                ("identifier", .string(inspector.identifier)),
                ("headerVersion", .int(inspector.headerVersion)),
                ("generation", .uint(UInt64(inspector.generation))),
                ("schemaVersion", .optional(inspector.schemaVersion?.description)),
                ("objects", .int(counts.values.reduce(0, +))),
                (
                    "entities",
                    .array(
                        schema.entities.map { entity in
                            .object([
                                ("name", .string(entity.name)),
                                ("superentity", .optional(entity.superentityName)),
                                ("root", .string(inspector.root(of: entity.name))),
                                ("isAbstract", .bool(entity.isAbstract)),
                                ("objects", .int(counts[entity.name] ?? 0)),
                                (
                                    "attributes",
                                    .array(
                                        entity.attributes.map { a in
                                            .object([
                                                ("name", .string(a.name)), ("type", .string(a.valueType.description)),
                                                ("isOptional", .bool(a.isOptional)),
                                                ("isUnique", .bool(a.options.contains(.unique))),
                                                ("externalStorage", .bool(a.options.contains(.externalStorage))),
                                                ("ephemeral", .bool(a.options.contains(.ephemeral))),
                                            ])
                                        })
                                ),
                                (
                                    "relationships",
                                    .array(
                                        entity.relationships.map { r in
                                            .object([
                                                ("name", .string(r.name)), ("destination", .string(r.destination)), ("isToMany", .bool(r.isToMany)),
                                                ("inverse", .optional(r.inverse)), ("deleteRule", .string(r.deleteRule.rawValue)),
                                                ("isOptional", .bool(r.isOptional)),
                                            ])
                                        })
                                ),
                                ("indexes", .array(entity.indexes.map { .array($0.properties.map(JSONValue.string)) })),
                                ("uniquenessConstraints", .array(entity.uniquenessConstraints.map { .array($0.properties.map(JSONValue.string)) })),
                            ])
                        })
                ),
            ])
        }

        func printHuman(_ output: StandardOutput) {
            output.line(
                "WALDataStore \(inspector.identifier), header version \(inspector.headerVersion), schema version \(inspector.schemaVersion?.description ?? "none"), \(counts.values.reduce(0, +)) objects"
            )
            for entity in inspector.schema.entities {
                var line = "  entity \(entity.name)"
                if let parent = entity.superentityName { line += " : \(parent)" }
                if entity.isAbstract { line += " (abstract)" }
                line += ", \(counts[entity.name] ?? 0) objects"
                output.line(line)
                for a in entity.attributes {
                    var flags: [String] = []
                    if a.isOptional { flags.append("optional") }
                    if a.options.contains(.unique) { flags.append("unique") }
                    if a.options.contains(.externalStorage) { flags.append("externalStorage") }
                    if a.options.contains(.ephemeral) { flags.append("ephemeral") }
                    output.line("    \(a.name): \(a.valueType)" + (flags.isEmpty ? "" : " [" + flags.joined(separator: ", ") + "]"))
                }
                for r in entity.relationships {
                    output.line(
                        "    \(r.name) -> \(r.isToMany ? "[\(r.destination)]" : r.destination)" + (r.inverse.map { " inverse \($0)" } ?? "")
                            + ", delete rule \(r.deleteRule.rawValue)")
                }
                for index in entity.indexes { output.line("    index (\(index.properties.joined(separator: ", ")))") }
                for rule in entity.uniquenessConstraints { output.line("    unique (\(rule.properties.joined(separator: ", ")))") }
            }
        }
    }

    static func dataStoreInfo(_ store: LogStore) throws -> DataStoreInfo? {
        let inspector: StoreInspector
        do {
            inspector = try StoreInspector(engine: store)
        } catch let error as StoreInspectionError where error.code == .noHeader {
            return nil
        }
        var counts: [String: Int] = [:]
        for root in inspector.roots {
            counts.merge(try inspector.objectCounts(root: root.name), uniquingKeysWith: +)
        }
        return DataStoreInfo(inspector: inspector, counts: counts)
    }
}

enum StatsCommand {
    static let spec = CommandSpec(
        name: "stats", usage: "stats STORE [--json]",
        summary: "The engine's statistics of a store (keys, segments, tables, blobs, caches, what open recovered), as an open sees it.",
        positionals: ["STORE"], flags: ["json": "print one JSON object (docs/tool.md lists its fields)"],
        details: "Reads the store through a copy-on-write view: its files stay byte-identical.")

    static func run(_ arguments: Arguments, _ output: StandardOutput) throws -> ExitCode {
        let (store, _) = try StoreAccess.openReadOnly(arguments.positionals[0])
        defer { try? store.close() }
        let s = store.statistics
        let r = s.recovery
        let value = JSONValue.object([
            ("keyCount", .int(s.keyCount)), ("tailKeyCount", .int(s.tailKeyCount)), ("tailLiveKeyCount", .int(s.tailLiveKeyCount)),
            ("tailBytes", .uint(s.tailBytes)),
            ("liveBytes", .int(s.liveBytes)), ("deadBytes", .int(s.deadBytes)), ("bytesOnDisk", .uint(s.bytesOnDisk)),
            (
                "segments",
                .array(
                    s.segments.map {
                        .object([
                            ("number", .uint($0.number)), ("bytesOnDisk", .uint($0.bytesOnDisk)), ("liveBytes", .int($0.liveBytes)),
                            ("deadBytes", .int($0.deadBytes)),
                        ])
                    })
            ),
            (
                "tables",
                .array(
                    s.tables.map {
                        .object([
                            ("number", .uint($0.number)), ("level", .int($0.level)), ("bytesOnDisk", .uint($0.bytesOnDisk)),
                            ("entryCount", .int($0.entryCount)),
                        ])
                    })
            ),
            ("blobCount", .int(s.blobCount)), ("blobBytes", .uint(s.blobBytes)),
            ("blobDirectoryFiles", .int(s.blobDirectoryFiles)), ("blobDirectoryBytes", .uint(s.blobDirectoryBytes)),
            ("lastSequence", .uint(s.lastSequence)), ("indexBytesPerKey", .int(s.indexBytesPerKey)),
            ("writeAmplification", .double(s.writeAmplification)),
            ("preallocatedBytes", .uint(s.preallocatedBytes)),
            (
                "recovery",
                .object([
                    ("closedCleanly", .bool(r.closedCleanly)), ("truncatedBytes", .uint(r.truncatedBytes)), ("reason", .optional(r.reason)),
                    ("discardedFrames", .int(r.discardedFrames)), ("removedLeftovers", .int(r.removedLeftovers)),
                    ("upgradedFromFormat3", .bool(r.upgradedFromFormat3)), ("removedBlobs", .int(r.removedBlobs)),
                    ("segmentHintsLoaded", .int(r.segmentHintsLoaded)), ("segmentsReplayed", .int(r.segmentsReplayed)),
                    ("replayedBytes", .uint(r.replayedBytes)),
                ])
            ),
        ])
        if arguments.has("json") {
            output.line(value.text)
            return .ok
        }
        func printObject(_ members: [(String, JSONValue)], indent: String) {
            for (key, member) in members {
                switch member {
                case .object(let inner):
                    output.line(indent + key + ":")
                    printObject(inner, indent: indent + "  ")
                case .array(let items):
                    output.line(indent + key + ": \(items.count)")
                    for item in items { output.line(indent + "  " + item.text) }
                default:
                    output.line(indent + key + ": " + member.text)
                }
            }
        }
        if case .object(let members) = value { printObject(members, indent: "") }
        return .ok
    }
}
