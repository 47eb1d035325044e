import Dispatch
import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import Engine
import EngineTestSupport
import Testing

/// A task executor with one thread of its own: tasks that prefer it (SE-0417) run their
/// non-isolated code there and nowhere else, so a test can tell whether an `async` call did its
/// I/O on the caller's thread, and whether that thread stayed free while the I/O ran.
final class SingleThreadExecutor: TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var stopping = false
    }
    private let state = Locked(State())
    private let available = DispatchSemaphore(value: 0)
    private let thread = Locked<pthread_t?>(nil)

    init() {
        let started = DispatchSemaphore(value: 0)
        Thread { [self] in
            thread.withLock { $0 = pthread_self() }
            started.signal()
            run()
        }.start()
        started.wait()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        state.withLock { $0.jobs.append(job) }
        available.signal()
    }

    /// True on the executor's thread.
    var isCurrentThread: Bool {
        thread.withLock { $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Ends the thread once the jobs already queued have run.
    func shutdown() {
        state.withLock { $0.stopping = true }
        available.signal()
    }

    private func run() {
        while true {
            available.wait()
            let job = state.withLock { s -> UnownedJob? in s.jobs.isEmpty ? nil : s.jobs.removeFirst() }
            guard let job else {
                if state.withLock({ $0.stopping && $0.jobs.isEmpty }) { return }
                continue
            }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Which thread made each call into a fault-injecting file system.
final class IOThreadLog: Sendable {
    struct Entry: Sendable, CustomStringConvertible {
        var access: FaultInjectingFileSystem.Access
        var onExecutor: Bool
        var onEngineThread: Bool
        var description: String { "\(access) (executor: \(onExecutor), engine thread: \(onEngineThread))" }
    }
    private let entries = Locked<[Entry]>([])

    /// Starts recording every call into `fs`, noting whether it ran on `executor`'s thread.
    init(_ fs: FaultInjectingFileSystem, executor: SingleThreadExecutor) {
        fs.onEveryAccess { [entries] access in
            let entry = Entry(access: access, onExecutor: executor.isCurrentThread, onEngineThread: LogStore.isEngineIOThread)
            entries.withLock { $0.append(entry) }
        }
    }

    var all: [Entry] { entries.withLock { $0 } }
    /// The calls made on the executor's (the caller's) thread: there must be none.
    var onExecutor: [Entry] { all.filter(\.onExecutor) }
    /// The calls made anywhere but on an engine I/O thread.
    var offEngineThreads: [Entry] { all.filter { !$0.onEngineThread } }
    func count(_ kind: FaultInjectingFileSystem.AccessKind) -> Int { all.filter { $0.access.kind == kind }.count }
}

/// Runs `body` in a task bound to `executor` and returns its result.
func onExecutor<T: Sendable>(
    _ executor: SingleThreadExecutor, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await Task(executorPreference: executor) { try await body() }.value
}

/// The `async` API never blocks the caller's thread in I/O: every file-system call it makes runs
/// on the engine's own I/O threads, and the caller's executor stays free meanwhile.
///
/// The suite is serialized because some tests hold one of the engine's (process-wide) I/O
/// threads in a sync on purpose.
@Suite(.serialized) struct AsyncTests {
    static let dir = "/async"

    static func options(_ mode: LogStore.SyncMode = .durable, cached: Bool = true) -> LogStore.Options {
        var options = LogStore.Options()
        options.syncMode = mode
        if !cached {
            options.valueCacheCapacity = 0
            options.blockCacheCapacity = 0
        }
        return options
    }

    /// How long a held sync waits for the test before giving up: a bound against hanging if the
    /// engine is broken, not a timing assertion (the test fails when it is reached).
    static var holdLimit: DispatchTime { .now() + .seconds(60) }

    // MARK: No I/O on the caller's thread

    @Test func asyncCommitsWriteBlobsAndSyncOnlyOnEngineThreads() async throws {
        let fs = FaultInjectingFileSystem()
        let executor = SingleThreadExecutor()
        defer { executor.shutdown() }
        let log = IOThreadLog(fs, executor: executor)
        let sequences = try await onExecutor(executor) {
            let store = try await LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            var sequences: [UInt64] = []
            sequences.append(try await store.commit(WriteBatch { $0.put(bytes("small"), bytes("value")) }))
            // A large, compressible batch: encoded and compressed where it is written.
            sequences.append(
                try await store.commit(
                    WriteBatch { batch in
                        for i in 0..<200 { batch.put(bytes("big/\(i)"), [UInt8](repeating: UInt8(i % 7), count: 4 << 10)) }
                    }))
            var random = SeededGenerator(seed: 3)
            let blob = random.bytes(3 << 19)
            sequences.append(try await store.commit(WriteBatch { $0.put(bytes("blob"), blob) }))
            sequences.append(try await store.commit(WriteBatch { $0.putExternal(bytes("external"), bytes("tiny")) }))
            try await store.close()
            return sequences
        }
        #expect(sequences == [1, 2, 3, 4])
        #expect(log.count(.write) > 0 && log.count(.sync) > 0 && log.count(.rename) > 0, "blobs and frames were written")
        #expect(log.onExecutor.isEmpty, "I/O on the caller's thread: \(log.onExecutor)")
        #expect(log.offEngineThreads.isEmpty, "I/O off the engine's threads: \(log.offEngineThreads)")
        fs.powerLoss()
        let reopened = try await LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(try reopened.contents().count == 203)
    }

    @Test func asyncReadsAndBlobChunksAreReadOnlyOnEngineThreads() async throws {
        let fs = FaultInjectingFileSystem()
        var random = SeededGenerator(seed: 4)
        let blob = random.bytes(5 << 19)  // two and a half chunks
        let compressible = [UInt8](repeating: 9, count: 3 << 19)
        do {
            let store = try await LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            try store.write { batch in
                batch.put(bytes("inline"), bytes("inline value"))
                batch.put(bytes("blob"), blob)
                batch.put(bytes("packed"), compressible)
            }
            try await store.close()
        }
        // Reopened without caches, so that every read goes to the file system.
        let store = try await LogStore.open(at: Self.dir, options: Self.options(cached: false), fileSystem: fs)
        let executor = SingleThreadExecutor()
        defer { executor.shutdown() }
        let log = IOThreadLog(fs, executor: executor)
        try await onExecutor(executor) {
            #expect(try await store.value(forKey: bytes("inline")) == bytes("inline value"))
            #expect(try await store.value(forKey: bytes("blob")) == blob)
            #expect(try await store.value(forKey: bytes("absent")) == nil)
            for (key, expected) in [("blob", blob), ("packed", compressible), ("inline", bytes("inline value"))] {
                let chunks = try #require(try await store.valueChunks(forKey: bytes(key)))
                #expect(chunks.length == UInt64(expected.count))
                var read: [UInt8] = []
                var count = 0
                for try await chunk in chunks {
                    read += chunk
                    count += 1
                }
                #expect(read == expected, "\(key)")
                #expect(count == (key == "inline" ? 1 : (expected.count + (1 << 20) - 1) >> 20), "\(key)")
            }
            #expect(try await store.valueChunks(forKey: bytes("absent")) == nil)
        }
        #expect(log.count(.read) > 0)
        #expect(log.onExecutor.isEmpty, "I/O on the caller's thread: \(log.onExecutor)")
        #expect(log.offEngineThreads.isEmpty, "I/O off the engine's threads: \(log.offEngineThreads)")
    }

    @Test func asyncOpenSyncCompactAndCloseDoTheirIOOnEngineThreads() async throws {
        let fs = FaultInjectingFileSystem()
        let executor = SingleThreadExecutor()
        defer { executor.shutdown() }
        let log = IOThreadLog(fs, executor: executor)
        let report = try await onExecutor(executor) {
            let store = try await LogStore.open(at: Self.dir, options: Self.options(.none), fileSystem: fs)
            for round in 0..<3 {
                for i in 0..<50 { try await store.commit(WriteBatch { $0.put(bytes("k\(i)"), bytes("v\(round)-\(i)")) }) }
            }
            try await store.sync()
            let report = try await store.compact()
            try await store.close()
            return report
        }
        #expect(report.tablesWritten == 1 && report.recordsWritten == 50)
        #expect(log.count(.sync) > 0 && log.count(.rename) > 0 && log.count(.remove) > 0)
        #expect(log.onExecutor.isEmpty, "I/O on the caller's thread: \(log.onExecutor)")
        #expect(log.offEngineThreads.isEmpty, "I/O off the engine's threads: \(log.offEngineThreads)")
        fs.powerLoss()
        let reopened = try await LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(try await reopened.value(forKey: bytes("k7")) == bytes("v2-7"))
    }

    @Test func deferredModeSyncsInTheBackgroundOnAnEngineThread() async throws {
        let fs = FaultInjectingFileSystem()
        let store = try await LogStore.open(at: Self.dir, options: Self.options(.deferred(interval: .milliseconds(1))), fileSystem: fs)
        let (syncs, synced) = AsyncStream.makeStream(of: Bool.self)
        fs.beforeEverySync { _ in synced.yield(LogStore.isEngineIOThread) }
        try store.write { $0.put(bytes("a"), bytes("1")) }
        // The commit left bytes unsynced; the background sync is the next sync there is.
        var iterator = syncs.makeAsyncIterator()
        let onEngineThread = await iterator.next()
        #expect(onEngineThread == true, "the background sync ran on a thread of the engine's")
        fs.beforeEverySync { _ in }
        try await store.close()
    }

    // MARK: The caller's executor stays free

    @Test func manyTasksCommittingOnAOneThreadExecutorAllCompleteAndShareASync() async throws {
        let fs = FaultInjectingFileSystem()
        let store = try await LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        let executor = SingleThreadExecutor()
        defer { executor.shutdown() }
        let tasks = 32
        let firstSync = fs.count(of: .sync) + 1
        let syncedOnExecutor = Locked(false)
        let gaveUp = Locked(false)
        fs.beforeEverySync { number in
            guard number == firstSync else { return }
            if executor.isCurrentThread {
                // Holding the executor's only thread would hang the test: record and go on.
                syncedOnExecutor.withLock { $0 = true }
                return
            }
            // Hold the first commit's sync until the other tasks' commits all wait behind it:
            // they can only get there if the executor's thread is free.
            let queued = DispatchSemaphore(value: 0)
            store.whenWaitingCommits(reach: tasks - 1) { queued.signal() }
            if queued.wait(timeout: Self.holdLimit) == .timedOut { gaveUp.withLock { $0 = true } }
        }
        let syncsBefore = fs.count(of: .sync)
        let writesBefore = fs.count(of: .write)
        let sequences = try await withThrowingTaskGroup(of: UInt64.self) { group in
            for i in 0..<tasks {
                group.addTask(executorPreference: executor) {
                    try await store.commit(WriteBatch { $0.put(bytes("k\(i)"), bytes("v\(i)")) })
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(!syncedOnExecutor.withLock { $0 }, "a commit synced on the caller's thread")
        #expect(!gaveUp.withLock { $0 }, "the other commits never queued behind the held sync")
        #expect(sequences.sorted() == Array(1...UInt64(tasks)))
        #expect(fs.count(of: .sync) - syncsBefore == 2, "the first commit's sync, then one for all the others")
        #expect(fs.count(of: .write) - writesBefore == 2)

        // And without a held sync, many rounds from the one thread all complete.
        fs.beforeEverySync { _ in }
        let more = try await withThrowingTaskGroup(of: UInt64.self) { group in
            for i in 0..<tasks {
                group.addTask(executorPreference: executor) {
                    var last: UInt64 = 0
                    for round in 0..<10 {
                        last = try await store.commit(WriteBatch { $0.put(bytes("k\(i)"), bytes("r\(round)")) })
                    }
                    return last
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(more.count == tasks)
        #expect(store.statistics.lastSequence == UInt64(tasks * 11))
        #expect(try await store.value(forKey: bytes("k5")) == bytes("r9"))
    }

    @Test func anotherTaskOnTheExecutorReadsWhileASyncIsHeld() async throws {
        let fs = FaultInjectingFileSystem()
        let store = try await LogStore.open(at: Self.dir, options: Self.options(.none, cached: false), fileSystem: fs)
        try store.write { $0.put(bytes("other"), bytes("readable")) }
        try await store.sync()
        try store.write { $0.put(bytes("pending"), bytes("unsynced")) }

        let executor = SingleThreadExecutor()
        defer { executor.shutdown() }
        let (entered, enter) = AsyncStream.makeStream(of: Void.self)
        let release = DispatchSemaphore(value: 0)
        let held = Locked(false)
        let syncedOnExecutor = Locked(false)
        let gaveUp = Locked(false)
        fs.beforeEverySync { _ in
            defer { enter.yield() }
            guard !executor.isCurrentThread else {
                syncedOnExecutor.withLock { $0 = true }
                return
            }
            held.withLock { $0 = true }
            enter.yield()
            if release.wait(timeout: Self.holdLimit) == .timedOut { gaveUp.withLock { $0 = true } }
            held.withLock { $0 = false }
        }
        let syncing = Task(executorPreference: executor) { try await store.sync() }
        var entries = entered.makeAsyncIterator()
        await entries.next()
        // The sync is held (on an engine thread): a task on the same one-thread executor runs,
        // and its read, which needs the file system, completes meanwhile.
        let (read, heldDuringRead) = try await onExecutor(executor) {
            (try await store.value(forKey: bytes("other")), held.withLock { $0 })
        }
        release.signal()
        try await syncing.value
        #expect(!syncedOnExecutor.withLock { $0 }, "the sync ran on the caller's thread")
        #expect(!gaveUp.withLock { $0 })
        #expect(read == bytes("readable"))
        #expect(heldDuringRead, "the read finished while the sync was held")
        fs.beforeEverySync { _ in }
        fs.powerLoss()
        #expect(try await LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs).value(forKey: bytes("pending")) == bytes("unsynced"))
    }

    // MARK: Same behaviour as the synchronous calls

    @Test func blobChunksFailWithTypedCorruptionAtADamagedChunk() async throws {
        let fs = FaultInjectingFileSystem()
        let store = try await LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        var random = SeededGenerator(seed: 5)
        let blob = random.bytes(5 << 19)
        try await store.commit(WriteBatch { $0.put(bytes("blob"), blob) })
        let name = try #require(fs.names(in: Self.dir + "/blobs").first)
        // A bit in the second chunk (raw: the chunks follow the 44-byte header, 1 MiB each).
        fs.flipBit(in: Self.dir + "/blobs/" + name, atByte: 44 + (1 << 20) + 100)
        let chunks = try #require(try await store.valueChunks(forKey: bytes("blob")))
        var iterator = chunks.makeAsyncIterator()
        #expect(try await iterator.next() == Array(blob[0..<(1 << 20)]))
        for _ in 0..<2 {  // and again: a damaged chunk fails every time it is asked for
            do {
                _ = try await iterator.next()
                Issue.record("a damaged chunk was returned")
            } catch {
                // `error` is an EngineError: the sequence's Failure is typed.
                #expect(error.code == .corruption)
                #expect(error.path?.hasSuffix(name) == true)
            }
        }
        await #expect(throws: EngineError.self) { try await store.value(forKey: bytes("blob")) }
    }

    @Test func asyncCallsThrowWhatTheSynchronousOnesThrow() async throws {
        let fs = FaultInjectingFileSystem()
        let store = try await LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        await #expect { try await LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs) } throws: { error in
            (error as? EngineError)?.code == .locked
        }
        await #expect { try await store.commit(WriteBatch { $0.put([], bytes("no key")) }) } throws: { error in
            (error as? EngineError)?.code == .invalidArgument
        }
        #expect(try await store.commit(WriteBatch()) == 0, "an empty batch returns the last sequence")
        try await store.commit(WriteBatch { $0.put(bytes("a"), bytes("1")) })

        // A failed sync: that commit throws the sync's error, later ones readOnly, reads go on.
        fs.failNext(.sync, errno: EIO)
        await #expect { try await store.commit(WriteBatch { $0.put(bytes("b"), bytes("2")) }) } throws: { error in
            (error as? EngineError)?.code == .io
        }
        await #expect { try await store.commit(WriteBatch { $0.put(bytes("c"), bytes("3")) }) } throws: { error in
            (error as? EngineError)?.code == .readOnly
        }
        #expect(try await store.value(forKey: bytes("a")) == bytes("1"))
        #expect(try await store.value(forKey: bytes("b")) == nil)

        // Closing a read-only store reports why it is read-only, and closes it all the same.
        await #expect { try await store.close() } throws: { error in (error as? EngineError)?.code == .readOnly }
        try await store.close()  // idempotent
        await #expect { try await store.value(forKey: bytes("a")) } throws: { error in
            (error as? EngineError)?.code == .closed
        }
        await #expect { try await store.sync() } throws: { error in (error as? EngineError)?.code == .closed }
        await #expect { try await store.compact() } throws: { error in (error as? EngineError)?.code == .closed }
        await #expect { try await store.valueChunks(forKey: bytes("a")) } throws: { error in
            (error as? EngineError)?.code == .closed
        }
        let reopened = try await LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        #expect(try reopened.contents() == [bytes("a"): bytes("1")])
    }
}

extension WriteBatch {
    /// A batch built by `body`, for one-line async commits.
    init(_ body: (inout WriteBatch) -> Void) {
        self.init()
        body(&self)
    }
}
