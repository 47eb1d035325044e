import Synchronization

extension LogStore {
    /// A consistent picture of the store now (it never waits for a commit's sync). Costs one
    /// `fstat` per segment. After ``close()`` the figures are those of an empty store.
    public var statistics: Statistics {
        let (hintBytes, manifestBytes, last, flushBytes, mergeBytes, automaticFailure) = catalog.withLock { c in
            (
                c.segmentHintBytes.values.reduce(0, +),
                c.manifest == Manifest() ? 0 : UInt64(c.manifest.encodedSize), c.last,
                c.flushBytesWritten, c.mergeBytesWritten, c.automaticFailure.map { Statistics.AutomaticFailure(error: $0) }
            )
        }
        let blobCollection = blobCollectionStatistics
        let logBytes = UInt64(logBytesWritten.load(ordering: .relaxed))
        let cache = tableCache.figures
        return state.withLock { s in
            var segments: [Statistics.Segment] = []
            for (number, usage) in s.index.usage.sorted(by: { $0.key < $1.key }) {
                var size = (try? s.files[number]?.size()) ?? 0
                if number == s.activeSegment { size -= min(size, s.preallocatedBytes) }
                segments.append(
                    Statistics.Segment(
                        number: number, bytesOnDisk: size, liveBytes: usage.liveBytes, deadBytes: usage.deadBytes))
            }
            let tables = s.tables.map { table in
                Statistics.Table(
                    number: table.number, level: Int(table.level), bytesOnDisk: table.record.length,
                    entryCount: Int(table.record.entryCount))
            }
            let tailBytes = segments.reduce(0) { $0 + $1.bytesOnDisk }
            let tableBytes = tables.reduce(0) { $0 + $1.bytesOnDisk }
            let averageKey = s.index.count == 0 ? 16 : s.index.keyBytes / s.index.count
            return Statistics(
                keyCount: s.index.liveCount + tables.reduce(0) { $0 + $1.entryCount },
                tailKeyCount: s.index.count,
                tailBytes: tailBytes,
                liveBytes: segments.reduce(0) { $0 + $1.liveBytes },
                deadBytes: segments.reduce(0) { $0 + $1.deadBytes },
                segments: segments,
                tables: tables,
                bytesOnDisk: tailBytes + tableBytes + hintBytes + manifestBytes,
                blobCount: {
                    guard !s.tables.isEmpty else { return s.index.blobs.count }
                    var ids = Set(s.index.blobs.values.map(\.id))
                    for table in s.tables { ids.formUnion(table.record.blobIDs) }
                    return ids.count
                }(),
                blobBytes: s.index.blobBytes,
                filterChecks: tableFilterChecks.load(ordering: .relaxed),
                filterNegatives: tableFilterNegatives.load(ordering: .relaxed),
                tableCacheBytes: cache.bytes, tableCacheHits: cache.hits, tableCacheMisses: cache.misses,
                logBytesWritten: logBytes, flushBytesWritten: flushBytes, mergeBytesWritten: mergeBytes,
                writeAmplification: logBytes == 0 ? 1 : Double(logBytes + flushBytes + mergeBytes) / Double(logBytes),
                lastCompaction: last,
                automaticFailure: automaticFailure,
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
