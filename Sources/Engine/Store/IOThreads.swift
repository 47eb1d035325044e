#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Dispatch

/// The engine's own threads for blocking file I/O done on behalf of `async` calls.
///
/// An `async` method of ``LogStore`` hands its work (a commit's blob writes, compression,
/// `pwrite` and `fdatasync`, a read's `pread`s, a sync, a compaction, opening and closing) to
/// one of these threads and suspends its task until the job is done, so no Swift-concurrency
/// cooperative thread ever waits in a system call. This is what NIO's thread pool does for file
/// I/O: the cooperative pool has one thread per core, and each one blocked in `fdatasync` is a
/// core's worth of tasks that cannot run.
///
/// The threads are plain POSIX threads (not Dispatch's, not the cooperative pool), started at
/// first use and shared by every store in the process; jobs run in the order they were
/// submitted, on whichever thread is free. A job may block (in a system call, or on one of the
/// store's locks) but never waits for another job of this pool, so the pool cannot deadlock on
/// itself: a commit that has to wait for the group-commit leader does not hold a thread while it
/// waits (see `CommitTicket`). A commit does wait for its blobs' writes, which run on a second
/// pool (``blobWrites``) whose jobs wait for nothing.
final class IOThreads: Sendable {
    typealias Job = @Sendable () -> Void

    /// The process-wide pool every store uses.
    static let shared = IOThreads(threads: defaultThreadCount)
    /// The pool that writes and syncs a commit's blob files while the commit (on its caller's
    /// thread or on one of ``shared``'s) syncs the blob directory and waits for them. A job of this
    /// pool waits for nothing, so a ``shared`` job that waits for it cannot deadlock: the waits
    /// run one way, from ``shared`` to this pool, never back.
    static let blobWrites = IOThreads(threads: defaultThreadCount)
    /// Two threads: one can write and sync a group of commits while the other prepares the next
    /// commits (writing their blobs, compressing them) or serves reads.
    static let defaultThreadCount = 2

    private struct Queue {
        var jobs: [Job?] = []
        var head = 0
    }

    /// Jobs not yet started. `available` counts them, so a thread that wakes from it always
    /// finds one.
    private let queue = Locked(Queue())
    private let available = DispatchSemaphore(value: 0)

    /// Set, as thread-specific data, on every thread of every pool: how ``isCurrentThread`` knows.
    private static let marker: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    /// Starts `threads` threads that run jobs until the process ends.
    private init(threads: Int) {
        for _ in 0..<threads {
            Self.startThread { [self] in work() }
        }
    }

    /// Runs `job` on one of the pool's threads, as soon as one is free. Returns at once.
    func submit(_ job: @escaping Job) {
        queue.withLock { $0.jobs.append(job) }
        available.signal()
    }

    /// Runs `body` on one of the pool's threads and suspends the calling task, without blocking
    /// its thread, until it is done; returns what `body` returned or throws what it threw.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws(EngineError) -> T) async throws(EngineError) -> T {
        try await start { finish in finish(Result { () throws(EngineError) -> T in try body() }) }
    }

    /// Runs `job` on one of the pool's threads and suspends the calling task until `job` (or
    /// whoever it hands its `finish` to) calls `finish`, exactly once, with the outcome.
    func start<T: Sendable>(
        _ job: @escaping @Sendable (_ finish: @escaping @Sendable (Result<T, EngineError>) -> Void) -> Void
    ) async throws(EngineError) -> T {
        try await handOff(job).get()
    }

    /// ``run(_:)`` for a body that cannot fail.
    func runInfallible<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await handOff { finish in finish(body()) }
    }

    /// Submits `job` and suspends the calling task until `job` (or whoever it hands `finish`
    /// to) calls `finish`, exactly once; returns what it was called with.
    private func handOff<T: Sendable>(
        _ job: @escaping @Sendable (_ finish: @escaping @Sendable (T) -> Void) -> Void
    ) async -> T {
        // A checked continuation, not an unsafe one: besides catching a double resume, its
        // `resume` runs inside the (uninstrumented) concurrency runtime. An unsafe continuation's
        // `resume` is inlined here; when a job finishes before its task has finished suspending,
        // the runtime hands over with atomics the thread sanitizer cannot see, and it reports
        // that inlined code as racing with the task (a false report, but CI fails on any).
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            submit { job { continuation.resume(returning: $0) } }
        }
    }

    /// True on a thread of an `IOThreads` pool.
    static var isCurrentThread: Bool { pthread_getspecific(marker) != nil }

    private func work() {
        pthread_setspecific(Self.marker, UnsafeRawPointer(bitPattern: 1))
        while true {
            available.wait()
            let job = queue.withLock { q -> Job? in
                let job = q.jobs[q.head]
                q.jobs[q.head] = nil
                q.head += 1
                if q.head == q.jobs.count {
                    q.jobs.removeAll(keepingCapacity: true)
                    q.head = 0
                } else if q.head >= 1024 {
                    q.jobs.removeFirst(q.head)
                    q.head = 0
                }
                return job
            }
            job?()
        }
    }

    /// Starts a detached POSIX thread that runs `body`.
    private static func startThread(_ body: @escaping @Sendable () -> Void) {
        final class Start: Sendable {
            let body: @Sendable () -> Void
            init(body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let start = Unmanaged.passRetained(Start(body: body)).toOpaque()
        #if canImport(Darwin)
            var thread: pthread_t?
        #else
            var thread = pthread_t()
        #endif
        let created = pthread_create(
            &thread, nil,
            { raw in
                #if canImport(Darwin)
                    let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
                #else
                    let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
                #endif
                start.body()
                return nil
            }, start)
        // Without its I/O threads the engine's async calls could never finish; there is no way
        // to go on (and no input makes this fail: only exhausted system resources).
        precondition(created == 0, "WALStore could not start its I/O thread (pthread_create: \(created))")
        #if canImport(Darwin)
            pthread_detach(thread!)
        #else
            pthread_detach(thread)
        #endif
    }
}
