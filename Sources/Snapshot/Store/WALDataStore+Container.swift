import Engine

/// Hooks for a container that saves across several stores in one transaction: plan a save
/// without writing it (its history transaction included), while holding the store's lock across
/// several steps.
extension WALDataStore {
    /// One store's share of a save, planned and not written.
    package struct PlannedSave: Sendable {
        /// What committing the save writes: keys as the engine stores them (in the store's live
        /// generation), in key order, to commit to ``WALDataStore/engine`` as they are.
        package var batch: WriteBatch
        /// What ``WALDataStore/save(_:)`` would return for it.
        package var result: DataStoreSaveChangesResult<DefaultSnapshot>
        /// The history's state once the batch (which records the save's transaction) is
        /// committed; `nil` when nothing is recorded.
        let historyState: HistoryState?
        /// What the store's observers are told once the batch is committed.
        let observed: ObservedSave?
        /// The per-entity counts once the batch (which stores them) is committed.
        let counts: [String: UInt64]
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
        try planWithoutWriting(request, over: .none)
    }

    /// As ``planWithoutWriting(_:)``, reading `pending` (writes planned and not yet committed: a
    /// shared commit's earlier saves) on top of the store; its history transaction follows
    /// `historyBase`, the history state those saves leave (`nil`: the installed one).
    func planWithoutWriting(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, over pending: PendingWrites, historyBase: HistoryState? = nil
    ) throws -> PlannedSave {
        try Self.engineCall("Saving") {
            let planner = SavePlanner(mapper: mapper(over: pending))
            let writes = try planner.plan(request)
            // The counts and the history transaction, merged into the planner's sorted writes:
            // the engine gets the whole commit in key order.
            var extra = WriteBatch()
            let counted = try counts.planned(planner.countChanges(), over: pending, into: &extra)
            let (recorded, observed) = try recordChanges(planner, request, after: historyBase, over: pending, into: &extra)
            return PlannedSave(
                batch: writes.engineBatch(adding: extra, in: space),
                result: DataStoreSaveChangesResult(
                    for: identifier, remappedIdentifiers: planner.remapped, snapshotsToReregister: try planner.snapshotsToReregister()),
                historyState: recorded, observed: observed, counts: counted)
        }
    }

    /// Call once `planned.batch` is committed (inside ``exclusively(_:)``): the store's
    /// in-memory history then counts the transaction it recorded.
    package func didCommit(_ planned: PlannedSave) {
        counts.install(planned.counts)
        history.didCommit(planned.historyState)
        publish(planned.observed)
    }

    /// Reads the history's state again, after a batch this store did not plan (a save across
    /// stores rolled forward at open) was committed to its engine.
    package func reloadHistory() throws {
        counts.invalidate()
        try Self.engineCall("Reading the store's history") { try history.reload() }
    }
}
