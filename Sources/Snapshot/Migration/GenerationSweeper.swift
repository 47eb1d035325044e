import Engine

/// Removes the keys of generations that are not live (FORMAT.md, "Migrations"): what a
/// migration leaves behind when it is abandoned or interrupted, and the generation it
/// replaced once it has switched. Deletes go in commits of ``chunk`` keys; every one is safe
/// to lose or repeat, since no reader looks at a generation the header does not name.
enum GenerationSweeper {
    static let chunk = 65536

    /// Deletes every key of generation `generation` (only the record layer's kinds for 0).
    static func discard(_ generation: UInt32, in engine: LogStore) throws {
        for range in ranges(of: generation) { _ = try delete(in: range, of: engine, chunk: chunk, stop: { false }) }
    }

    /// Deletes the keys of every generation but `live`, in commits of `chunk` keys. Returns
    /// false when `stop` said so before a commit (what is left is deleted by a later sweep),
    /// true when none is left.
    @discardableResult
    static func discardAll(except live: UInt32, in engine: LogStore, chunk: Int = chunk, stop: () -> Bool = { false }) throws -> Bool {
        for range in ranges(exceptLive: live) where !(try delete(in: range, of: engine, chunk: chunk, stop: stop)) { return false }
        return true
    }

    /// Whether a generation other than `live` holds any key: one seek per range.
    static func holdsOtherGenerations(than live: UInt32, in engine: LogStore) throws -> Bool {
        for range in ranges(exceptLive: live) {
            var first = try engine.scan(range, limit: 1)
            if try first.next() != nil { return true }
        }
        return false
    }

    /// The key ranges of generation `generation`.
    private static func ranges(of generation: UInt32) -> [LogStore.KeyRange] {
        generation == 0 ? RecordSpace.recordTags.map { .prefix([$0]) } : [.prefix(RecordSpace.prefix(of: generation))]
    }

    /// The key ranges of every generation but `live`.
    private static func ranges(exceptLive live: UInt32) -> [LogStore.KeyRange] {
        let all = LogStore.KeyRange.prefix([RecordSpace.generationTag])
        guard live != 0 else { return [all] }
        let own = LogStore.KeyRange.prefix(RecordSpace.prefix(of: live))
        return ranges(of: 0) + [
            LogStore.KeyRange(lower: all.lower, upper: flipped(own.lower)),
            LogStore.KeyRange(lower: own.upper == .unbounded ? .unbounded : flippedLower(own.upper), upper: all.upper),
        ]
    }

    /// An inclusive lower bound as the exclusive upper bound below it, and the reverse.
    private static func flipped(_ bound: LogStore.KeyRange.Bound) -> LogStore.KeyRange.Bound {
        if case .inclusive(let k) = bound { return .exclusive(k) }
        return bound
    }

    private static func flippedLower(_ bound: LogStore.KeyRange.Bound) -> LogStore.KeyRange.Bound {
        if case .exclusive(let k) = bound { return .inclusive(k) }
        return bound
    }

    /// Deletes every key in `range`; false when `stop`, asked before each commit, said so.
    private static func delete(in range: LogStore.KeyRange, of engine: LogStore, chunk: Int, stop: () -> Bool) throws -> Bool {
        var batch = WriteBatch()
        var cursor = try engine.scan(range)
        while let entry = try cursor.next() {
            batch.delete(entry.key)
            if batch.count >= chunk {
                guard !stop() else { return false }
                _ = try engine.commit(batch)
                batch = WriteBatch()
            }
        }
        if !batch.isEmpty {
            guard !stop() else { return false }
            _ = try engine.commit(batch)
        }
        return true
    }
}
