extension LogStore {
    /// Runs `body` on one of the engine's I/O threads and suspends the calling task until it is
    /// done: for layers above the engine (the Snapshot module's store) whose synchronous calls
    /// do file I/O through a store, so that their `async` variants never block a cooperative
    /// thread. `body` may block in the store's calls, but must not wait for another `async`
    /// engine call to finish (the pool could be exhausted).
    package static func runOnIOThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await IOThreads.shared.runInfallible(body)
    }

    /// Runs `body` on one of the engine's I/O threads, without waiting for it: for layers above
    /// the engine that hand work to a thread of their own choosing and report its outcome
    /// themselves. The same rules as ``runOnIOThread(_:)`` apply to `body`.
    package static func submitToIOThread(_ body: @escaping @Sendable () -> Void) {
        IOThreads.shared.submit(body)
    }
}
