#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Synchronization

/// Holds commits back while the sealed tail is past its bound and a background flush is on its
/// way to bring it back (FORMAT.md, "Flush": "The tail's bound"): a commit waits at
/// ``waitWhileStalled()`` before it takes any lock of the store, so the flush it waits for is
/// never held up by it. The flag is set and cleared under the catalog lock, by whoever looks at
/// the tail (a rollover, the flush job after its flush and at its end, close), and only while
/// a flush job is scheduled: that job looks again when it ends, so a stall always ends.
///
/// A commit that finds no stall pays one atomic load. `@unchecked Sendable`: the mutex and
/// condition are allocated once, never copied, and freed in `deinit`.
final class TailStall: @unchecked Sendable {
    private let stalled = Atomic<Bool>(false)
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// Commits that waited, since open (for tests and statistics).
    let stalls = Atomic<Int>(0)

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        precondition(pthread_cond_init(condition, nil) == 0, "pthread_cond_init failed")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    var isStalled: Bool { stalled.load(ordering: .acquiring) }

    /// Sets or clears the stall; clearing wakes every waiting commit.
    func set(_ stall: Bool) {
        pthread_mutex_lock(mutex)
        stalled.store(stall, ordering: .releasing)
        if !stall { pthread_cond_broadcast(condition) }
        pthread_mutex_unlock(mutex)
    }

    /// Returns at once when no stall is on; otherwise waits until it is cleared.
    func waitWhileStalled() {
        guard isStalled else { return }
        stalls.add(1, ordering: .relaxed)
        pthread_mutex_lock(mutex)
        while stalled.load(ordering: .acquiring) { pthread_cond_wait(condition, mutex) }
        pthread_mutex_unlock(mutex)
    }
}
