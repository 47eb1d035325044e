import Engine

/// The saves waiting to be written, and who writes them: saves that arrive while another is being
/// written queue here, and the next writer takes them all as one group (see
/// ``WALDataStore/save(_:)``). One caller at a time leads: it drains the queue, group by group,
/// and hands each save its outcome.
package final class SaveCoalescer: Sendable {
    /// One waiting save and how to hand it its outcome (called once, on the leader's thread).
    struct Pending: Sendable {
        let request: DataStoreSaveChangesRequest<DefaultSnapshot>
        let finish: @Sendable (Result<DataStoreSaveChangesResult<DefaultSnapshot>, DataStoreError>) -> Void
    }

    struct State {
        var queue: [Pending] = []
        var leading = false
        /// The most saves one group holds.
        var groupLimit = SaveCoalescer.groupLimit
    }

    /// The queue and whether a leader is draining it; read and written only under its lock
    /// (the engine's `Locked`, a pthread mutex the thread sanitizer sees).
    let state = Locked(State())

    /// The most saves one group holds, unless a test says otherwise.
    static let groupLimit = 64

    /// Queues `pending`. Returns true when the caller must lead: no one is draining the queue.
    func enqueue(_ pending: Pending) -> Bool {
        state.withLock { s in
            s.queue.append(pending)
            if s.leading { return false }
            s.leading = true
            return true
        }
    }

    /// The next group (in arrival order), or `nil` when none waits; the caller keeps the lead
    /// (``keepsLead()`` gives it up).
    func takeGroup() -> [Pending]? {
        state.withLock { s in
            guard !s.queue.isEmpty else { return nil }
            let group = Array(s.queue.prefix(s.groupLimit))
            s.queue.removeFirst(group.count)
            return group
        }
    }

    /// Gives up the lead when no save waits; returns true (keeping the lead) when some do.
    func keepsLead() -> Bool {
        state.withLock { s in
            if s.queue.isEmpty { s.leading = false }
            return s.leading
        }
    }

    /// How many saves wait.
    package var waiting: Int { state.withLock { $0.queue.count } }
}
