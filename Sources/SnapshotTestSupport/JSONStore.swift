import Foundation
import Snapshot

/// The whole-file JSON store of SwiftData's custom-data-store sample, on this package's types:
/// every object in one JSON array, read whole and rewritten whole on every save. The simplest
/// `DataStore`, and the baseline for the contract suite and for the engine-backed store.
///
/// Unlike the sample, it does not throw `preferInMemoryFilter` / `preferInMemorySort`: there is
/// no SwiftData here to filter and sort in memory on its behalf, and the contract suite must
/// check predicates, sorts, limits and offsets against every store. So it runs the descriptor
/// through ``PredicateEvaluator`` over all objects — the same semantics the engine-backed
/// store must follow. It checks what the sample's structure makes cheap (known entities,
/// temporary or foreign identifiers among updates and deletes, an object stated twice in one
/// request, a reference to an object the same request deletes) and nothing else: no delete
/// rules, inverses or uniqueness. An update's snapshot is merged over the stored object (it
/// may state only the properties it changes).
///
/// Thread safety: every call takes ``lock`` for its whole read-modify-write of the file, so
/// calls from many threads are serialised. The other stored properties are immutable.
public final class JSONStore: DataStoreBatching {
    /// The snapshots it reads and writes.
    public typealias SnapshotType = DefaultSnapshot

    /// The configuration the store was made from.
    public let configuration: JSONStoreConfiguration
    /// The store's identifier: its file's name.
    public let identifier: String
    /// The entities it holds.
    public let schema: Schema
    private let lock = NSLock()

    /// A store on `configuration.fileURL` (made at the first save); its identifier is the
    /// file's name, as in the sample.
    public init(_ configuration: JSONStoreConfiguration) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(.invalidRequest, "A JSONStore needs a schema; pass one in its configuration.")
        }
        self.configuration = configuration
        self.schema = schema
        self.identifier = configuration.fileURL.lastPathComponent
    }

    /// Reads the whole file, applies the request, and rewrites the whole file (atomically, by
    /// a rename); the save is in the file when it returns, but the file is not synced.
    public func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try lock.withLock {
            var objects = try read()
            for snapshot in request.inserted { _ = try schema.requireEntity(named: snapshot.persistentIdentifier.entityName) }
            for snapshot in request.updated + request.deleted { try checkExisting(snapshot.persistentIdentifier) }
            try checkStatedOnce(request)

            var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
            for snapshot in request.inserted {
                remapped[snapshot.persistentIdentifier] = try PersistentIdentifier.identifier(
                    for: identifier, entityName: snapshot.persistentIdentifier.entityName, primaryKey: UUID())
            }
            for snapshot in request.inserted {
                let permanent = remapped[snapshot.persistentIdentifier]!
                objects[permanent] = snapshot.copy(persistentIdentifier: permanent, remappedIdentifiers: remapped)
            }
            for snapshot in request.updated {
                let id = snapshot.persistentIdentifier
                var merged = objects[id] ?? DefaultSnapshot(persistentIdentifier: id)
                merged.values.merge(snapshot.copy(persistentIdentifier: id, remappedIdentifiers: remapped).values) { _, new in new }
                objects[id] = merged
            }
            for snapshot in request.deleted { objects[snapshot.persistentIdentifier] = nil }
            try write(objects)
            return DataStoreSaveChangesResult(for: identifier, remappedIdentifiers: remapped)
        }
    }

    /// Reads the whole file and runs the descriptor through ``PredicateEvaluator``.
    public func fetch(_ request: DataStoreFetchRequest) throws -> DataStoreFetchResult<DefaultSnapshot> {
        try lock.withLock {
            let objects = try read()
            let evaluator = PredicateEvaluator(schema: schema) { objects[$0] }
            var whole = request.descriptor
            whole.propertiesToFetch = []
            let fetched = try evaluator.run(whole, over: objects.values.sorted { $0.persistentIdentifier < $1.persistentIdentifier })
            let related = try evaluator.related(to: fetched, through: request.descriptor.relationshipKeyPathsForPrefetching)
            return DataStoreFetchResult(
                descriptor: request.descriptor, fetchedSnapshots: fetched.map { $0.keeping(request.descriptor.propertiesToFetch) },
                relatedSnapshots: related)
        }
    }

    /// Removes the file.
    public func erase() throws {
        try lock.withLock {
            do {
                if FileManager.default.fileExists(atPath: configuration.fileURL.path) {
                    try FileManager.default.removeItem(at: configuration.fileURL)
                }
            } catch {
                throw DataStoreError(.engine, "The store's file could not be removed; check its directory's permissions.", underlying: error)
            }
        }
    }

    /// Reads the whole file, removes what the request selects (no delete rules), and rewrites it.
    public func delete(_ request: DataStoreBatchDeleteRequest) throws {
        try lock.withLock {
            var objects = try read()
            let evaluator = PredicateEvaluator(schema: schema) { objects[$0] }
            let descriptor = FetchDescriptor(
                entityName: request.entityName, predicate: request.predicate, includesSubentities: request.includeSubentities)
            for snapshot in try evaluator.run(descriptor, over: Array(objects.values)) { objects[snapshot.persistentIdentifier] = nil }
            try write(objects)
        }
    }

    /// The request names each object once: no identifier twice among the inserted or the
    /// updated, or among both the updated and the deleted; no insert or update refers to an
    /// object the request deletes.
    private func checkStatedOnce(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws {
        func conflict(_ id: PersistentIdentifier, _ lists: String) -> DataStoreError {
            DataStoreError(.conflictingChanges, "\(id) is \(lists) in one save; state each object once.", entityName: id.entityName, identifier: id)
        }
        var inserted: Set<PersistentIdentifier> = [], updated: Set<PersistentIdentifier> = []
        for s in request.inserted where !inserted.insert(s.persistentIdentifier).inserted { throw conflict(s.persistentIdentifier, "inserted twice") }
        for s in request.updated where !updated.insert(s.persistentIdentifier).inserted { throw conflict(s.persistentIdentifier, "updated twice") }
        let deleted = Set(request.deleted.map(\.persistentIdentifier))
        for s in request.updated where deleted.contains(s.persistentIdentifier) { throw conflict(s.persistentIdentifier, "both updated and deleted") }
        for s in request.inserted + request.updated {
            for (name, value) in s.values.sorted(by: { $0.key < $1.key }) {
                guard let gone = value.referencedIdentifiers.first(where: deleted.contains) else { continue }
                throw DataStoreError(
                    .danglingReference,
                    "\(s.persistentIdentifier.entityName).\(name) of \(s.persistentIdentifier) refers to \(gone), which the same save deletes; remove the reference, or keep the object.",
                    entityName: s.persistentIdentifier.entityName, propertyName: name, identifier: s.persistentIdentifier, relatedIdentifiers: [gone])
            }
        }
    }

    private func checkExisting(_ id: PersistentIdentifier) throws {
        guard let store = id.storeIdentifier else {
            throw DataStoreError(
                .temporaryIdentifierInUpdate, "An updated or deleted object has the temporary identifier \(id); insert it first.",
                entityName: id.entityName, identifier: id)
        }
        guard store == identifier else {
            throw DataStoreError(
                .foreignIdentifier, "\(id) was made by the store \(store), not by \(identifier); save it through its own store.",
                entityName: id.entityName, identifier: id)
        }
        _ = try schema.requireEntity(named: id.entityName)
    }

    private func read() throws -> [PersistentIdentifier: DefaultSnapshot] {
        guard FileManager.default.fileExists(atPath: configuration.fileURL.path) else { return [:] }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let snapshots = try decoder.decode([DefaultSnapshot].self, from: try Data(contentsOf: configuration.fileURL))
            var result: [PersistentIdentifier: DefaultSnapshot] = [:]
            for snapshot in snapshots { result[snapshot.persistentIdentifier] = snapshot }
            return result
        } catch {
            throw DataStoreError(.engine, "The store's JSON file could not be read; restore it or erase the store.", underlying: error)
        }
    }

    private func write(_ objects: [PersistentIdentifier: DefaultSnapshot]) throws {
        do {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(objects.values.sorted { $0.persistentIdentifier < $1.persistentIdentifier })
            try data.write(to: configuration.fileURL, options: .atomic)
        } catch {
            throw DataStoreError(.engine, "The store's JSON file could not be written; check the disk and the directory.", underlying: error)
        }
    }
}
