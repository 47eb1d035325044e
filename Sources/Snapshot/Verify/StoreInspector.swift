import Engine
import Foundation

/// A read-only view of a `WALDataStore`'s records on an open engine store, for tools: the
/// header (identifier, schema, version), the objects as snapshots, and the entries each one
/// derives. It reads through the record layer (``RecordMapper``) only, so it reads records as
/// the store's own code writes them, whatever that format is.
///
/// It writes nothing; the caller owns `engine` and closes it.
package struct StoreInspector {
    package let engine: LogStore
    /// The store identifier in the header.
    package let identifier: String
    /// The schema the header names.
    package let schema: Schema
    /// The schema's version identifier, when the header has one.
    package let schemaVersion: Schema.Version?
    /// The header's format version byte.
    package let headerVersion: Int
    /// The live generation (FORMAT.md, "Generations").
    package let generation: UInt32
    let layout: RecordLayout
    let space: RecordSpace
    let mapper: RecordMapper

    /// Reads the header of the `WALDataStore` `engine` holds.
    ///
    /// - Throws: ``StoreInspectionError``: `.noHeader` for an engine store that is not a
    ///   `WALDataStore` (no header key), `.noSchema` for a version-1 header (its schema is known
    ///   only by fingerprint), `.damagedHeader` when it does not decode; an ``EngineError`` when
    ///   the read fails.
    package init(engine: LogStore) throws {
        guard let bytes = try engine.value(forKey: RecordKeys.meta) else {
            throw StoreInspectionError(.noHeader, "the engine store holds no WALDataStore header (key 00 \"store\"): it is a plain key–value store")
        }
        let header: StoreHeader
        do {
            header = try StoreHeader.decode(bytes)
        } catch {
            throw StoreInspectionError(.damagedHeader, "the store's header does not decode: \(error.reason)")
        }
        guard let schema = header.schema else {
            throw StoreInspectionError(
                .noSchema,
                "the header (version \(header.formatVersion)) names its schema only by fingerprint; open the store once with its app to upgrade the header"
            )
        }
        self.engine = engine
        self.identifier = header.identifier
        self.schema = schema
        self.schemaVersion = header.version
        self.headerVersion = Int(header.formatVersion)
        self.generation = header.generation
        self.layout = RecordLayout(schema: schema)
        self.space = RecordSpace(engine: engine, generation: header.generation)
        var mapper = RecordMapper(
            layout: layout, records: space, storeIdentifier: header.identifier,
            assetThreshold: engine.options.blobThreshold, countRecordRead: {})
        // Headers before version 4 hold records format 1 (FORMAT.md §18): read as such.
        mapper.format = header.formatVersion < 4 ? .format1 : .format2
        self.mapper = mapper
    }

    /// The root entities (one record type `CD_<Root>` each), in schema order.
    package var roots: [Schema.Entity] { schema.entities.filter { layout.root(of: $0.name) == $0.name } }

    /// The root of `entity` (itself for a root).
    package func root(of entity: String) -> String { layout.root(of: entity) }

    /// How many records each root holds (a key count; nothing is decoded).
    package func recordCount(root: String) throws(EngineError) -> Int {
        var scan = try space.scan(prefix: RecordKeys.recordPrefix(root: root))
        var count = 0
        while try scan.next() != nil { count += 1 }
        return count
    }

    /// How many objects of each concrete entity `root`'s records hold (each record's
    /// `CD_entityName` is decoded, nothing else); records that do not decode are counted under
    /// the empty name.
    package func objectCounts(root: String) throws(EngineError) -> [String: Int] {
        var scan = try space.scan(prefix: RecordKeys.recordPrefix(root: root))
        var counts: [String: Int] = [:]
        let hasSubentities = !schema.subentities(of: root).isEmpty
        while let entry = try scan.next() {
            guard hasSubentities else {
                counts[root, default: 0] += 1
                continue
            }
            let bytes = try entry.value()
            if let entity = try? mapper.entityName(ofRecord: bytes, key: entry.key) {
                counts[entity, default: 0] += 1
            } else {
                counts["", default: 0] += 1
            }
        }
        return counts
    }

    /// Calls `body` with the identifier of every object of `root`'s record type, in key order
    /// (each record's `CD_entityName` is decoded, nothing else).
    ///
    /// - Throws: ``RecordDecodingError`` for a record without a known entity name.
    package func forEachIdentifier(root: String, _ body: (PersistentIdentifier) throws -> Void) throws {
        let prefix = RecordKeys.recordPrefix(root: root)
        let hasSubentities = !schema.subentities(of: root).isEmpty
        var scan = try space.scan(prefix: prefix)
        while let entry = try scan.next() {
            let key = entry.key
            guard key.count == prefix.count + 16 else { throw RecordDecodingError("a record key whose primary key is not 16 bytes", key: key) }
            var entity = root
            if hasSubentities {
                let name = try mapper.entityName(ofRecord: try entry.value(), key: key)
                guard schema.entity(named: name) != nil else {
                    throw RecordDecodingError("a record of \(name), which is not an entity of the root \(root)", key: key)
                }
                entity = name
            }
            try body(try mapper.identifier(entity: entity, primaryKey: RecordKeys.uuid(from: Array(key[prefix.count...]))))
        }
    }

    /// Calls `body` with every object of `root`'s record type, in key order: its snapshot (with
    /// attributes, assets read back, and to-one references; to-many arrays only when
    /// `toMany`), or the error its record failed to decode with, and its record key.
    package func forEachObject(
        root: String, toMany: Bool, _ body: (_ key: [UInt8], _ object: Result<DefaultSnapshot, any Error>) throws -> Void
    ) throws {
        let prefix = RecordKeys.recordPrefix(root: root)
        var scan = try space.scan(prefix: prefix)
        while let entry = try scan.next() {
            let key = entry.key
            guard key.count == prefix.count + 16 else {
                try body(key, .failure(RecordDecodingError("a record key whose primary key is not 16 bytes", key: key)))
                continue
            }
            let pk = RecordKeys.uuid(from: Array(key[prefix.count...]))
            let object: Result<DefaultSnapshot, any Error>
            do {
                object = .success(try mapper.snapshot(ofRecord: try entry.value(), key: key, primaryKey: pk, root: root, toMany: toMany))
            } catch let error as EngineError where error.code != .corruption && error.code != .missingBlob {
                throw error
            } catch {
                object = .failure(error)
            }
            try body(key, object)
        }
    }

    /// The to-many targets of `object` through `relationship`, from the store's back references
    /// or join records, in canonical order.
    package func targets(of object: PersistentIdentifier, through relationship: Schema.Relationship) throws -> [PersistentIdentifier] {
        try mapper.targets(of: object, through: relationship)
    }

    /// Whether a record stores `relationship`'s links as `CDMR` join records, and whether
    /// `entity` is the side that writes them (each link is written once, by one side).
    package func writesJoinRecords(_ relationship: Schema.Relationship, of entity: String) -> Bool {
        layout.usesJoinRecords(relationship) && layout.writesJoinRecords(relationship, of: entity)
    }

    /// Whether `relationship` of `entity` is its own inverse (`Person.friends` ↔ `friends`):
    /// each of its links is one join record, listed among the targets of both its ends.
    package func isSymmetric(_ relationship: Schema.Relationship, of entity: String) -> Bool {
        layout.join(relationship, of: entity).isSymmetric
    }

    /// The `CDMR` fields of the link from `source` through `relationship` to `target`:
    /// `CD_entityNames`, `CD_recordNames`, `CD_relationships` (FORMAT.md §18, "join record").
    package func joinFields(
        of source: PersistentIdentifier, through relationship: Schema.Relationship, to target: PersistentIdentifier
    ) -> (entityNames: String, recordNames: String, relationships: String) {
        let join = layout.join(relationship, of: source.entityName)
        let here = RecordName.of(source)
        let there = RecordName.of(target)
        let hereIsA = join.isSymmetric ? here <= there : join.isSideA
        let (a, b) = hereIsA ? (here, there) : (there, here)
        return (join.entities, "\(a):\(b)", join.relationships)
    }

    /// The identifier of the object `recordName` (`<Entity>_<UUID>`) names, or nil when it is
    /// not a record name of an entity of the schema.
    package func identifier(recordName: String) -> PersistentIdentifier? {
        guard let (entity, pk) = RecordName.parse(recordName), schema.entity(named: entity) != nil else { return nil }
        return try? mapper.identifier(entity: entity, primaryKey: pk)
    }

    /// The record name (`<Entity>_<UUID>`) of `id`.
    package static func recordName(of id: PersistentIdentifier) -> String { RecordName.of(id) }

    /// Whether the store holds a record for `id`.
    package func contains(_ id: PersistentIdentifier) throws(EngineError) -> Bool {
        guard let key = mapper.recordKey(id) else { return false }
        return try space.value(forKey: key) != nil
    }

    /// Whether `attribute`'s values are kept as assets (`externalStorage`) when not null.
    package func isExternal(_ attribute: Schema.Attribute) -> Bool { attribute.options.contains(.externalStorage) }
}

/// Why a store's records cannot be inspected.
package struct StoreInspectionError: Error, CustomStringConvertible {
    package enum Code: String, Sendable {
        case noHeader, noSchema, damagedHeader, olderRecordsFormat
    }
    package var code: Code
    package var message: String
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    package var description: String { message }
}
