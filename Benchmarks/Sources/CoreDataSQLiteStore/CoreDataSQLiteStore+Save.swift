import Foundation
import Snapshot
import SQLiteSupport

extension CoreDataSQLiteStore {
    /// Applies the request's inserts, updates and deletes in one SQLite transaction, after
    /// checking identifiers and values; a refused save changes nothing.
    ///
    /// When it returns with `synchronous=FULL`, the whole save (rows, join rows, external
    /// data files) survives power loss.
    ///
    /// - Returns: the permanent identifier of every insert (an upserted insert maps to the
    ///   object it updated).
    /// - Throws: ``DataStoreError``: `unknownEntity`, `unknownProperty`, `typeMismatch`,
    ///   `missingValue`, `danglingReference`, `foreignIdentifier`,
    ///   `temporaryIdentifierInUpdate`, `invalidRequest`, `deleteDenied`, `uniqueness`,
    ///   `cardinality` (a to-many outside its minimum or maximum count), `conflictingChanges`
    ///   (one object stated twice, by the rules of ``DataStoreSaveChangesRequest``); `engine`
    ///   when SQLite or the file system fails.
    public func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try lock.withLock {
            try Self.sqlite("Saving") {
                // A cascade can reach an upsert's target only once the statements have run: the
                // save is then rolled back and planned again without that target (at most once
                // per insert).
                var excluded: Set<PersistentIdentifier> = []
                while true {
                    let plan = SaveTransaction(store: self, excluding: excluded)
                    try plan.check(request)
                    do {
                        try transaction { log in try plan.apply(request, log: &log) }
                        return DataStoreSaveChangesResult(for: identifier, remappedIdentifiers: plan.remapped)
                    } catch let lost as SaveTransaction.UpsertTargetsDeleted {
                        excluded.formUnion(lost.targets)
                    }
                }
            }
        }
    }

    /// Deletes every object the request selects in one transaction, applying the delete rules.
    ///
    /// - Throws: as ``fetch(_:)`` for the predicate, `deleteDenied`, and `cardinality` when a
    ///   remaining object would hold fewer objects than a relationship's minimum count.
    public func delete(_ request: DataStoreBatchDeleteRequest) throws {
        try lock.withLock {
            try Self.sqlite("Deleting") {
                let descriptor = FetchDescriptor(entityName: request.entityName, predicate: request.predicate, includesSubentities: request.includeSubentities)
                let ids = try identifiersLocked(descriptor)
                guard !ids.isEmpty else { return }
                let plan = SaveTransaction(store: self)
                try transaction { log in
                    for id in ids { if case .integer(let key) = id.primaryKey { try plan.deleteObject(id.entityName, key, log: &log) } }
                    try plan.checkDenials()
                    try plan.checkCounts()
                }
            }
        }
    }

    /// Removes every object (rows, join rows, external files) in one transaction; `Z_MAX`
    /// keeps counting, so no primary key is used twice.
    public func erase() throws {
        try lock.withLock {
            try Self.sqlite("Erasing") {
                try transaction { _ in
                    for table in layout.rootTables { try run("DELETE FROM \(table.name)", []) }
                    for table in Set(layout.tables.values.flatMap { $0.links.compactMap(\.joinTable) }).sorted() {
                        try run("DELETE FROM \(table)", [])
                    }
                }
                let names = (try? FileManager.default.contentsOfDirectory(atPath: files.directory)) ?? []
                files.remove(names)
            }
        }
    }

    /// What a transaction wrote outside SQLite: files to remove if it rolls back, and files it
    /// dropped, removed once it commits.
    struct FileLog {
        var written: [String] = []
        var dropped: [String] = []
    }

    /// Runs `body` between `BEGIN IMMEDIATE` and `COMMIT` (the external files it wrote synced
    /// first); rolls back and removes those files if anything throws.
    func transaction(_ body: (inout FileLog) throws -> Void) throws {
        try run("BEGIN IMMEDIATE", [])
        var log = FileLog()
        do {
            try body(&log)
            if !log.written.isEmpty { try files.syncDirectory() }
            try run("COMMIT", [])
        } catch {
            _ = try? run("ROLLBACK", [])
            files.remove(log.written)
            if let failure = error as? SQLiteError, failure.isConstraintViolation {
                throw DataStoreError(
                    .uniqueness, "The save would give two objects the same unique values (\(failure.message)); change one of them.",
                    underlying: failure)
            }
            throw error
        }
        files.remove(log.dropped)
    }
}

extension CoreDataLayout.Link {
    /// The join table this link uses, when it uses one.
    var joinTable: String? {
        if case .join(let table, _, _) = storage { return table }
        return nil
    }
}
