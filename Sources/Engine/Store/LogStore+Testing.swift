/// Test hooks, at package access: not part of the public API.
extension LogStore {
    /// How many commits are queued behind the current group-commit leader.
    package var waitingCommitCount: Int { queue.waitingCount }

    /// Calls `action` once, as soon as `count` commits are queued behind the current leader
    /// (at once if they already are), on the thread queueing the last of them.
    package func whenWaitingCommits(reach count: Int, _ action: @escaping @Sendable () -> Void) {
        queue.whenWaiting(reach: count, action)
    }

    /// True on one of the engine's I/O threads (where the `async` methods do their work).
    package static var isEngineIOThread: Bool { IOThreads.isCurrentThread }
}

extension LogStore {
    /// Hooks a test passes to the package `open`, to take the background jobs open starts out of
    /// the scheduler's hands. The defaults do nothing.
    package struct TestHooks: Sendable {
        /// False: open does not start removing the unreferenced blob files it found; the test
        /// calls ``LogStore/collectBlobsFoundAtOpen()`` itself, at the point it chooses.
        package var startsBlobCollection = true
        /// Called by the blob collector, on its own thread, before it removes each file open
        /// found unreferenced (with the file's name under `blobs/`): a test can block here to
        /// make a commit race the collector at a known point.
        package var willRemoveBlob: (@Sendable (_ name: String) -> Void)?
        /// The flush's window in bytes, in place of ``LogStore/flushWindowBytes``: a test flushes
        /// runs many windows long without writing megabytes.
        package var flushWindowBytes: Int?
        /// Called by a flush, on its own thread, after it has written each window of entries and
        /// before it takes the next: a test can commit here, in the middle of a flush.
        package var afterFlushWindow: (@Sendable () -> Void)?
        /// The partition size of the tables a flush or merge writes, in place of the builder's
        /// default (4 KiB): a test cuts tables of a few keys into many partitions.
        package var tablePartitionBytes: Int?
        /// The partition bytes a table write holds before it appends them to its scratch file,
        /// in place of ``TableWriter/spillBytes``: a test spills tables of a few keys.
        package var tableSpillBytes: Int?
        /// The window in which a table write copies its scratch file into the table, in place of
        /// ``TableWriter/spillBytes``.
        package var tableCopyBytes: Int?
        /// The most log-tail keys a scan reads from the index at once, in place of
        /// ``LogStore/Scan/batchSize``: a test crosses the tail's batch boundaries with a few keys.
        package var scanBatchSize: Int?
        /// The version of the blob files commits write, in place of ``LogFormat/blobVersion``: 3
        /// makes the blobs (XXH64 chunk hashes) an earlier build wrote.
        package var blobVersion: UInt16?

        package init(
            startsBlobCollection: Bool = true, willRemoveBlob: (@Sendable (_ name: String) -> Void)? = nil,
            flushWindowBytes: Int? = nil, afterFlushWindow: (@Sendable () -> Void)? = nil,
            tablePartitionBytes: Int? = nil, tableSpillBytes: Int? = nil, tableCopyBytes: Int? = nil, scanBatchSize: Int? = nil,
            blobVersion: UInt16? = nil
        ) {
            self.startsBlobCollection = startsBlobCollection
            self.willRemoveBlob = willRemoveBlob
            self.flushWindowBytes = flushWindowBytes
            self.afterFlushWindow = afterFlushWindow
            self.tablePartitionBytes = tablePartitionBytes
            self.tableSpillBytes = tableSpillBytes
            self.tableCopyBytes = tableCopyBytes
            self.scanBatchSize = scanBatchSize
            self.blobVersion = blobVersion
        }
    }
}

extension LogStore {
    /// Flushes the sealed segments of the tail into a table now (with `sealingActive`, the active
    /// segment is sealed first, so every commit so far is flushed), as the background flush does;
    /// returns the entries written.
    @discardableResult
    package func flushForTesting(sealingActive: Bool = true) throws(EngineError) -> Int {
        try compactionGate.withLock { _ throws(EngineError) in
            try checkStopping()
            return try flushNow(sealingActive: sealingActive).entriesWritten
        }
    }

    /// The most bytes of entries and log blocks the last flush held at once (its windows of
    /// keys and values, and the log block it was reading values from): at most
    /// ``LogStore/flushWindowBytes`` (or the test's window) plus one block, whatever the run.
    package var flushPeakBufferedBytes: Int { lastFlushPeak.load(ordering: .relaxed) }

    /// Runs the merges the policy makes due, as the background job does after a flush; returns
    /// how many ran.
    @discardableResult
    package func mergeDueForTesting() throws(EngineError) -> Int {
        try compactionGate.withLock { _ throws(EngineError) in
            var count = 0
            while try mergeNow(everything: false) != nil { count += 1 }
            return count
        }
    }
}

extension LogStore {
    /// How many scans were opened, and how many seeks open scans made, since open.
    package var scanFigures: (opened: Int, seeks: Int) {
        (scansOpened.load(ordering: .relaxed), scanSeeks.load(ordering: .relaxed))
    }
}
