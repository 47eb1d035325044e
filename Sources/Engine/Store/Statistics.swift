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
            /// Files removed because an interrupted or finished flush, merge or upgrade left them:
            /// temporary files, tables the manifest does not list, segments it says were flushed,
            /// the packs and pack hints of an upgraded format-3 store.
            public var removedLeftovers = 0
            /// This open upgraded a format-3 store (packs) to format 4 (tables).
            public var upgradedFromFormat3 = false
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
            /// The store's ``Statistics/bytesOnDisk`` when it began: every file, blob files
            /// included.
            public var bytesBefore: UInt64
            /// The store's ``Statistics/bytesOnDisk`` when it finished, after the replaced files
            /// and the unreferenced blob files were removed (equal to ``bytesBefore`` when there was
            /// nothing to flush, merge or remove).
            public var bytesAfter: UInt64
            /// Entries in that table: every key of the store (when no commit ran meanwhile); 0
            /// when it had nothing to flush or merge.
            public var recordsWritten: Int
            /// Table files written: the flush's (one per run of about
            /// ``LogStore/CompactionPolicy/flushBytes`` of segments) and the merge's (at most one).
            public var tablesWritten: Int
            /// Blob files removed because no key references them any more.
            public var blobsRemoved: Int
        }

        /// A flush or merge that ``LogStore/CompactionPolicy/isAutomatic`` started in the
        /// background and that failed. Automatic flushing stops after one (it would fail again at
        /// every rollover) until the store is reopened; the tail then grows with every commit,
        /// and ``LogStore/compact()`` still runs when called.
        public struct AutomaticFailure: Sendable, Equatable {
            /// What the flush or merge threw (``EngineError/code`` to switch on).
            public var error: EngineError

            /// Equal when the errors' codes and descriptions are.
            public static func == (lhs: Self, rhs: Self) -> Bool {
                lhs.error.code == rhs.error.code && lhs.error.description == rhs.error.description
            }
        }

        /// One sorted table.
        public struct Table: Sendable, Equatable {
            /// The table's number (its file is named after it).
            public var number: UInt64
            /// Its level in the merge policy (0: written by a flush).
            public var level: Int
            /// The file's size in bytes.
            public var bytesOnDisk: UInt64
            /// Entries in it, tombstones included.
            public var entryCount: Int
        }

        /// Keys: exact for the tail (the keys whose latest version there is a value), plus the
        /// tables' entry counts, so a key in two places, or hidden by a delete, is counted in
        /// each. Exact after ``LogStore/compact()`` (before any later commit), when one table
        /// holds every key and the tail none.
        public var keyCount: Int
        /// Keys the tail's resident index holds, tombstones included: what its memory follows.
        public var tailKeyCount: Int
        /// Keys whose latest version in the tail is a value (``tailKeyCount`` less the tail's
        /// tombstones): the tail's live keys, never more than the store's.
        public var tailLiveKeyCount: Int
        /// Bytes of the tail's segments, less the active segment's preallocated zeros.
        public var tailBytes: UInt64
        /// Sum of the segments' live bytes (uncompressed record sizes).
        public var liveBytes: Int
        /// Sum of the segments' dead bytes (uncompressed record sizes).
        public var deadBytes: Int
        /// The segments, oldest first.
        public var segments: [Segment]
        /// The tables, newest first (the order reads consult them in).
        public var tables: [Table]
        /// Bytes of every file of the store: the segments (less the active segment's preallocated
        /// zeros), segment hints, tables and manifest, and every file in the blob directory —
        /// referenced blobs (``blobBytes``) and those awaiting collection alike
        /// (``blobDirectoryBytes``).
        public var bytesOnDisk: UInt64
        /// Blob files referenced: by the tail's keys, and by the tables' entries (the manifest lists
        /// them; a table may still list a blob that a newer version replaced, until a merge drops
        /// that entry). Exact after ``LogStore/compact()``, when it is the number of files in the
        /// blob directory.
        public var blobCount: Int
        /// The total size of the blob files counted in ``blobCount`` (each file's size on disk,
        /// header and chunk table included).
        public var blobBytes: UInt64
        /// Files in the blob directory, referenced or not (replaced blobs awaiting collection,
        /// temporary files), and their total size: what ``bytesOnDisk`` counts for blobs.
        public var blobDirectoryFiles: Int
        public var blobDirectoryBytes: UInt64
        /// Table filter checks made by point reads (``LogStore/value(forKey:)``, ``LogStore/contains(_:)``,
        /// …) since open, and how many of them said the key is absent (no block read).
        public var filterChecks: Int
        public var filterNegatives: Int
        /// Bytes held by the table block cache (``LogStore/Options/tableCacheCapacity``), and its
        /// hit and miss counts since open.
        public var tableCacheBytes: Int
        public var tableCacheHits: Int
        public var tableCacheMisses: Int
        /// Bytes appended to the log since open (frames).
        public var logBytesWritten: UInt64
        /// Bytes of tables written since open by flushes, and by merges.
        public var flushBytesWritten: UInt64
        public var mergeBytesWritten: UInt64
        /// (log + flush + merge bytes) / log bytes since open; 1 before anything was written.
        public var writeAmplification: Double
        /// What the last compaction since open did; nil when none has run.
        public var lastCompaction: Compaction?
        /// The background flush or merge that failed since open, after which automatic flushing
        /// stopped until the store is reopened; nil when none has failed.
        public var automaticFailure: AutomaticFailure?
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
