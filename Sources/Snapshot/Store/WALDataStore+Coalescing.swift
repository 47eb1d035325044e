import Engine
import Foundation

/// Saves that share a commit. While a save is being written (its sync under way), the saves
/// that arrive queue; the next writer plans them together as one request and writes them in one
/// engine commit, so they share one sync instead of waiting for one each. Only saves that insert
/// and neither update nor delete are grouped, and only when the store keeps no history (each save
/// must be a transaction of its own there): an insert-only save's outcome does not depend on
/// which other insert-only saves were applied before it, except that an insert colliding with
/// another save's insert on a unique value merges into it, as it would if that save had been
/// written first. A group whose combined plan is refused (one of its saves is invalid) is planned
/// and written save by save instead, so each save succeeds or fails on its own; a failed commit
/// fails every save of its group, and writes none of them.
extension WALDataStore {
    /// Whether `request` may share a commit with other saves.
    func canShareCommit(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) -> Bool {
        !isMigrationContext && !configuration.history.isEnabled && request.updated.isEmpty && request.deleted.isEmpty
            && !request.inserted.isEmpty
    }

    /// Writes the queued saves, group by group, until none waits — or, with `until`, until that
    /// returns true, handing the lead to an I/O thread if saves still wait (so that a caller
    /// who leads waits for its own save, not for everyone's).
    func drainSaves(until done: (() -> Bool)? = nil) {
        while true {
            let drained: Bool = gate.withLock {
                guard let group = coalescer.nextGroup() else { return true }
                writeGroup(group)
                return false
            }
            if drained { return }
            if let done, done() {
                if coalescer.keepsLead() { LogStore.submitToIOThread { self.drainSaves() } }
                return
            }
        }
    }

    /// Plans and commits one group, under the store's lock, and hands every save its outcome.
    private func writeGroup(_ group: [SaveCoalescer.Pending]) {
        if group.count > 1 {
            let combined = DataStoreSaveChangesRequest<DefaultSnapshot>(
                inserted: group.flatMap(\.request.inserted), editingState: group[0].request.editingState)
            if let planned = try? planWithoutWriting(combined) {
                do {
                    try Self.engineCall("Saving") { _ = try engine.commit(planned.batch) }
                    didCommit(planned)
                } catch {
                    let failure = Self.wrapped(error, "Saving")
                    for pending in group { pending.finish(.failure(failure)) }
                    return
                }
                for pending in group { pending.finish(.success(Self.share(of: pending.request, in: planned.result))) }
                return
            }
        }
        for pending in group {
            pending.finish(Result { () throws(DataStoreError) in
                do { return try writeAlone(pending.request) } catch { throw Self.wrapped(error, "Saving") }
            })
        }
    }

    /// One save planned and committed on its own (the caller holds the store's lock).
    func writeAlone(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        let planned = try planWithoutWriting(request)
        try Self.engineCall("Saving") { _ = try engine.commit(planned.batch) }
        didCommit(planned)
        return planned.result
    }

    /// What a group's result says of one of its saves: the permanent identifiers of its
    /// inserts, and the changed objects among them.
    private static func share(
        of request: DataStoreSaveChangesRequest<DefaultSnapshot>, in result: DataStoreSaveChangesResult<DefaultSnapshot>
    ) -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
        var changed: [PersistentIdentifier: DefaultSnapshot] = [:]
        for snapshot in request.inserted {
            guard let permanent = result.remappedIdentifiers[snapshot.persistentIdentifier] else { continue }
            remapped[snapshot.persistentIdentifier] = permanent
            if let s = result.snapshotsToReregister[permanent] { changed[permanent] = s }
        }
        return DataStoreSaveChangesResult(for: result.storeIdentifier, remappedIdentifiers: remapped, snapshotsToReregister: changed)
    }

    /// A save through the queue, on the calling thread: it leads when no one else does.
    func saveSharingCommit(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        let outcome = Locked<Result<DataStoreSaveChangesResult<DefaultSnapshot>, DataStoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let pending = SaveCoalescer.Pending(request: request) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        if coalescer.enqueue(pending) { drainSaves(until: { outcome.withLock { $0 != nil } }) }
        done.wait()
        let result = outcome.withLock { $0 } ?? .failure(DataStoreError(.engine, "A save was not written; try it again."))
        return try result.get()
    }

    /// A save through the queue for an async caller: suspended, holding no thread, until its
    /// group is written; a lead it takes runs on one of the engine's I/O threads.
    func saveSharingCommit(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) async throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DataStoreSaveChangesResult<DefaultSnapshot>, any Error>) in
            let pending = SaveCoalescer.Pending(request: request) { result in continuation.resume(with: result.mapError { $0 }) }
            if coalescer.enqueue(pending) { LogStore.submitToIOThread { self.drainSaves() } }
        }
    }
}
