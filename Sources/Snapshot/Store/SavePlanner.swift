import Engine
import Foundation

/// One save, worked out before anything is written: the checks, the permanent identifiers,
/// the final state of every object the save touches, and the engine batch that stores it.
///
/// Used only under the store's lock, on one thread.
final class SavePlanner {
    let mapper: RecordMapper
    var schema: Schema { mapper.schema }
    var layout: RecordLayout { mapper.layout }

    /// Stored full snapshots, read on demand (`nil`: not stored).
    private var storedCache: [PersistentIdentifier: DefaultSnapshot?] = [:]
    /// The final state of every object the save touches (deleted ones excepted).
    var state: [PersistentIdentifier: DefaultSnapshot] = [:]
    /// Objects the save deletes, cascades included.
    var deleted: Set<PersistentIdentifier> = []
    /// Objects the save inserts as new (upserts excluded).
    var inserted: Set<PersistentIdentifier> = []
    /// Objects an insert was merged into (upserts).
    var upserted: Set<PersistentIdentifier> = []
    /// Temporary identifier → permanent.
    var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
    /// What the request said of each object it inserts or updates (remapped), and which
    /// properties it stated; in request order.
    var statements: [(id: PersistentIdentifier, snapshot: DefaultSnapshot)] = []
    var stated: [PersistentIdentifier: Set<String>] = [:]
    /// The to-many relationships the request stated: the object, the relationship, its targets.
    var intents: [(id: PersistentIdentifier, relationship: Schema.Relationship, targets: [PersistentIdentifier])] = []

    init(mapper: RecordMapper) { self.mapper = mapper }

    func stored(_ id: PersistentIdentifier) throws -> DefaultSnapshot? {
        if let cached = storedCache[id] { return cached }
        let loaded = try mapper.load(id)
        storedCache[id] = .some(loaded)
        return loaded
    }

    /// Whether `id` exists once the save is applied (stored or inserted, and not deleted).
    func exists(_ id: PersistentIdentifier) throws -> Bool {
        if deleted.contains(id) { return false }
        if state[id] != nil || inserted.contains(id) { return true }
        return try stored(id) != nil
    }

    /// The object's state as the save has it so far.
    func current(_ id: PersistentIdentifier) throws -> DefaultSnapshot? {
        if deleted.contains(id) { return nil }
        return try state[id] ?? stored(id)
    }

    /// Changes the state of `id` (read from the store first when the save has not touched it);
    /// nothing for an object that is deleted or does not exist.
    func modify(_ id: PersistentIdentifier, _ body: (inout DefaultSnapshot) -> Void) throws {
        guard var snapshot = try current(id) else { return }
        body(&snapshot)
        state[id] = snapshot
    }

    // MARK: The pipeline

    func plan(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> WriteBatch {
        try checkIdentifiers(request)
        try assignIdentifiers(request.inserted)
        try applyStatements(request)
        try applyDeletes(request.deleted.map(\.persistentIdentifier))
        try applyRelationshipChanges()
        try sweepReferencesToDeleted()
        try checkFinalState()
        return try batch()
    }

    /// The objects the save changed that the request did not hold as they now are.
    func snapshotsToReregister() -> [PersistentIdentifier: DefaultSnapshot] {
        var said: [PersistentIdentifier: DefaultSnapshot] = [:]
        for statement in statements { said[statement.id] = statement.snapshot }
        var result: [PersistentIdentifier: DefaultSnapshot] = [:]
        for (id, snapshot) in state where !deleted.contains(id) {
            if upserted.contains(id) || said[id].map({ Self.normalized($0) != Self.normalized(snapshot) }) ?? true {
                result[id] = snapshot
            }
        }
        return result
    }

    static func normalized(_ s: DefaultSnapshot) -> DefaultSnapshot {
        DefaultSnapshot(persistentIdentifier: s.persistentIdentifier, values: s.values.mapValues { v in
            if case .toMany(let ids) = v { return .toMany(ids.sorted(by: RecordMapper.canonicalOrder)) }
            if case .null = v { return v }
            return v
        })
    }

    // MARK: Engine batch

    /// Every entry that changes: old entries of touched objects not kept are deleted, new or
    /// changed ones put.
    private func batch() throws -> WriteBatch {
        var before: [[UInt8]: StoredEntry] = [:]
        var after: [[UInt8]: StoredEntry] = [:]
        let touched = Set(state.keys).union(deleted)
        for id in touched.sorted() {
            if let old = try stored(id) { before.merge(mapper.entries(of: old)) { a, _ in a } }
        }
        for id in state.keys.sorted() where !deleted.contains(id) {
            after.merge(mapper.entries(of: state[id]!)) { a, _ in a }
        }
        var batch = WriteBatch()
        for key in before.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) where after[key] == nil { batch.delete(key) }
        for key in after.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) where before[key] != after[key] {
            switch after[key]! {
            case .inline(let bytes): batch.put(key, bytes)
            case .external(let bytes): batch.putExternal(key, bytes)
            }
        }
        return batch
    }
}
