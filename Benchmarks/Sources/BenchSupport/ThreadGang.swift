import Dispatch
import Foundation
import Synchronization

/// Runs a body on several real threads (`Foundation.Thread`, not tasks) started together, and
/// times them from the moment they are released until the last one finishes.
public enum ThreadGang {
    /// Starts `count` threads, each running `body(threadIndex)` once they are all ready, and
    /// returns the seconds from their release to the end of the last. The first error thrown by
    /// any thread is rethrown after all have finished.
    public static func run(count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws -> Double {
        let ready = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        for index in 0..<count {
            let thread = Thread {
                ready.signal()
                gate.wait()
                do {
                    try body(index)
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
                finished.signal()
            }
            thread.name = "bench-writer-\(index)"
            thread.start()
        }
        for _ in 0..<count { ready.wait() }
        let (_, seconds) = Stopwatch.time {
            for _ in 0..<count { gate.signal() }
            for _ in 0..<count { finished.wait() }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        return seconds
    }
}
