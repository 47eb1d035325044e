import Engine

/// Hooks for a container that saves across several stores in one transaction: plan a save
/// without writing it, while holding the store's lock across several steps.
extension WALDataStore {
    /// One store's share of a save, planned and not written.
    package struct PlannedSave: Sendable {
        /// What committing the save writes.
        package var batch: WriteBatch
        /// What ``WALDataStore/save(_:)`` would return for it.
        package var result: DataStoreSaveChangesResult<DefaultSnapshot>
    }

    /// Runs `body` holding the store's lock: no save, fetch or erase of this store runs
    /// meanwhile. `body` must call only the other hooks of this file, never the public methods.
    package func exclusively<T>(_ body: () throws -> T) throws -> T {
        try gate.withLock(body)
    }

    /// Checks and plans `request` as ``save(_:)`` does, writing nothing; call inside
    /// ``exclusively(_:)`` and commit the batch before releasing the lock.
    ///
    /// - Throws: as ``save(_:)``.
    package func planWithoutWriting(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> PlannedSave {
        try Self.engineCall("Saving") {
            let planner = SavePlanner(mapper: mapper)
            let batch = try planner.plan(request)
            return PlannedSave(
                batch: batch,
                result: DataStoreSaveChangesResult(
                    for: identifier, remappedIdentifiers: planner.remapped, snapshotsToReregister: planner.snapshotsToReregister()))
        }
    }
}
