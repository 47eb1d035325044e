import Synchronization

extension LogStore {
    /// A consistent picture of the store now (it never waits for a commit's sync). Costs one
    /// `fstat` per segment, and a listing of the blob directory with one open and `fstat` per
    /// blob file. After ``close()`` the figures are those of an empty store.
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
        let blobFiles = blobFileSizes()
        let blobDirectoryBytes = blobFiles.values.reduce(0, +)
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
            var referencedBlobs = Set(s.index.blobs.values.map(\.id))
            for table in s.tables { referencedBlobs.formUnion(table.record.blobIDs) }
            let averageKey = s.index.count == 0 ? 16 : s.index.keyBytes / s.index.count
            return Statistics(
                keyCount: s.index.liveCount + tables.reduce(0) { $0 + $1.entryCount },
                tailKeyCount: s.index.count,
                tailLiveKeyCount: s.index.liveCount,
                tailBytes: tailBytes,
                liveBytes: segments.reduce(0) { $0 + $1.liveBytes },
                deadBytes: segments.reduce(0) { $0 + $1.deadBytes },
                segments: segments,
                tables: tables,
                bytesOnDisk: tailBytes + tableBytes + hintBytes + manifestBytes + blobDirectoryBytes,
                blobCount: referencedBlobs.count,
                blobBytes: referencedBlobs.reduce(0) { $0 + (blobFiles[BlobFile.name($1)] ?? 0) },
                blobDirectoryFiles: blobFiles.count,
                blobDirectoryBytes: blobDirectoryBytes,
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

    /// Every live key of the store, counted exactly: a key in the tail and in a table, or in
    /// two tables, is counted once, and a deleted key not at all (``Statistics/keyCount`` counts
    /// each place a key is in). A scan of the whole store that reads no value: its cost follows
    /// the number of keys.
    ///
    /// - Throws: what ``scan(_:limit:reverse:)`` and ``Scan/withNext(_:)`` throw.
    public func countKeys() throws(EngineError) -> Int {
        var scan = try scan()
        var count = 0
        while try scan.withNext({ _ in () }) != nil { count += 1 }
        return count
    }

    /// The size of every file in the blob directory, by name (none after ``close()``).
    func blobFileSizes() -> [String: UInt64] {
        guard !writer.withLock({ $0.closed }), let names = try? fileSystem.listDirectory(blobDirectory) else { return [:] }
        var sizes: [String: UInt64] = [:]
        for name in names {
            guard let file = try? fileSystem.openFileForReading(blobDirectory + "/" + name) else { continue }
            sizes[name] = (try? file.size()) ?? 0
        }
        return sizes
    }
}
