#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a `pthread_mutex_t`: the engine's one lock type.
///
/// Why not `Synchronization.Mutex`: on Linux it locks with atomics and futexes inside the
/// (uninstrumented) standard library, so the thread sanitizer cannot see it and reports every
/// access it guards as a race — which would make the sanitizer run in CI useless. The sanitizer
/// intercepts `pthread_mutex_lock`, so with this type it sees the locking and reports only real
/// races.
///
/// `@unchecked Sendable` (when `Value` is `Sendable`) because it holds a C mutex. Lock
/// discipline: the value is read and written only inside ``withLock(_:)``, between
/// `pthread_mutex_lock` and `pthread_mutex_unlock` on `mutex`; the mutex is never copied (it is
/// allocated once and freed in `deinit`).
package final class Locked<Value> {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The value, beside a byte that gives it an address of its own: a zero-sized value (a
    /// `Locked<Void>` used as a plain lock) would otherwise be accessed, for Swift's exclusivity
    /// checks, at an address the thread sanitizer also sees read before the mutex is taken, and
    /// be reported as a race.
    private var storage: (value: Value, addressed: UInt8)

    package init(_ value: Value) {
        self.storage = (value, 0)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage.value)
    }
}

extension Locked: @unchecked Sendable where Value: Sendable {}
