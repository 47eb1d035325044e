extension LogStore {
    /// A consistent picture of the store now (it never waits for a commit's sync). Costs one
    /// `fstat` per segment and pack. After ``close()`` the figures are those of an empty store.
    public var statistics: Statistics {
        let (hintBytes, manifestBytes, last) = compaction.withLock { c in
            (c.hintBytes.values.reduce(0, +) + c.segmentHintBytes.values.reduce(0, +), c.manifest.packs.isEmpty && c.manifest.logStart == 1 ? 0 : UInt64(c.manifest.encodedSize), c.last)
        }
        let blobCollection = blobCollectionStatistics
        return state.withLock { s in
            var segments: [Statistics.Segment] = []
            var packs: [Statistics.Segment] = []
            for (number, usage) in s.index.usage.sorted(by: { $0.key < $1.key }) {
                var size = (try? s.files[number]?.size()) ?? 0
                if number == s.activeSegment { size -= min(size, s.preallocatedBytes) }
                let isPack = PackFile.isPack(number)
                let entry = Statistics.Segment(
                    number: isPack ? PackFile.number(ofFileID: number) : number, bytesOnDisk: size,
                    liveBytes: usage.liveBytes, deadBytes: usage.deadBytes)
                if isPack { packs.append(entry) } else { segments.append(entry) }
            }
            let all = packs + segments
            let averageKey = s.index.count == 0 ? 16 : s.index.keyBytes / s.index.count
            return Statistics(
                keyCount: s.index.count,
                liveBytes: all.reduce(0) { $0 + $1.liveBytes },
                deadBytes: all.reduce(0) { $0 + $1.deadBytes },
                segments: segments,
                packs: packs,
                bytesOnDisk: all.reduce(0) { $0 + $1.bytesOnDisk } + hintBytes + manifestBytes,
                blobCount: s.index.blobs.count,
                blobBytes: s.index.blobBytes,
                lastCompaction: last,
                preallocatedBytes: s.preallocatedBytes,
                preallocationSuspended: s.preallocationSuspended,
                lastSequence: s.lastSequence,
                indexBytesPerKey: KeyDirectory.estimatedBytesPerKey(averageKeyLength: averageKey),
                cacheBytes: s.cache.bytes, cacheHits: s.cache.hits, cacheMisses: s.cache.misses,
                recovery: {
                    var recovery = s.recovery
                    recovery.removedBlobs = blobCollection.removed
                    return recovery
                }(),
                blobCollection: blobCollection)
        }
    }
}
