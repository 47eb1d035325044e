/// The names of the figures that `compact` and `open-hints` put in ``Sample/figures`` beside the
/// table's columns: the notes under the table read them, and `--json` carries them all.
public enum Figure {
    // `compact`, on its `compact()` row.

    /// The log size the overwrites stopped at (``WorkloadSizes/compactLogBytes``).
    public static let logBytesTarget = "logBytesTarget"
    /// Keys in the store (the data set's N).
    public static let keys = "keys"
    /// Rounds of overwrites of every key (the last one may be partial).
    public static let overwriteRounds = "overwriteRounds"
    /// `statistics.bytesOnDisk` when the compaction started.
    public static let bytesOnDiskBefore = "bytesOnDiskBefore"
    /// The same after the compaction under load (the commits made meanwhile are in the new log).
    public static let bytesOnDiskLoaded = "bytesOnDiskAfterLoaded"
    /// The same after a second `compact()` with nothing else running.
    public static let bytesOnDiskAfter = "bytesOnDiskAfter"
    /// Every file in the store's directory (less preallocated zeros) when the compaction started,
    /// after it, and at rest after the second compaction and close.
    public static let filesBefore = "filesBefore"
    public static let filesLoaded = "filesAfterLoaded"
    public static let filesAfter = "filesAfter"
    /// Every file of a fresh store holding exactly the live records, loaded 1,000 per commit and
    /// closed, and the files above divided by it.
    public static let freshFiles = "freshFiles"
    public static let freshRatioBefore = "filesPerFreshBefore"
    public static let freshRatioLoaded = "filesPerFreshAfterLoaded"
    public static let freshRatioAfter = "filesPerFreshAfter"
    /// What `Statistics.Compaction` reported for the compaction under load.
    public static let engineSeconds = "engineSeconds"
    public static let compactedBytesBefore = "compactionBytesBefore"
    public static let compactedBytesAfter = "compactionBytesAfter"
    public static let recordsWritten = "recordsWritten"
    public static let tablesWritten = "tablesWritten"
    /// `statistics.writeAmplification` after the workload: (log + flush + merge bytes) ÷ log bytes.
    public static let writeAmplification = "writeAmplification"
    /// The second compaction, with nothing else running: its time and the bytes it replaced.
    public static let settleSeconds = "secondCompactionSeconds"
    public static let settleBytesBefore = "secondCompactionBytesBefore"
    /// Seconds to reopen the compacted store (its tables).
    public static let reopenSeconds = "reopenSeconds"
    /// Keys whose value was read back and compared after the compactions and after the reopen.
    public static let keysVerified = "keysVerified"

    // `compact`, on its two commit rows (``LatencySummary/figures(_:)`` with prefix "commit").

    /// Seconds of the phase, measured by the compacting thread.
    public static let phaseSeconds = "phaseSeconds"
    /// Seconds from the phase's first commit to the start of its longest.
    public static let commitLongestAt = "commitLongestAtSeconds"
    /// Point reads the reader thread made in the phase, per second, and the longest.
    public static let readsPerSecond = "readsPerSecond"
    public static let readLongestMicroseconds = "readLongestMicroseconds"
    /// The commit latencies' prefix.
    public static let commit = "commit"

    // `open-hints`, on both rows.

    /// Records in the store, its segments and its tables.
    public static let records = "records"
    public static let segments = "segments"
    public static let tables = "tables"

    // `index-memory`, on both rows (``MemoryProbe``).

    /// Growth of the child process's anonymous resident memory over the open, in bytes, and per key.
    public static let rssGrowth = "rssGrowthBytes"
    public static let rssPerKey = "rssGrowthBytesPerKey"
    /// Growth of glibc's heap in use over the open, in bytes, and per key.
    public static let heapGrowth = "heapGrowthBytes"
    public static let heapPerKey = "heapGrowthBytesPerKey"
    /// `statistics.indexBytesPerKey`, the engine's own estimate.
    public static let engineEstimatePerKey = "engineEstimateBytesPerKey"
    /// `statistics.cacheBytes` right after the open.
    public static let valueCacheBytes = "valueCacheBytes"

    // `memory-compacted` (``OpenMemoryProbe``), besides `records`, `rssGrowth` (anonymous pages
    // here too), `rssPerKey`, `heapGrowth` and `heapPerKey`.

    /// Growth of the child process's whole resident set (`VmRSS`) over the open and first read,
    /// in bytes, and per key.
    public static let residentGrowth = "residentGrowthBytes"
    public static let residentPerKey = "residentGrowthBytesPerKey"

    // `readseq-cached` and `readrandom-cached`: WALStore's rows.

    /// `statistics.tableCacheMisses` and `tableCacheHits` over the timed pass (a miss means a
    /// block was not cached), and `statistics.tableCacheBytes` after it.
    public static let tableCacheMisses = "tableCacheMisses"
    public static let tableCacheHits = "tableCacheHits"
    public static let tableCacheBytes = "tableCacheBytes"

    // `readseq-cached` and `readrandom-cached`: the plain loop's rows (the C table floor).

    /// Data blocks of the table, those stored as zlib streams, their inflated bytes (held in
    /// memory for the run), and the table file's bytes.
    public static let tableBlocks = "tableBlocks"
    public static let zlibBlocks = "zlibBlocks"
    public static let inflatedBytes = "inflatedBytes"
    public static let tableBytes = "tableBytes"
}
