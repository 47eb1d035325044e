/// Test hooks, at package access: not part of the public API.
extension LogStore {
    /// How many commits are queued behind the current group-commit leader.
    package var waitingCommitCount: Int { queue.waitingCount }

    /// Calls `action` once, as soon as `count` commits are queued behind the current leader
    /// (at once if they already are), on the thread queueing the last of them.
    package func whenWaitingCommits(reach count: Int, _ action: @escaping @Sendable () -> Void) {
        queue.whenWaiting(reach: count, action)
    }

    /// True on one of the engine's I/O threads (where the `async` methods do their work).
    package static var isEngineIOThread: Bool { IOThreads.isCurrentThread }
}
