import Dispatch
import Engine
import Synchronization

/// The sweep of the generations a store's header does not name (FORMAT.md, "Migrations",
/// step 5), run in the background once the store is open: the generation a migration replaced,
/// and whatever an interrupted migration or an earlier, interrupted sweep left.
///
/// Why it can run beside saves and fetches without their lock: it deletes only keys of
/// generations no reader or writer of the store looks at (every call reads and writes the live
/// generation, which the sweep never touches, and no migration runs once the store is open), in
/// commits of their own. Every such commit is safe to lose or repeat: a crash, or a close that
/// stops it, leaves garbage the next open finds and sweeps again.
///
/// What it costs the store's own calls: it shares the engine's commit path, so a save may
/// wait for one of its commits (at most ``GenerationSweeper/chunk`` deletes) to be written.
///
/// Lock discipline: `job` is held for a whole run (one sweeper at a time; ``stop()`` takes it to
/// wait for the run to end); `state` is taken briefly, never across an engine call.
final class BackgroundSweep: Sendable {
    private struct State {
        /// ``stop()`` has begun: no further commit is made.
        var stopping = false
        /// No other generation holds a key, or a run failed (it is not retried before the
        /// next open).
        var finished = false
    }

    private let engine: LogStore
    private let live: UInt32
    private let chunk: Int
    private let state = Mutex(State())
    private let job = Mutex(())

    /// A sweep of every generation but `live` in `engine`, in commits of `chunk` deletes;
    /// nothing runs until ``start()``.
    init(engine: LogStore, live: UInt32, chunk: Int = GenerationSweeper.chunk) {
        self.engine = engine
        self.live = live
        self.chunk = chunk
    }

    /// Starts the sweep on a background thread when another generation holds a key (found by
    /// one seek per key range, on the calling thread); else marks it finished.
    func start() throws {
        guard try GenerationSweeper.holdsOtherGenerations(than: live, in: engine) else {
            state.withLock { $0.finished = true }
            return
        }
        DispatchQueue.global().async { self.run() }
    }

    /// Sweeps until nothing is left or ``stop()`` is called; a caller while a run is going
    /// waits for it, and returns at once when it is finished. Best effort: an engine failure
    /// (a failed write, a closed or read-only engine) ends it, leaving the rest to the next open.
    func run() {
        job.withLock { _ in
            guard !state.withLock({ $0.stopping || $0.finished }) else { return }
            let done = (try? GenerationSweeper.discardAll(except: live, in: engine, chunk: chunk) { self.state.withLock { $0.stopping } }) ?? true
            if done { state.withLock { $0.finished = true } }
        }
    }

    /// Stops the sweep before its next commit and returns once it has stopped: what is left
    /// stays for the next open's sweep.
    func stop() {
        state.withLock { $0.stopping = true }
        job.withLock { _ in }
    }
}
