/// A point-in-time picture of a store, from ``LogStore/statistics``.
public struct Statistics: Sendable, Equatable {
    /// One segment file.
    public struct Segment: Sendable, Equatable {
        /// The segment's number (its file is named after it).
        public var number: UInt64
        /// The file's size in bytes, less preallocated zeros (which only the active segment has).
        public var bytesOnDisk: UInt64
        /// Raw encoded bytes of the records in it that are the latest version of their key.
        public var liveBytes: Int
        /// Raw encoded bytes of overwritten and deleted records, and of tombstones.
        public var deadBytes: Int
    }

    /// What the last open found at the end of the log.
    public struct Recovery: Sendable, Equatable {
        /// Bytes cut off the end of the newest segment (a torn frame from a crash); 0 when the
        /// log ended cleanly.
        public var truncatedBytes: UInt64 = 0
        /// Why the tail was cut, when it was.
        public var reason: String?
        /// Files removed because an interrupted or finished compaction left them: temporary files,
        /// packs the manifest does not list, segments it says were compacted.
        public var removedLeftovers = 0
        /// Hint files that were missing or failed a check, rebuilt by scanning their packs.
        public var rebuiltHints = 0
        /// Blob files removed because no key references them (and temporary blob files).
        public var removedBlobs = 0
    }

    /// Live keys.
    public var keyCount: Int
    /// Sum of the segments' live bytes (uncompressed record sizes).
    public var liveBytes: Int
    /// Sum of the segments' dead bytes (uncompressed record sizes).
    public var deadBytes: Int
    /// The segments, oldest first.
    public var segments: [Segment]
    /// Bytes of every segment file, less the active segment's preallocated zeros: the log itself.
    public var bytesOnDisk: UInt64
    /// Zero bytes allocated ahead of the active segment's last frame (``Options/preallocationSize``);
    /// they are on disk too, until rollover or ``LogStore/close()`` trims them.
    public var preallocatedBytes: UInt64
    /// The sequence number of the last commit (0 for an empty log).
    public var lastSequence: UInt64
    /// An estimate of the in-memory index's heap bytes per key (see `README.md`, "Figures", for
    /// a measured value).
    public var indexBytesPerKey: Int
    /// Bytes held by the value cache, and its hit and miss counts since open.
    public var cacheBytes: Int
    public var cacheHits: Int
    public var cacheMisses: Int
    /// What open found at the end of the log.
    public var recovery: Recovery
}
