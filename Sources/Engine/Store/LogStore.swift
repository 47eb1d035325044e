import Synchronization

/// A durable key–value log: the storage engine under WALStore.
///
/// A store is a directory of append-only segment files (`FORMAT.md`). Each ``commit(_:)`` appends
/// one checksummed frame holding the whole batch, so after any crash a commit is present entirely
/// or not at all, and recovery restores a prefix of the commit order. In the default
/// ``LogStore/SyncMode/durable`` mode a commit is on stable storage when the call returns.
///
/// The store is the log's tail (the segments not yet flushed), whose keys live in memory (key →
/// location of the latest version there, deletes included), and immutable sorted tables on disk
/// that hold the rest, read on demand (FORMAT.md, "Tail and tables"). Values stay on disk and
/// are read with one `pread` and at most one block inflate, behind bounded caches.
///
/// ## Concurrency
/// `LogStore` is `Sendable`: any number of threads and tasks may read and commit at once.
/// Commits are written by **group commit**: commits that arrive while a write and sync are in
/// flight are appended together with one `pwrite` and one sync in the next round, and each
/// caller returns when its own commit is durable. Readers take only a short index lock, so **a
/// reader never waits for a writer's fsync**. A commit becomes visible to readers when it has
/// been written (and, in ``LogStore/SyncMode/durable`` mode, synced).
///
/// The synchronous methods do their work, I/O included, on the calling thread: call them from
/// threads of your own. The `async` methods (`open`, `commit(_:)`, `value(forKey:)`,
/// ``valueChunks(forKey:)``, `sync()`, `compact()`, `close()`) run the same code on the
/// engine's own I/O threads — two POSIX threads shared by every store in the process, neither
/// Dispatch's nor Swift concurrency's — and suspend the calling task until it is done, so they
/// never block a cooperative thread in a system call. The background sync of
/// ``LogStore/SyncMode/deferred`` runs on those threads too.
///
/// Only one ``LogStore`` may have a directory open at a time, in this process or any other: the
/// directory's `LOCK` file is held with `flock` until ``close()``.
public final class LogStore: Sendable {
    /// The store's directory.
    public let path: String
    /// The options the store was opened with.
    public let options: Options

    let fileSystem: any FileSystem
    private let directoryLock: any FileLock
    /// Held for a whole append (and its sync). Lock order: `writer`, then `state`.
    let writer: Locked<WriterState>
    /// Held briefly by readers and by a commit publishing its records.
    let state: Locked<ReaderState>
    /// Commits waiting to be written together (group commit).
    let queue = CommitQueue()
    /// The background sync of ``LogStore/SyncMode/deferred``.
    private let deferredSync = Locked<Task<Void, Never>?>(nil)
    /// The directory of blob files.
    let blobDirectory: String
    /// Blob ids: the next one to hand out, and those written but not yet committed.
    let blobIDs: Locked<BlobIDs>

    /// The store's catalog of files: the manifest in force (the tables and where the log starts)
    /// and the bookkeeping its background work (flushes, merges, segment hints) needs between
    /// runs.
    let catalog: Locked<CatalogState>
    /// Held for the whole of a compaction, so that only one runs at a time; ``close()`` takes it
    /// to wait for a running one to stop.
    let compactionGate = Locked<Void>(())
    /// The leftovers an open that defers its background work found, removed by
    /// ``startBackgroundWork()`` (empty for any other open: it removed them).
    let deferredLeftovers: Locked<[String]>
    /// Held by the job writing segment hints for its whole run; ``close()`` takes it to wait for
    /// the hint in hand to be installed. Lock order: `hintJob`, then `compactionGate`.
    let hintJob = Locked<Void>(())
    /// The unreferenced blob files open found, and how far their removal has got.
    let blobCollection: Locked<BlobCollectionState>
    /// Held by whoever removes those files, for its whole run; ``close()`` takes it to wait for
    /// the removal in hand. Lock order: `blobCollectionJob`, then `blobCollection`; the job takes
    /// no other lock of the store (see ``collectBlobsFoundAtOpen()`` for why it needs none).
    let blobCollectionJob = Locked<Void>(())
    /// Hooks for tests (``TestHooks``); the defaults do nothing.
    let testHooks: TestHooks

    /// Holds commits back while the sealed tail is past its bound (``scheduleFlushIfDue()``).
    let tailStall = TailStall()
    /// Decoded table blocks, one budget for every table (``Options/tableCacheCapacity``).
    let tableCache: TableBlockCache
    /// Table filter checks of point reads, and how many said the key is absent.
    let tableFilterChecks = Atomic<Int>(0)
    /// Scans opened, and seeks of open scans (``LogStore/Scan/seek(to:)``), since open: what
    /// tests of "one pass, not a scan per object" count.
    let scansOpened = Atomic<Int>(0)
    let scanSeeks = Atomic<Int>(0)
    let tableFilterNegatives = Atomic<Int>(0)
    /// Bytes of frames appended to the log since open.
    let logBytesWritten = Atomic<Int>(0)
    /// The most bytes the last flush held at once in windows and log blocks (``FlushBuffer``).
    let lastFlushPeak = Atomic<Int>(0)

    struct CatalogState: Sendable {
        var manifest: Manifest
        var nextTable: UInt64
        /// Bytes of tables written by flushes and by merges since open.
        var flushBytesWritten: UInt64 = 0
        var mergeBytesWritten: UInt64 = 0
        /// Segment hint file sizes by segment number (for ``statistics``).
        var segmentHintBytes: [UInt64: UInt64]
        /// Sealed segments whose hint file is still to be written, oldest first.
        var pendingSegmentHints: [UInt64]
        /// A background job writing segment hints is scheduled or running.
        var hintsScheduled = false
        /// A background flush (and its merges) is scheduled or running.
        var scheduled = false
        /// ``close()`` has begun: a running compaction stops at its next step.
        var stopping = false
        /// ``close()`` is flushing the tail (``flushAtClose()``): its steps run despite `stopping`.
        var flushingAtClose = false
        var last: Statistics.Compaction?
        /// Why the last background flush or merge failed; they then wait for a reopen.
        var automaticFailure: EngineError?
    }

    struct BlobIDs: Sendable {
        var next: UInt64
        /// Blobs being written or waiting in a commit: never collected.
        var pending: Set<UInt64> = []
    }

    struct WriterState: Sendable {
        var active: any StoreFile
        var activeNumber: UInt64
        var writeOffset: UInt64
        /// Everything in the active segment before this offset is durable.
        var syncedOffset: UInt64
        /// The active segment's size; `writeOffset..<allocatedEnd` holds preallocated zeros.
        var allocatedEnd: UInt64
        /// The sequence of the active segment's first frame (its header's): every segment before
        /// it holds the commits before this one.
        var activeFirstSequence: UInt64
        var nextSequence: UInt64
        /// Every commit up to this one is durable (a sync covered it): what each new frame
        /// records, so that recovery can tell a lost unsynced write from damaged durable data.
        var syncedSequence: UInt64
        /// Bytes have been written since the last sync.
        var unsynced = false
        /// A write with preallocated zeros ran out of disk space: the active segment grows by
        /// its frames alone until the next rollover.
        var preallocationSuspended = false
        /// Set when a sync failed (or a failed append could not be cut off): writes are refused.
        var failure: EngineError?
        var closed = false
    }

    struct ReaderState: Sendable {
        var index: KeyDirectory
        var cache: ValueCache
        var blocks: BlockCache
        /// The tail's segments by number.
        var files: [UInt64: any StoreFile]
        /// The tables, newest first (the manifest's order): a key's entry in an earlier table hides
        /// its entries in later ones, and the tail hides them all.
        var tables: [StoreTable]
        /// The segment commits are appended to.
        var activeSegment: UInt64
        var lastSequence: UInt64
        /// Zero bytes preallocated past the active segment's last frame (kept out of the figures).
        var preallocatedBytes: UInt64 = 0
        var preallocationSuspended = false
        var recovery: Statistics.Recovery
        var closed = false
    }

    /// Opens the store in the directory at `path`, creating it if needed, and recovers it: reads
    /// the manifest and each table's footer (work in proportion to the number
    /// of tables, not of keys; a format-3 store is upgraded first, FORMAT.md "Upgrading a
    /// format-3 store"), loads the tail's index entries from the segments' hint files, replays the
    /// frames no hint covers (those written since the last clean close or rollover, and any
    /// segment whose hint is missing or fails a check), and cuts off a torn frame at the end of
    /// the log. All of it runs on the calling thread; the `async` variant runs it on the engine's
    /// I/O threads.
    ///
    /// When it returns, the store is open and every commit recovered from the log is readable;
    /// a directory it created is durable. Blob files that no key references (left by commits a
    /// crash cut off, or by a collection a crash interrupted) are removed in the background after
    /// it returns, on the engine's I/O threads (``Statistics/blobCollection``), so open's cost
    /// does not grow with them.
    ///
    /// - Throws: ``EngineError`` — ``EngineError/Code/locked`` when the store is open elsewhere;
    ///   ``EngineError/Code/corruption`` (naming file and offset) when a check fails where the
    ///   damage cannot be a torn write (anywhere but the frames written after the last sync of a
    ///   store that was not closed cleanly; FORMAT.md, "Recovery"): ``salvage(at:options:)``
    ///   repairs such a store; ``EngineError/Code/unsupportedFormat`` for a file of another format
    ///   version (nothing is changed); ``EngineError/Code/invalidArgument`` for options out of
    ///   range.
    public static func open(at path: String, options: Options = Options()) throws(EngineError) -> LogStore {
        try open(at: path, options: options, fileSystem: PosixFileSystem())
    }

    /// As ``open(at:options:)``, on `fileSystem`. With `collectingBlobs` false, the background
    /// removal of the blob files no key references is not started until
    /// ``scheduleBlobCollection()``: for a caller whose open may still be refused, and must then
    /// leave the files as they were. With `deferringBackgroundWork` true, no background work
    /// starts at all (no segment hint written, no flush or merge, no blob removed), and the
    /// leftovers of an interrupted flush or merge are not removed, until
    /// ``startBackgroundWork()``; until then, ``closeWithoutWriting()`` gives the store up
    /// without writing a byte.
    package static func open(
        at path: String, options: Options, fileSystem: any FileSystem, collectingBlobs: Bool = true,
        deferringBackgroundWork: Bool = false, testHooks: TestHooks = TestHooks()
    ) throws(EngineError) -> LogStore {
        let options = try options.validated()
        try checkCreation(at: path, options.creation, fileSystem: fileSystem)
        if try fileSystem.createDirectory(path) {
            // The new directory's own entry must be durable too, or a power loss could take the
            // whole store with it after its first commit returned.
            try fileSystem.syncDirectory(Self.parentDirectory(of: path))
        }
        let lock = try fileSystem.lockFile(path + "/" + LogFormat.lockFileName)
        let log: RecoveredLog
        do {
            let blobDirectory = path + "/" + LogFormat.blobDirectoryName
            if try fileSystem.createDirectory(blobDirectory) { try fileSystem.syncDirectory(path) }
            log = try RecoveredLog.recover(
                directory: path, blobDirectory: blobDirectory, fileSystem: fileSystem, options: options,
                tableCache: TableBlockCache(capacity: options.tableCacheCapacity), deferringLeftovers: deferringBackgroundWork)
        } catch {
            lock.unlock()
            throw error
        }
        let store = LogStore(path: path, options: options, fileSystem: fileSystem, lock: lock, log: log, testHooks: testHooks)
        store.startDeferredSync()
        guard !deferringBackgroundWork else { return store }
        store.scheduleSegmentHints()
        store.scheduleFlushIfDue()
        if collectingBlobs && testHooks.startsBlobCollection { store.scheduleBlobCollection() }
        return store
    }

    /// Does what an open with `deferringBackgroundWork` held back: removes the leftovers recovery
    /// found (on the calling thread, with no hint being written and no flush or merge running,
    /// since one of those may have started meanwhile), then starts the hint files of the segments
    /// that lack one, a flush or merge when one is due, and the removal of the blob files open
    /// found unreferenced. Called once, when that opener knows its open succeeds.
    package func startBackgroundWork() {
        let leftovers = deferredLeftovers.withLock { names in
            defer { names = [] }
            return names
        }
        if !leftovers.isEmpty {
            hintJob.withLock { _ in
                compactionGate.withLock { _ in
                    let removed = RecoveredLog.removeLeftovers(leftovers, directory: path, fileSystem: fileSystem)
                    state.withLock { $0.recovery.removedLeftovers = removed }
                }
            }
        }
        scheduleSegmentHints()
        scheduleFlushIfDue()
        scheduleBlobCollection()
    }

    /// Gives up a store opened with `deferringBackgroundWork` that nothing was committed to:
    /// releases its files and its directory lock and writes nothing (no flush, no segment hint,
    /// no close frame, no manifest, no leftover removed), so its files are as open found them, but
    /// for the repairs recovery makes before it can read a key: a torn tail cut off, a torn newest
    /// segment header rewritten, a format-3 store upgraded. For an opener that refuses the store
    /// it has just opened. Later calls throw ``EngineError/Code/closed``.
    package func closeWithoutWriting() {
        let task = deferredSync.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        catalog.withLock { c in
            c.stopping = true
            c.pendingSegmentHints = []
        }
        blobCollection.withLock { $0.stopping = true }
        writer.withLock { $0.closed = true }
        releaseFilesAndLock()
    }

    /// Marks the store closed, drops its files and caches, and releases the directory lock (the
    /// first time only): the last step of ``close()`` and ``closeWithoutWriting()``.
    private func releaseFilesAndLock() {
        let wasOpen = state.withLock { s in
            defer {
                s.closed = true
                s.files = [:]
                s.cache = ValueCache(capacity: 0)
                s.blocks = BlockCache(capacity: 0)
            }
            return !s.closed
        }
        if wasOpen { directoryLock.unlock() }
    }

    private init(
        path: String, options: Options, fileSystem: any FileSystem, lock: any FileLock, log: RecoveredLog,
        testHooks: TestHooks
    ) {
        self.path = path
        self.testHooks = testHooks
        self.blobCollection = Locked(BlobCollectionState(remaining: log.unreferencedBlobs))
        self.deferredLeftovers = Locked(log.leftovers)
        self.options = options
        self.blobDirectory = path + "/" + LogFormat.blobDirectoryName
        self.blobIDs = Locked(BlobIDs(next: log.nextBlobID))
        self.tableCache = log.tableCache
        self.catalog = Locked(
            CatalogState(
                manifest: log.manifest, nextTable: log.nextTableNumber,
                segmentHintBytes: log.segmentHintBytes, pendingSegmentHints: log.segmentsNeedingHints))
        self.fileSystem = fileSystem
        self.directoryLock = lock
        self.writer = Locked(
            WriterState(
                active: log.activeFile!, activeNumber: log.activeNumber, writeOffset: log.writeOffset,
                syncedOffset: log.writeOffset, allocatedEnd: log.allocatedEnd,
                activeFirstSequence: log.activeFirstSequence, nextSequence: log.lastSequence + 1,
                syncedSequence: log.lastSequence))
        self.state = Locked(
            ReaderState(
                index: log.index, cache: ValueCache(capacity: options.valueCacheCapacity),
                blocks: BlockCache(capacity: options.blockCacheCapacity), files: log.files, tables: log.tables,
                activeSegment: log.activeNumber,
                // Past the write offset of a log closed cleanly is its close frame (which the next
                // commit overwrites), not preallocated zeros: it counts as the file's bytes.
                lastSequence: log.lastSequence,
                preallocatedBytes: log.recovery.closedCleanly ? 0 : log.allocatedEnd - log.writeOffset,
                recovery: log.recovery))
    }

    deinit {
        try? close()
    }

    /// Makes every commit written so far durable, with an `fdatasync` on the calling thread. A
    /// no-op in ``LogStore/SyncMode/durable`` mode, where each commit is synced before it returns.
    ///
    /// - Throws: the sync's ``EngineError``; the store is then read-only (``EngineError/Code/readOnly``).
    public func sync() throws(EngineError) {
        try writer.withLock { w throws(EngineError) in
            guard !w.closed else { throw Self.closedError }
            try syncIfNeeded(&w)
        }
    }

    /// Waits for a running flush, merge or compaction (or segment hint, or the removal of a blob file open found
    /// unreferenced: the rest are left for the next open) to stop; flushes the whole tail into a
    /// table when it holds at least ``CompactionPolicy/flushAtCloseBytes`` (automatic policy only;
    /// best effort: should the flush fail, the tail stays as it was); syncs what is unsynced, appends
    /// a close frame (so that the next open can tell damage to the last commits from a torn
    /// write), writes the active segment's hint file (so that the next open replays nothing;
    /// ``LogStore/Options/writesSegmentHints``) or, with hints off, records in the manifest where
    /// the log ends (so that the next open refuses the newest segment cut short), then releases
    /// the directory lock, all on the
    /// calling thread. Idempotent; after it every call but `close()` throws
    /// ``EngineError/Code/closed``. When it returns, every commit that returned is durable,
    /// whatever the sync mode.
    ///
    /// - Throws: the final sync's error. The store is closed all the same.
    public func close() throws(EngineError) {
        let task = deferredSync.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        catalog.withLock { c in
            c.stopping = true
            tailStall.set(false)
        }
        blobCollection.withLock { $0.stopping = true }
        blobCollectionJob.withLock { _ in }  // the collector finishes the removal in hand and syncs
        hintJob.withLock { _ in }  // the hint job installs the hint in hand and takes no other
        compactionGate.withLock { _ in }  // a running compaction notices `stopping` and ends
        flushAtClose()
        // The sealed segments the background job had not reached yet get their hints now, so the
        // next open replays none of them.
        if options.writesSegmentHints { writePendingSegmentHints(whileClosing: true) }
        var closedWithFrame = false
        let (failure, active) = writer.withLock { w -> (EngineError?, (UInt64, any StoreFile, UInt64)?) in
            guard !w.closed else { return (nil, nil) }
            w.closed = true
            do throws(EngineError) {
                try syncIfNeeded(&w)
                closedWithFrame = try appendCloseFrame(&w)
                if !closedWithFrame {
                    try trimPreallocation(&w)
                    try syncIfNeeded(&w)
                }
                return (nil, (w.activeNumber, w.active, w.writeOffset))
            } catch {
                return (error, nil)
            }
        }
        // A clean close leaves a hint of the active segment too, so the next open replays nothing;
        // without hints, the manifest records where the log ends instead.
        if let (number, file, end) = active, end > UInt64(LogFormat.segmentHeaderSize) {
            if options.writesSegmentHints {
                writeSegmentHint(of: number, file, upTo: end)
            } else if closedWithFrame {
                recordLogEnd(segment: number, length: end, sequence: state.withLock { $0.lastSequence })
            }
        }
        releaseFilesAndLock()
        if let failure { throw failure }
    }

    /// Appends the close frame (FORMAT.md, "Frame header") after the last commit, every one of
    /// them durable already, and syncs it: the next open knows the log ended here, so damage to
    /// the last commits is corruption rather than a torn write. The next commit after a reopen
    /// overwrites it, so it is only ever the last frame of the newest segment. Best effort: if it
    /// cannot be written the store is closed all the same, and open treats its end as it would a
    /// crash's (returns false; the caller trims the preallocated zeros and syncs); a failed sync
    /// is thrown, as any sync's. `writeOffset` stays before the close frame: the segment hint
    /// written at close ends there.
    private func appendCloseFrame(_ w: inout WriterState) throws(EngineError) -> Bool {
        guard w.failure == nil, !w.unsynced else { return false }
        let frame = closeFrame(lastSequence: w.nextSequence - 1)
        let end = w.writeOffset + UInt64(frame.count)
        do throws(EngineError) {
            // Over the preallocated zeros, which go in the same sync.
            try w.active.write(frame, at: w.writeOffset)
            if w.allocatedEnd > end { try w.active.truncate(to: end) }
        } catch {
            // Cut back to the last commit; the caller trims and syncs as without a close frame.
            if (try? w.active.truncate(to: w.writeOffset)) != nil { w.allocatedEnd = w.writeOffset }
            w.unsynced = true
            return false
        }
        w.allocatedEnd = end
        w.unsynced = true
        // A failed sync is the store's failure, as any other (every commit was durable before).
        try syncIfNeeded(&w)
        return true
    }

    /// Applies ``Options/creation`` to what the directory at `path` holds, before anything is
    /// created or locked.
    private static func checkCreation(at path: String, _ creation: Creation, fileSystem: any FileSystem) throws(EngineError) {
        let names: [String]
        do throws(EngineError) {
            names = try fileSystem.listDirectory(path)
        } catch  where error.errno == Syscall.noSuchFile {
            names = []
        }
        let isStoreFile = { (name: String) -> Bool in
            [LogFormat.lockFileName, LogFormat.manifestName, LogFormat.manifestTemporaryName, LogFormat.blobDirectoryName]
                .contains(name) || SegmentFile.number(fromName: name) != nil || PackFile.number(fromName: name) != nil
                || SegmentHint.number(fromName: name) != nil || StoreTable.number(fromName: name) != nil
        }
        let holdsStore = names.contains(where: isStoreFile)
        let foreign = holdsStore ? nil : names.sorted().first
        switch creation {
        case .evenAmongOtherFiles:
            return
        case .never where !holdsStore && foreign == nil:
            throw EngineError(
                .notFound, "there is no store here (creation is .never); pass .ifMissing to make one", path: path)
        case .always where holdsStore:
            throw EngineError(
                .invalidArgument, "a store already exists here (creation is .always); open it with .ifMissing",
                path: path)
        default:
            if let foreign {
                throw EngineError(
                    .notAStore,
                    "the directory holds other files (\(foreign)) and no store; " + EngineError.otherFilesAdvice,
                    path: path + "/" + foreign)
            }
        }
    }

    /// The directory holding `path` ("." for a bare name).
    static func parentDirectory(of path: String) -> String {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    static var closedError: EngineError { EngineError(.closed, "the store is closed") }

    static func readOnlyError(after failure: EngineError) -> EngineError {
        EngineError(.readOnly, "the store refuses writes after an earlier failure; reopen it", underlying: failure)
    }

    /// Cuts the preallocated zeros off the active segment (at close and rollover), so that
    /// segments at rest hold frames only.
    func trimPreallocation(_ w: inout WriterState) throws(EngineError) {
        guard w.failure == nil, w.allocatedEnd > w.writeOffset else { return }
        try w.active.truncate(to: w.writeOffset)
        w.allocatedEnd = w.writeOffset
        w.unsynced = true
        publishPreallocation(w)
    }

    /// Tells readers (``statistics``) how many preallocated zeros follow the active segment's
    /// last frame; called whenever `allocatedEnd` or `writeOffset` changes.
    func publishPreallocation(_ w: WriterState) {
        state.withLock { s in
            s.preallocatedBytes = w.allocatedEnd - w.writeOffset
            s.preallocationSuspended = w.preallocationSuspended
        }
    }

    /// Syncs the active segment if anything was written since the last sync. A failed sync makes
    /// the store read-only: the kernel may have dropped the dirty pages, so retrying would lie.
    func syncIfNeeded(_ w: inout WriterState) throws(EngineError) {
        if let failure = w.failure { throw Self.readOnlyError(after: failure) }
        guard w.unsynced else { return }
        do {
            try w.active.sync()
            w.unsynced = false
            w.syncedOffset = w.writeOffset
            w.syncedSequence = w.nextSequence - 1
        } catch {
            w.failure = error
            if options.syncMode == .durable {
                // Only the failed commit lies past the synced offset, and it was never published.
                // Linux keeps its pages readable but marks them clean, so a reopen would find it
                // and a later sync would not write it: cut it off now (best effort).
                if (try? w.active.truncate(to: w.syncedOffset)) != nil {
                    w.writeOffset = w.syncedOffset
                    w.allocatedEnd = w.syncedOffset
                    publishPreallocation(w)
                }
            }
            throw error
        }
    }

    private func startDeferredSync() {
        guard case .deferred(let interval) = options.syncMode else { return }
        // The task only sleeps; each sync runs on an I/O thread, never on a cooperative thread.
        let task = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                try? await IOThreads.shared.run { () throws(EngineError) in
                    try self.writer.withLock { w throws(EngineError) in
                        if !w.closed { try self.syncIfNeeded(&w) }
                    }
                }
            }
        }
        deferredSync.withLock { $0 = task }
    }
}
