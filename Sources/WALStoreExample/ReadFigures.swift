import Engine

/// Figure c: point reads of random keys from figure b's store, with the value cache warm
/// ("cached") and with both the value cache and the OS page cache empty ("cold").
struct PointReadFigure {
    var reads: Int
    var cachedTime: Duration
    var coldTime: Duration
    /// Value-cache hits during the timed cached pass (should equal `reads`).
    var cachedHits: Int
    /// Value-cache misses during the cold pass (should equal `reads`).
    var coldMisses: Int
    var segmentFiles: Int

    var cachedRate: Double { Double(reads) / cachedTime.seconds }
    var coldRate: Double { Double(reads) / coldTime.seconds }

    /// Reads from the store in `directory` (which must be closed), whose keys are `keys`.
    static func measure(directory: String, keys: [[UInt8]], reads: Int) throws -> PointReadFigure {
        var random = SplitMix64(seed: 0xC)
        let sample = distinct(2 * reads, of: keys, using: &random)
        let cachedKeys = sample.prefix(sample.count / 2)
        let coldKeys = sample.suffix(sample.count / 2)

        // Cached: the first pass fills the value cache (32 MiB by default), the second is timed.
        let store = try LogStore.open(at: directory)
        defer { try? store.close() }
        try read(cachedKeys, from: store)
        let hitsBefore = store.statistics.cacheHits
        let cachedTime = try timed { try read(cachedKeys, from: store) }
        let cachedHits = store.statistics.cacheHits - hitsBefore
        try store.close()

        // Cold: a reopened store has an empty value cache. Drop the page cache before the open
        // and again after it, because the open's replay reads every segment back into it.
        let segmentFiles = try dropPageCache(ofSegmentsIn: directory)
        let reopened = try LogStore.open(at: directory)
        defer { try? reopened.close() }
        try dropPageCache(ofSegmentsIn: directory)
        let coldTime = try timed { try read(coldKeys, from: reopened) }
        let coldMisses = reopened.statistics.cacheMisses
        try reopened.close()

        return PointReadFigure(
            reads: cachedKeys.count, cachedTime: cachedTime, coldTime: coldTime,
            cachedHits: cachedHits, coldMisses: coldMisses, segmentFiles: segmentFiles)
    }

    func report() {
        print("c. Point reads of \(Text.grouped(reads)) distinct random keys from b's store")
        print("   cached  \(Text.pad(Text.rate(cachedRate), 10, right: true)) reads/s"
            + "  \(Text.fixed(1e6 / cachedRate, 2)) µs/read  (second pass; \(Text.grouped(cachedHits)) value-cache hits)")
        print("   cold    \(Text.pad(Text.rate(coldRate), 10, right: true)) reads/s"
            + "  \(Text.fixed(1e6 / coldRate, 2)) µs/read  (reopened; page cache of \(segmentFiles) *.wal"
            + " dropped with POSIX_FADV_DONTNEED; \(Text.grouped(coldMisses)) value-cache misses)")
    }

    /// Reads every key and checks it has a value.
    private static func read(_ keys: ArraySlice<[UInt8]>, from store: LogStore) throws {
        for key in keys {
            guard let value = try store.value(forKey: key), !value.isEmpty else {
                throw MissingKeyError(key: key)
            }
        }
    }

    /// `count` distinct elements of `keys` in random order (partial Fisher–Yates shuffle).
    private static func distinct(_ count: Int, of keys: [[UInt8]], using random: inout SplitMix64) -> [[UInt8]] {
        var pool = keys
        let count = min(count, pool.count)
        for index in 0..<count {
            pool.swapAt(index, Int.random(in: index..<pool.count, using: &random))
        }
        return Array(pool.prefix(count))
    }
}

/// A key the figures wrote came back absent or empty: the store lost it.
struct MissingKeyError: Error, CustomStringConvertible {
    var key: [UInt8]
    var description: String {
        "key " + key.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() + " was written but reads back absent"
    }
}
