import Engine

/// Removes the keys of generations that are not live (FORMAT.md, "Migrations"): what a
/// migration leaves behind when it is abandoned or interrupted, and the generation it
/// replaced once it has switched. Deletes go in commits of ``chunk`` keys; every one is safe
/// to lose or repeat, since no reader looks at a generation the header does not name.
enum GenerationSweeper {
    static let chunk = 65536

    /// Deletes every key of generation `generation` (only the record layer's kinds for 0).
    static func discard(_ generation: UInt32, in engine: LogStore) throws {
        if generation == 0 {
            for tag in RecordSpace.recordTags { try delete(in: .prefix([tag]), of: engine) }
        } else {
            try delete(in: .prefix(RecordSpace.prefix(of: generation)), of: engine)
        }
    }

    /// Deletes the keys of every generation but `live`.
    static func discardAll(except live: UInt32, in engine: LogStore) throws {
        if live != 0 { try discard(0, in: engine) }
        let all = LogStore.KeyRange.prefix([RecordSpace.generationTag])
        guard live != 0 else { return try delete(in: all, of: engine) }
        let own = LogStore.KeyRange.prefix(RecordSpace.prefix(of: live))
        try delete(in: LogStore.KeyRange(lower: all.lower, upper: flipped(own.lower)), of: engine)
        try delete(in: LogStore.KeyRange(lower: own.upper == .unbounded ? .unbounded : flippedLower(own.upper), upper: all.upper), of: engine)
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

    private static func delete(in range: LogStore.KeyRange, of engine: LogStore) throws {
        var batch = WriteBatch()
        var cursor = try engine.scan(range)
        while let entry = try cursor.next() {
            batch.delete(entry.key)
            if batch.count >= chunk {
                _ = try engine.commit(batch)
                batch = WriteBatch()
            }
        }
        if !batch.isEmpty { _ = try engine.commit(batch) }
    }
}
