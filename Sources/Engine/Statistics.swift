extension LogStore {
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
            /// Verified frames after the cut that were dropped with it: commits written after the
            /// last sync (``LogStore/SyncMode/deferred`` or ``LogStore/SyncMode/none`` mode, or
            /// one group commit's frames) that reached the disk while an earlier one did not.
            /// Recovery keeps a prefix of the commit order, so they cannot be kept.
            public var discardedFrames = 0
            /// The store was closed cleanly last time: the log ends with the close frame that
            /// ``LogStore/close()`` appends (no torn write was possible, and none was cut).
            public var closedCleanly = false
            /// Files removed because an interrupted or finished compaction left them: temporary files,
            /// packs the manifest does not list, segments it says were compacted.
            public var removedLeftovers = 0
            /// Hint files that were missing or failed a check, rebuilt by scanning their packs.
            public var rebuiltHints = 0
            /// Blob files removed because no key references them (and temporary blob files): those
            /// open found, removed in the background after it returned; the same figure as
            /// ``BlobCollection/removed`` in ``Statistics/blobCollection``, which also tells
            /// whether the removal is still pending.
            public var removedBlobs = 0
            /// Segments whose keys open read from their hint files: sealed segments, and the
            /// newest when the store was last closed cleanly (then only the frames written since are
            /// replayed).
            public var segmentHintsLoaded = 0
            /// Sealed segments open replayed frame by frame, because their hint file was missing
            /// (not yet written, or from before hints) or failed a check. The newest segment is
            /// always replayed and is not counted.
            public var segmentsReplayed = 0
            /// Bytes of frames open replayed (verified and decoded one by one): what was written
            /// since the segments' hints were made.
            public var replayedBytes: UInt64 = 0
        }

        /// The removal of the blob files open found unreferenced (left by commits a crash cut off,
        /// or by a collection a crash interrupted) and of temporary blob files. It runs after open
        /// returned, on the engine's I/O threads, removing the files one by one and syncing the
        /// blob directory once at the end; it never removes a blob that a key references or a
        /// later commit writes. ``LogStore/close()`` stops it after the file in hand: the next
        /// open finds the rest again.
        public struct BlobCollection: Sendable, Equatable {
            /// Unreferenced and temporary blob files open found.
            public var found: Int
            /// How many of them the collection has removed so far.
            public var removed: Int
            /// True until the collection has tried every file and synced the directory (false
            /// once ``LogStore/close()`` has stopped it).
            public var pending: Bool
        }

        /// What one compaction did (``LogStore/compact()``).
        public struct Compaction: Sendable, Equatable {
            /// From start to finish, including the blob collection.
            public var duration: Duration
            /// The size of the files it replaced: segments, packs and their hint files.
            public var bytesBefore: UInt64
            /// The size of the packs and hint files it wrote in their place.
            public var bytesAfter: UInt64
            /// Live records copied into the new packs (and still current when the switch came).
            public var recordsWritten: Int
            /// Pack files written.
            public var packsWritten: Int
            /// Blob files removed because no key references them any more.
            public var blobsRemoved: Int
        }

        /// Live keys.
        public var keyCount: Int
        /// Sum of the segments' live bytes (uncompressed record sizes).
        public var liveBytes: Int
        /// Sum of the segments' dead bytes (uncompressed record sizes).
        public var deadBytes: Int
        /// The segments, oldest first.
        public var segments: [Segment]
        /// The pack files compaction wrote (``Segment/number`` is the pack's number), oldest first.
        public var packs: [Segment]
        /// Bytes of every segment, pack and hint file and the manifest, less the active segment's
        /// preallocated zeros. Blob files are counted apart, in ``blobBytes``.
        public var bytesOnDisk: UInt64
        /// Blob files referenced by live keys.
        public var blobCount: Int
        /// The total size of those blob files. Replaced blobs awaiting collection are not counted.
        public var blobBytes: UInt64
        /// What the last compaction since open did; nil when none has run.
        public var lastCompaction: Compaction?
        /// Zero bytes allocated ahead of the active segment's last frame (``LogStore/Options/preallocationSize``);
        /// they are on disk too, until rollover or ``LogStore/close()`` trims them.
        public var preallocatedBytes: UInt64
        /// True when a commit found no disk space for the preallocated zeros and was written
        /// without them: the active segment then grows by its frames alone (each durable commit's
        /// sync also writes the file's new size) until the next segment begins.
        public var preallocationSuspended: Bool
        /// The sequence number of the last commit (0 for an empty log).
        public var lastSequence: UInt64
        /// An estimate of the in-memory index's heap bytes per key.
        public var indexBytesPerKey: Int
        /// Bytes held by the value cache, and its hit and miss counts since open.
        public var cacheBytes: Int
        public var cacheHits: Int
        public var cacheMisses: Int
        /// What open found at the end of the log.
        public var recovery: Recovery
        /// The background removal of the unreferenced blob files open found.
        public var blobCollection: BlobCollection
    }
}
