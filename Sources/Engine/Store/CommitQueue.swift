import Dispatch

/// Commits waiting for the log, and whether a leader is writing: leveldb's `writers_` queue.
///
/// The first committer to find no leader becomes the leader: it takes a group of waiting commits
/// from the front of the queue (itself first), appends them with one write and one sync, wakes
/// the others with their results, and hands leadership to the next waiter. Commits arriving while
/// a group is being written wait and go together in the next round.
final class CommitQueue: Sendable {
    private struct State {
        var waiting: [CommitTicket] = []
        var leaderActive = false
        /// A test's action, due once `waiting` holds `count` tickets (``whenWaiting(reach:_:)``).
        var watcher: (count: Int, action: @Sendable () -> Void)?
    }
    private let state = Locked(State())

    /// A group's bytes stop growing past this (leveldb's 1 MiB).
    static let maxGroupBytes = 1 << 20
    /// When the leader's own frame is small, the group stops at it plus this much, so a small
    /// commit is not made to wait for a megabyte of others (leveldb's rule).
    static let smallLeaderAllowance = 128 << 10

    /// Queues `ticket`; true when its committer must lead now.
    func enqueue(_ ticket: CommitTicket) -> Bool {
        let (leads, due) = state.withLock { s -> (Bool, (@Sendable () -> Void)?) in
            s.waiting.append(ticket)
            var due: (@Sendable () -> Void)?
            if let watcher = s.watcher, s.waiting.count >= watcher.count {
                due = watcher.action
                s.watcher = nil
            }
            guard !s.leaderActive else { return (false, due) }
            s.leaderActive = true
            return (true, due)
        }
        due?()
        return leads
    }

    /// Calls `action` once, on the committing thread, as soon as `count` commits are queued
    /// (a test's way to hold a leader until the others are waiting behind it).
    func whenWaiting(reach count: Int, _ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            if s.waiting.count >= count { return true }
            s.watcher = (count, action)
            return false
        }
        if now { action() }
    }

    /// Removes and returns the group the leader (`waiting[0]`) writes.
    func takeGroup() -> [CommitTicket] {
        state.withLock { s in
            let first = s.waiting[0].encoded.frame.count
            let cap =
                first <= Self.smallLeaderAllowance
                ? first + Self.smallLeaderAllowance : Self.maxGroupBytes
            var bytes = 0
            var count = 0
            for ticket in s.waiting {
                let size = ticket.encoded.frame.count
                if count > 0 && bytes + size > cap { break }
                bytes += size
                count += 1
            }
            let group = Array(s.waiting.prefix(count))
            s.waiting.removeFirst(count)
            return group
        }
    }

    /// How many commits are queued (the leader's group excluded once taken).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// After a group: the next waiter becomes leader, or nobody leads.
    func handOver() {
        let next = state.withLock { s -> CommitTicket? in
            if let first = s.waiting.first { return first }
            s.leaderActive = false
            return nil
        }
        next?.resolve(.lead)
    }
}

/// One commit in the queue, and how its committer learns what became of it: a blocked thread
/// (``waitBlocking()``), or a callback (an `async` commit, whose task stays suspended meanwhile
/// and whose callback never blocks: it resumes the task, or hands leadership to an I/O thread).
final class CommitTicket: Sendable {
    enum Outcome: Sendable {
        /// The committer must lead the next group (which will include its own commit).
        case lead
        /// A leader wrote the commit: its sequence number, or the error that stopped it.
        case done(Result<UInt64, EngineError>)
    }

    private enum Waiter: Sendable {
        /// A thread blocked in ``waitBlocking()``; the outcome is left in the box for it.
        case thread(DispatchSemaphore, Locked<Outcome?>)
        /// Called with the outcome on the resolving thread (the leader's).
        case callback(@Sendable (CommitTicket, Outcome) -> Void)
    }

    let encoded: EncodedCommit
    private let waiter: Waiter

    /// A ticket whose committer will wait in ``waitBlocking()``.
    init(_ encoded: EncodedCommit) {
        self.encoded = encoded
        waiter = .thread(DispatchSemaphore(value: 0), Locked(nil))
    }

    /// A ticket whose outcome goes to `onResolve`, called once, on the thread that resolves it.
    /// It must not block: it runs inside the leader's round.
    init(_ encoded: EncodedCommit, onResolve: @escaping @Sendable (CommitTicket, Outcome) -> Void) {
        self.encoded = encoded
        waiter = .callback(onResolve)
    }

    /// Tells the waiting committer its outcome (once per ticket): wakes its thread, or calls its
    /// callback.
    func resolve(_ outcome: Outcome) {
        switch waiter {
        case .thread(let semaphore, let box):
            box.withLock { $0 = outcome }
            semaphore.signal()
        case .callback(let onResolve):
            onResolve(self, outcome)
        }
    }

    /// Blocks the calling thread until ``resolve(_:)`` (a ticket made with `init(_:)`).
    func waitBlocking() -> Outcome {
        let internalError = Outcome.done(.failure(EngineError(.io, "internal error: a commit ticket woke without an outcome")))
        guard case .thread(let semaphore, let box) = waiter else { return internalError }
        semaphore.wait()
        return box.withLock { $0 } ?? internalError
    }
}
