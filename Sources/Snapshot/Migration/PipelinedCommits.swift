import Dispatch
import Engine
import Synchronization

/// Commits a rewrite's batches into its destination generation on a thread of its own, one at
/// a time, so that the next batch is read, mapped and encoded while the previous one is written
/// and synced: the two halves of a rewrite run on two cores.
///
/// Why at most one batch is in flight: a rewrite holds each batch in memory until it is
/// committed, so two in flight would hold three batches; and the uniqueness check of a new
/// entry (``GenerationRewriter``) looks for an earlier claim in the batch being built, in the
/// one in flight, then in what is committed — one batch in flight is the one it must keep.
///
/// What if a commit fails: the failure is kept and thrown by the next ``submit(_:)`` or
/// ``finish()``, and nothing more is committed; the rewrite stops, and the generation it was
/// writing is swept as after any failed rewrite. No commit is in flight when either returns or
/// throws, so the sweep never races one.
///
/// Lock discipline: `failure` is taken briefly, by the committing thread to record an error and
/// by the caller to read it; `inFlight` orders each commit before the caller's next wait.
final class PipelinedCommits: Sendable {
    private let destination: RecordSpace
    private let queue = DispatchQueue(label: "WALStore.migration.commits")
    private let inFlight = DispatchGroup()
    private let failure = Mutex<EngineError?>(nil)

    init(into destination: RecordSpace) {
        self.destination = destination
    }

    /// Waits for the batch in flight, then hands `batch` to the committing thread. Throws the
    /// failure of an earlier commit, committing nothing more.
    func submit(_ batch: WriteBatch) throws(EngineError) {
        try finish()
        inFlight.enter()
        queue.async { [self] in
            defer { inFlight.leave() }
            do throws(EngineError) { try destination.commit(batch) } catch { failure.withLock { $0 = error } }
        }
    }

    /// Waits for the batch in flight; throws the failure of any commit.
    func finish() throws(EngineError) {
        inFlight.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
