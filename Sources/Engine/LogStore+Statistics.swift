extension LogStore {
    /// A consistent picture of the store now (it never waits for a commit's sync). Costs one
    /// `fstat` per segment. After ``close()`` the figures are those of an empty store.
    public var statistics: Statistics {
        state.withLock { s in
            var segments: [Statistics.Segment] = []
            let active = s.files.keys.max()
            for (number, usage) in s.index.usage.sorted(by: { $0.key < $1.key }) {
                var size = (try? s.files[number]?.size()) ?? 0
                if number == active { size -= min(size, s.preallocatedBytes) }
                segments.append(Statistics.Segment(
                    number: number, bytesOnDisk: size, liveBytes: usage.liveBytes, deadBytes: usage.deadBytes))
            }
            let averageKey = s.index.count == 0 ? 16 : s.index.keyBytes / s.index.count
            return Statistics(
                keyCount: s.index.count,
                liveBytes: segments.reduce(0) { $0 + $1.liveBytes },
                deadBytes: segments.reduce(0) { $0 + $1.deadBytes },
                segments: segments,
                bytesOnDisk: segments.reduce(0) { $0 + $1.bytesOnDisk },
                preallocatedBytes: s.preallocatedBytes,
                lastSequence: s.lastSequence,
                indexBytesPerKey: KeyDirectory.estimatedBytesPerKey(averageKeyLength: averageKey),
                cacheBytes: s.cache.bytes, cacheHits: s.cache.hits, cacheMisses: s.cache.misses,
                recovery: s.recovery)
        }
    }
}
