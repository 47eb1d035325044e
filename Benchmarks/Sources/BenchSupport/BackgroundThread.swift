import Dispatch
import Foundation
import Synchronization

/// A body running on a thread of its own (`Foundation.Thread`, not a task) beside the work being
/// measured, such as `compact`'s committer and reader; ``join()`` waits for it and hands back
/// its result.
final class BackgroundThread<Value: Sendable>: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private let outcome = Mutex<Result<Value, any Error>?>(nil)

    /// Starts `body` at once on a new thread named `name`.
    init(name: String, _ body: @escaping @Sendable () throws -> Value) {
        let thread = Thread { [self] in
            let result = Result { try body() }
            outcome.withLock { $0 = result }
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Waits for the body to return and returns its result, or rethrows what it threw. Call once.
    func join() throws -> Value {
        finished.wait()
        return try outcome.withLock { $0! }.get()
    }
}
