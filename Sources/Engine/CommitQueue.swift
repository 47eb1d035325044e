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
    }
    private let state = Locked(State())

    /// A group's bytes stop growing past this (leveldb's 1 MiB).
    static let maxGroupBytes = 1 << 20
    /// When the leader's own frame is small, the group stops at it plus this much, so a small
    /// commit is not made to wait for a megabyte of others (leveldb's rule).
    static let smallLeaderAllowance = 128 << 10

    /// Queues `ticket`; true when its committer must lead now.
    func enqueue(_ ticket: CommitTicket) -> Bool {
        state.withLock { s in
            s.waiting.append(ticket)
            guard !s.leaderActive else { return false }
            s.leaderActive = true
            return true
        }
    }

    /// Removes and returns the group the leader (`waiting[0]`) writes.
    func takeGroup() -> [CommitTicket] {
        state.withLock { s in
            let first = s.waiting[0].encoded.frame.count
            let cap = first <= Self.smallLeaderAllowance
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
/// (``waitBlocking()``) or a suspended task (``waitSuspending()``).
final class CommitTicket: Sendable {
    enum Role: Sendable {
        case waiting
        /// The committer must lead the next group (which will include its own commit).
        case lead
        /// A leader wrote the commit: its sequence number, or the error that stopped it.
        case done(Result<UInt64, EngineError>)
    }

    private struct State {
        var role = Role.waiting
        var continuation: CheckedContinuation<Void, Never>?
    }

    let encoded: EncodedCommit
    private let state = Locked(State())
    private let semaphore = DispatchSemaphore(value: 0)

    init(_ encoded: EncodedCommit) { self.encoded = encoded }

    /// Tells the waiting committer its role: resumes its task, or wakes its thread.
    func resolve(_ role: Role) {
        let continuation = state.withLock { s in
            s.role = role
            defer { s.continuation = nil }
            return s.continuation
        }
        if let continuation { continuation.resume() } else { semaphore.signal() }
    }

    /// Blocks the calling thread until ``resolve(_:)``.
    func waitBlocking() -> Role {
        semaphore.wait()
        return state.withLock { $0.role }
    }

    /// Suspends the calling task, without blocking its thread, until ``resolve(_:)``.
    func waitSuspending() async -> Role {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resolved = state.withLock { s in
                guard case .waiting = s.role else { return true }
                s.continuation = continuation
                return false
            }
            if resolved { continuation.resume() }
        }
        return state.withLock { $0.role }
    }
}
