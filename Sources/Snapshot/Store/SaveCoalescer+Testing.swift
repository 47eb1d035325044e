extension SaveCoalescer {
    /// Makes groups hold at most `count` saves (a test's way to have one group planned while
    /// the one before it is being written).
    package func limitGroups(to count: Int) {
        state.withLock { $0.groupLimit = max(1, count) }
    }
}
