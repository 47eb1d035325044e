/// What one repetition of one workload on one contender measured.
public struct Sample: Sendable, Codable {
    /// Wall-clock seconds of the timed part.
    public var seconds: Double
    /// Operations in the timed part (records written, deleted or read; 1 for `open` and
    /// `open-hints`; blobs for `assets`; commits for `compact`'s commit rows; records moved for
    /// its `compact()`).
    public var operations: Int
    /// Key plus value bytes those operations carried (keys only for deletes; the whole store's
    /// raw bytes for `open` and `open-hints`; the blobs' bytes for `assets`; the bytes of the
    /// files replaced for `compact()`).
    public var rawBytes: Int
    /// Bytes of every file in the store's directory after the workload, with the store closed
    /// (SQLite: after `PRAGMA wal_checkpoint(TRUNCATE)`; WALStore: its preallocated tail trimmed).
    public var bytesOnDisk: UInt64
    /// Durable commits (transactions) in the timed part; 0 for read workloads.
    public var commits: Int
    /// Growth of the bytes on disk at rest across the timed part, per commit: what the physical
    /// limit writes per sync. 0 for read workloads.
    public var bytesPerCommit: Double
    /// Further figures of the workloads that measure more than a time (`compact`'s space
    /// amplification and commit latencies, ...), by name: the notes under the table and `--json`.
    public var figures: [String: Double]

    public init(
        seconds: Double, operations: Int, rawBytes: Int, bytesOnDisk: UInt64, commits: Int = 0,
        bytesPerCommit: Double = 0, figures: [String: Double] = [:]
    ) {
        self.seconds = seconds
        self.operations = operations
        self.rawBytes = rawBytes
        self.bytesOnDisk = bytesOnDisk
        self.commits = commits
        self.bytesPerCommit = bytesPerCommit
        self.figures = figures
    }

    /// Operations per second.
    public var operationsPerSecond: Double { seconds > 0 ? Double(operations) / seconds : 0 }
    /// Microseconds per operation.
    public var microsecondsPerOperation: Double { operations > 0 ? seconds * 1e6 / Double(operations) : 0 }
    /// Raw megabytes (10^6 bytes) per second.
    public var megabytesPerSecond: Double { seconds > 0 ? Double(rawBytes) / seconds / 1e6 : 0 }

    /// The repetition with the median time (the upper median for an even count).
    public static func median(of samples: [Sample]) -> Sample {
        precondition(!samples.isEmpty, "no samples")
        return samples.sorted { $0.seconds < $1.seconds }[samples.count / 2]
    }
}
