import Engine
import Foundation

/// Saves that share a commit. While a commit is being written (its sync under way), the saves
/// that arrive queue; the next writer takes them as one group, plans them one by one in arrival
/// order — each against the state the earlier ones leave, the group in flight included — and
/// writes the group in one engine commit, so they share one sync instead of waiting for one
/// each. Saves of every kind are grouped. With history on, each save of a group is still a
/// transaction of its own: planned after the ones before it, it takes the next token, and its
/// history record (with what retention deletes) goes into the group's one commit with its
/// objects, so that after a crash the objects and their history agree.
///
/// The next group is planned while the one before it is being written: its planner reads the
/// store through the in-flight group's writes (``PendingWrites``). Its commit starts only once
/// the one before returned. A save the planner refuses fails alone and writes nothing; a failed
/// commit fails every save of its group and of the group planned on top of it (none of them is
/// written), and the groups after are planned against the store as it is.
extension WALDataStore {
    /// Whether `request` may share a commit with other saves.
    func canShareCommit(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) -> Bool {
        !isMigrationContext
    }

    /// The most groups one leader writes before it releases the store's lock (letting fetches
    /// and other calls in), once nothing is in flight.
    static let groupsPerLockHold = 16

    /// Writes the queued saves, group by group, until none waits — or, with `until`, until that
    /// returns true, handing the lead to an I/O thread if saves still wait (so that a caller
    /// who leads waits for its own save, not for everyone's).
    func drainSaves(until done: (() -> Bool)? = nil) {
        while true {
            gate.withLock { writeGroups(until: done) }
            guard coalescer.keepsLead() else { return }
            if let done, done() {
                LogStore.submitToIOThread { self.drainSaves() }
                return
            }
        }
    }

    /// Plans and commits queued groups under the store's lock, planning each while the one
    /// before it is being written, and hands every save its outcome. Returns with nothing in
    /// flight.
    private func writeGroups(until done: (() -> Bool)?) {
        var inFlight: (group: PlannedGroup, commit: CommitInFlight)?
        var rounds = 0
        while true {
            let stop = rounds >= Self.groupsPerLockHold || (done?() ?? false)
            let next =
                stop
                ? nil
                : coalescer.takeGroup().map {
                    plan($0, over: inFlight?.group.writes() ?? .none, history: inFlight?.group.historyState)
                }
            var baseFailure: DataStoreError?
            if let (group, commit) = inFlight {
                let outcome = commit.wait()
                settle(group, outcome)
                if case .failure(let error) = outcome { baseFailure = error }
                inFlight = nil
            }
            guard let next else { return }
            rounds += 1
            if let baseFailure {
                // Planned on top of writes that did not happen: none of it may be written.
                settle(next, .failure(baseFailure))
                continue
            }
            guard let batch = next.batch() else {
                settle(next, .success(()))
                continue
            }
            if coalescer.waiting > 0 && rounds < Self.groupsPerLockHold && !(done?() ?? false) {
                inFlight = (next, CommitInFlight(engine: engine, batch: batch))
            } else {
                settle(next, Result { () throws(DataStoreError) in try commit(batch) })
            }
        }
    }

    private func commit(_ batch: WriteBatch) throws(DataStoreError) {
        do { _ = try engine.commit(batch) } catch { throw Self.wrapped(error, "Saving") }
    }

    /// Plans each save of `group` in order, on top of `base` and of the saves before it; with
    /// history on, each save's transaction follows the history state the one before leaves
    /// (the first's follows `history`, the state the group in flight leaves, or the installed
    /// one).
    private func plan(_ group: [SaveCoalescer.Pending], over base: PendingWrites, history: HistoryState?) -> PlannedGroup {
        let planned = PlannedGroup(historyState: history)
        var view = base
        for (index, pending) in group.enumerated() {
            do {
                let save = try planWithoutWriting(pending.request, over: view, historyBase: planned.historyState)
                let writes = index < group.count - 1 ? try PlannedGroup.entries(of: save.batch) : []
                planned.add(pending, save)
                view = view.adding(writes)
            } catch {
                planned.add(pending, refusal: Self.wrapped(error, "Saving"))
            }
        }
        return planned
    }

    /// Hands each save of `group` its outcome once its commit returned `outcome`: its result,
    /// or its refusal; every save fails with a failed commit.
    private func settle(_ group: PlannedGroup, _ outcome: Result<Void, DataStoreError>) {
        for (pending, save) in group.saves {
            switch (outcome, save) {
            case (.failure(let error), _):
                pending.finish(.failure(error))
            case (.success, .success(let planned)):
                didCommit(planned)
                pending.finish(.success(planned.result))
            case (.success, .failure(let refusal)):
                pending.finish(.failure(refusal))
            }
        }
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

/// One group of saves, planned: each save's plan or refusal, in arrival order. Used by the
/// leader only, under the store's lock.
final class PlannedGroup {
    private(set) var saves: [(pending: SaveCoalescer.Pending, save: Result<WALDataStore.PlannedSave, DataStoreError>)] = []
    /// The history state once the group is committed: the one its last recorded transaction
    /// leaves, else the one it was planned after (`nil`: the installed one).
    private(set) var historyState: HistoryState?

    init(historyState: HistoryState?) { self.historyState = historyState }

    func add(_ pending: SaveCoalescer.Pending, _ save: WALDataStore.PlannedSave) {
        saves.append((pending, .success(save)))
        if let recorded = save.historyState { historyState = recorded }
    }

    func add(_ pending: SaveCoalescer.Pending, refusal: DataStoreError) { saves.append((pending, .failure(refusal))) }

    private var batches: [WriteBatch] {
        saves.compactMap { if case .success(let s) = $0.save, !s.batch.isEmpty { s.batch } else { nil } }
    }

    /// The group's writes, for the planner of the next group.
    func writes() -> PendingWrites {
        var result = PendingWrites.none
        for batch in batches {
            // A planned batch holds bytes only (never a file to copy), so it always lists.
            if let entries = batch.entries { result = result.adding(entries) }
        }
        return result
    }

    /// The one commit that writes every planned save of the group, in order (a later save's
    /// write of a key wins); `nil` when there is nothing to write.
    func batch() -> WriteBatch? {
        let batches = batches
        guard batches.count > 1 else { return batches.first }
        return WriteBatch(entries: batches.flatMap { $0.entries ?? [] })
    }

    /// `batch`'s writes, as a later planner reads them.
    static func entries(of batch: WriteBatch) throws(DataStoreError) -> [WriteBatch.Entry] {
        guard let entries = batch.entries else {
            throw DataStoreError(.engine, "A save's plan named a file to copy, which a shared commit cannot read ahead; save it on its own.")
        }
        return entries
    }
}

/// A group's engine commit, written on a thread of its own while the leader plans the next
/// group. A plain thread, not one of the engine's I/O threads: the leader may itself run on one
/// and waits for this commit, which must never wait for a free thread of that pool.
final class CommitInFlight: Sendable {
    private let outcome = Locked<Result<Void, DataStoreError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(engine: LogStore, batch: WriteBatch) {
        Thread.detachNewThread { [outcome, done] in
            let result = Result { () throws(DataStoreError) in
                do { _ = try engine.commit(batch) } catch { throw WALDataStore.wrapped(error, "Saving") }
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
    }

    /// Blocks until the commit returned; its outcome.
    func wait() -> Result<Void, DataStoreError> {
        done.wait()
        done.signal()
        return outcome.withLock { $0 } ?? .failure(DataStoreError(.engine, "A shared commit ended without an outcome; try the save again."))
    }
}
