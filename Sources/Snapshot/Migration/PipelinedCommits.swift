import Dispatch
import Synchronization

/// Runs a rewrite's writes (``GenerationWriter``: encoding a group of mapped objects and
/// committing their entries) on a thread of its own, one group at a time, so that the next group
/// is read and mapped while the previous one is encoded, written and synced: the two halves of
/// a rewrite run on two cores.
///
/// Why at most one group is in flight: a rewrite holds each group in memory until it is
/// committed, so two in flight would hold three groups; and the uniqueness check of a new
/// object (``GenerationRewriter``) looks for an earlier claim in the group being built, in the
/// one in flight, then in what is committed — one group in flight is the one it must keep.
///
/// What if a write fails: the failure is kept and thrown by the next ``submit(_:)`` or
/// ``finish()``, and nothing more is written; the rewrite stops, and the generation it was
/// writing is swept as after any failed rewrite. No write is in flight when either returns or
/// throws, so the sweep never races one.
///
/// Lock discipline: `failure` is taken briefly, by the committing thread to record an error and
/// by the caller to read it; `inFlight` orders each write before the caller's next wait.
final class PipelinedCommits: Sendable {
    private let queue = DispatchQueue(label: "WALStore.migration.commits")
    private let inFlight = DispatchGroup()
    private let failure = Mutex<(any Error)?>(nil)

    /// Waits for the write in flight, then hands `write` to the committing thread. Throws the
    /// failure of an earlier write, starting nothing more.
    func submit(_ write: @escaping @Sendable () throws -> Void) throws {
        try finish()
        inFlight.enter()
        queue.async { [self] in
            defer { inFlight.leave() }
            do { try write() } catch { failure.withLock { $0 = error } }
        }
    }

    /// Waits for the write in flight; throws the failure of any write.
    func finish() throws {
        inFlight.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
