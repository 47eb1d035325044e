/// The unreferenced blob files open found (``RecoveredLog/unreferencedBlobs``) and their removal.
struct BlobCollectionState: Sendable {
    /// Names under `blobs/` open found, in the order it listed them; those from ``next`` on are
    /// still to be removed.
    let names: [String]
    var next = 0
    /// How many open found.
    let found: Int
    /// How many of them have been removed (not counting any another collection removed first).
    var removed = 0
    /// ``close()`` has begun: the collector removes no further file.
    var stopping = false
    /// Every name has been tried and the removals synced.
    var finished: Bool

    init(remaining: [String]) {
        names = remaining
        found = remaining.count
        finished = remaining.isEmpty
    }

    var hasRemaining: Bool { next < names.count }
}

extension LogStore {
    /// Hands ``collectBlobsFoundAtOpen()`` to the engine's I/O threads, when open found anything
    /// to collect. Called once: by open, or by an opener that opened with `collectingBlobs: false`
    /// once its own open is known to succeed.
    package func scheduleBlobCollection() {
        guard blobCollection.withLock({ $0.hasRemaining }) else { return }
        IOThreads.shared.submit { self.collectBlobsFoundAtOpen() }
    }

    /// Removes the blob files open found unreferenced (and its temporary blob files), then syncs
    /// the blob directory once, and returns when none is left or ``close()`` has begun. The
    /// background job's body, started by open; whoever calls it while the job runs waits for it
    /// and finds nothing left, so tests call it to have the collection done at a known point.
    ///
    /// Why this removes no blob that any key references, now or later, without taking the
    /// index or writer lock. Every name it removes was listed by open and was then either a
    /// temporary file or a blob whose id no key of the recovered index referenced; and open set
    /// the next blob id past every id it listed. After open:
    /// - a commit references only blobs written for it (``writeBlobs(_:)``), whose ids are
    ///   handed out by ``BlobIDs/next``, which starts past every id open listed and only grows.
    ///   Blob names are made from ids (`blobs/<id>.blob`), not from contents, so no blob written
    ///   after open takes the name of a file on the list (an id can come back in a later session,
    ///   once its file is gone, but then it is on no list);
    /// - compaction and salvage copy references that are already in the index, and no public
    ///   operation names an existing blob (`WriteBatch.Operation.blob` is made only by
    ///   ``writeBlobs(_:)``);
    /// so the set removed here is disjoint from every blob any key can reference after open, and
    /// a commit racing the collector cannot lose its blob. A crash cannot bring a reference back
    /// either: the recovered index is durable (recovery syncs the newest segment before open
    /// returns) and recovery keeps a prefix of the commit order.
    ///
    /// Lock discipline: `blobCollectionJob` is held for the whole run (one collector at a time;
    /// ``close()`` takes it to wait); `blobCollection` is taken briefly to take the next name and
    /// count a removal, never across a system call. A compaction's own collection may remove the
    /// same files meanwhile: a name already gone fails to unlink and is skipped.
    ///
    /// Crash safety: the removals are made durable by one directory sync at the end (or when
    /// close interrupts). One lost to a power cut leaves an unreferenced file behind, which the
    /// next open finds and collects again; nothing referenced is ever at stake.
    package func collectBlobsFoundAtOpen() {
        blobCollectionJob.withLock { _ in
            var removedAny = false
            while true {
                let next = blobCollection.withLock { c -> String? in
                    guard !c.stopping, c.hasRemaining else { return nil }
                    defer { c.next += 1 }
                    return c.names[c.next]
                }
                guard let name = next else { break }
                testHooks.willRemoveBlob?(name)
                guard (try? fileSystem.removeFile(blobDirectory + "/" + name)) != nil else { continue }
                removedAny = true
                blobCollection.withLock { $0.removed += 1 }
            }
            // Best effort: a removal this sync does not make durable is found again next open.
            if removedAny { try? fileSystem.syncDirectory(blobDirectory) }
            blobCollection.withLock { c in if !c.hasRemaining { c.finished = true } }
        }
    }

    /// The figures of ``Statistics/blobCollection``.
    var blobCollectionStatistics: Statistics.BlobCollection {
        blobCollection.withLock { c in
            Statistics.BlobCollection(found: c.found, removed: c.removed, pending: !c.finished && !c.stopping)
        }
    }
}

extension LogStore {

    /// Removes blob files that no entry references (of the tail's index, or of a table, by the
    /// manifest's lists) and no commit in flight is writing. The references are read after a
    /// sync, so an overwrite that a power loss could still undo never costs the blob it replaced.
    /// Best effort: returns how many were removed.
    @discardableResult
    package func collectUnreferencedBlobs() -> Int {
        guard let names = try? fileSystem.listDirectory(blobDirectory) else { return 0 }
        let keep = try? writer.withLock { w throws(EngineError) -> Set<UInt64> in
            guard !w.closed, w.failure == nil else { throw Self.closedError }
            try syncIfNeeded(&w)
            var referenced = state.withLock { s in
                s.index.retiredBlobBytes = 0
                var ids = Set(s.index.blobs.values.map(\.id))
                for table in s.tables { ids.formUnion(table.record.blobIDs) }
                return ids
            }
            referenced.formUnion(blobIDs.withLock { $0.pending })
            return referenced
        }
        guard let keep else { return 0 }
        var removed = 0
        for name in names {
            guard let id = BlobFile.id(fromName: name), !keep.contains(id) else { continue }
            if (try? fileSystem.removeFile(blobDirectory + "/" + name)) != nil { removed += 1 }
        }
        if removed > 0 { try? fileSystem.syncDirectory(blobDirectory) }
        return removed
    }
}
