import Synchronization

/// Where `compact`'s stall measurement is, shared by the thread that compacts and the threads that
/// commit and read beside it: each operation is counted in the phase it started in.
final class StallPhase: Sendable {
    enum Phase: Int {
        /// Committing and reading, no compaction: the baseline.
        case baseline
        /// `compact()` is running.
        case compacting
        /// Time to stop.
        case finished
    }

    private let raw = Atomic<Int>(Phase.baseline.rawValue)

    /// The phase now.
    var current: Phase { Phase(rawValue: raw.load(ordering: .acquiring))! }

    /// Moves on to `phase`.
    func enter(_ phase: Phase) {
        raw.store(phase.rawValue, ordering: .releasing)
    }
}
