/// Test hooks, at package access: not part of the public API.
extension LogStore {
    /// How many commits are queued behind the current group-commit leader.
    package var waitingCommitCount: Int { queue.waitingCount }
}
