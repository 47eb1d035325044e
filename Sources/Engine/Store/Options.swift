extension LogStore {
    /// How a store behaves. Every field has a default that suits an app's persistence backend.
    public struct Options: Sendable, Equatable {
        /// When committed bytes reach stable storage.
        public var syncMode: SyncMode = .durable
        /// A segment file is closed and a new one started once it reaches this many bytes
        /// (64 KiB ... 4 GiB). A single commit never spans segments, so a large one may overshoot.
        public var segmentSize: Int = 64 << 20
        /// Bytes of decoded values kept in memory for repeated reads (0 disables the cache).
        public var valueCacheCapacity: Int = 32 << 20
        /// Bytes of decoded log blocks (of the tail's segments) kept in memory (0 disables the
        /// cache). A value read from a cached block costs no `pread`, checksum or inflate; scans
        /// and reads of keys written together share blocks. Table blocks have their own budget,
        /// ``tableCacheCapacity``.
        public var blockCacheCapacity: Int = 32 << 20
        /// Bytes of parsed table blocks kept in memory, one budget shared by every table of the
        /// store (0 disables the cache). A point read of a key in a table costs no `pread`,
        /// checksum, inflate or parse when its block is cached; a scan's blocks go through it
        /// too. The cache resists scans: a block used twice is protected (up to 80% of the
        /// budget) and a block a scan reads once is evicted first, so a scan larger than the
        /// budget does not push out the blocks point reads keep using.
        public var tableCacheCapacity: Int = 32 << 20
        /// zlib level for commit and table blocks: 0 stores every block raw, 1 (fastest) ... 9
        /// (smallest); default 3. A block that does not shrink is stored raw whatever the level.
        /// Blobs are compressed at level 1 whatever this says (but never when it is 0): for megabytes,
        /// speed matters more.
        public var compressionLevel: Int = 3
        /// The uncompressed size (4 KiB ... 64 KiB) at which a commit's records are cut into a new
        /// compressed block. A point read inflates one block, so this bounds the work of a cold read:
        /// smaller blocks (with a lower level) make cold reads cheaper, larger ones store records
        /// smaller. README's "Figures" gives measured costs of both choices.
        public var blockSize: Int = 32 << 10
        /// How far ahead of its last frame the active segment is zero-filled (0 ... 64 MiB; 0 turns
        /// preallocation off). A sync that overwrites already allocated blocks does not have to
        /// update the file's size, so single-record durable commits are cheaper on file systems that
        /// overwrite in place (ext4, XFS). On copy-on-write file systems (btrfs, APFS) it gains
        /// nothing: set 0 there.
        public var preallocationSize: Int = 1 << 20
        /// A value longer than this many bytes (0 ... 256 MiB) is stored out of line, as its own
        /// file under `blobs/`, and the log holds a 33-byte reference. ``WriteBatch/putExternal(_:_:)``
        /// stores a value as a blob whatever its size.
        public var blobThreshold: Int = 64 << 10
        /// Write a hint file beside each sealed segment, in the background once the segment is
        /// sealed (and after open, for sealed segments found without one), so that open reads
        /// the segment's keys from it instead of replaying the segment's frames: open's work then
        /// follows what was written since the last segment was sealed, not the size of the log.
        /// Hints are derived data: open replays a segment whose hint is missing or damaged. They
        /// also record how long each segment was (the newest one's at a clean close); turned off,
        /// ``LogStore/close()`` records the newest segment's length in the manifest instead (one
        /// more rename and two syncs at close), so that a newest segment cut short after a clean
        /// close is still refused as corruption (FORMAT.md, "Manifest").
        public var writesSegmentHints = true
        /// Whether ``LogStore/open(at:options:)`` may make a new store, and where.
        public var creation = LogStore.Creation.ifMissing
        /// When compaction runs on its own; ``LogStore/compact()`` runs it on demand.
        public var compaction = CompactionPolicy()

        public init() {}

        func validated() throws(EngineError) -> Options {
            guard (64 << 10)...(4 << 30) ~= segmentSize else {
                throw .invalid("segmentSize \(segmentSize) is outside 64 KiB ... 4 GiB")
            }
            guard valueCacheCapacity >= 0 else { throw .invalid("valueCacheCapacity must not be negative") }
            guard blockCacheCapacity >= 0 else { throw .invalid("blockCacheCapacity must not be negative") }
            guard 0...9 ~= compressionLevel else { throw .invalid("compressionLevel \(compressionLevel) is outside 0 ... 9") }
            guard (4 << 10)...(64 << 10) ~= blockSize else {
                throw .invalid("blockSize \(blockSize) is outside 4 KiB ... 64 KiB")
            }
            guard 0...(64 << 20) ~= preallocationSize else {
                throw .invalid("preallocationSize \(preallocationSize) is outside 0 ... 64 MiB")
            }
            guard 0...LogFormat.maxValueLength ~= blobThreshold else {
                throw .invalid("blobThreshold \(blobThreshold) is outside 0 ... 256 MiB")
            }
            guard tableCacheCapacity >= 0 else { throw .invalid("tableCacheCapacity must not be negative") }
            guard compaction.flushBytes >= 0 else { throw .invalid("compaction.flushBytes must not be negative") }
            guard compaction.flushAtCloseBytes >= 0 else { throw .invalid("compaction.flushAtCloseBytes must not be negative") }
            guard 2...64 ~= compaction.mergeFanIn else {
                throw .invalid("compaction.mergeFanIn \(compaction.mergeFanIn) is outside 2 ... 64")
            }
            if case .deferred(let interval) = syncMode, interval <= .zero {
                throw .invalid("the deferred sync interval must be positive")
            }
            return self
        }
    }

    /// Whether open may make a new store (leveldb's `create_if_missing` and `error_if_exists`).
    public enum Creation: Sendable, Equatable {
        /// Open the store in the directory, or make one when the directory is missing or empty.
        /// A directory holding other files and no store is refused (``EngineError/Code/notAStore``):
        /// a mistyped path never turns someone's folder into a store. The default.
        case ifMissing
        /// Open an existing store only: a missing or empty directory is
        /// ``EngineError/Code/notFound`` and nothing is created.
        case never
        /// Make a new store only: a directory that already holds one is
        /// ``EngineError/Code/invalidArgument``, and other files are refused as for ``ifMissing``.
        case always
        /// As ``ifMissing``, but a directory holding other files is made a store too (their
        /// names never clash with the store's).
        case evenAmongOtherFiles
    }

    /// When committed bytes reach stable storage, and what a power loss can cost in each mode.
    ///
    /// A process crash (the app is killed, the process traps) loses nothing in any mode: the bytes are
    /// in the kernel's page cache once ``LogStore/commit(_:)`` returns, and the next open syncs them.
    /// The modes differ only on power loss or a kernel crash. Recovery restores a *prefix* of the
    /// commits: a later commit never survives without every earlier one. In the weaker modes, should
    /// the disk keep a later unsynced page but lose an earlier one, open keeps the commits before
    /// the hole and drops the rest (``LogStore/Statistics/Recovery/discardedFrames``): every commit
    /// before the last completed ``LogStore/sync()`` is kept, and damage to one is
    /// ``EngineError/Code/corruption``, never a silent loss.
    public enum SyncMode: Sendable, Equatable {
        /// `fdatasync` (`F_FULLFSYNC` on Darwin) before ``LogStore/commit(_:)`` returns: a commit that
        /// returned survives power loss. The default.
        case durable
        /// Commits return once written; a background task syncs every `interval`, and
        /// ``LogStore/close()`` and ``LogStore/sync()`` sync at once. Power loss can take the commits of
        /// the last `interval` (plus the time a sync takes).
        case deferred(interval: Duration)
        /// Commits return once written and are synced only by ``LogStore/sync()``, ``LogStore/close()``
        /// and segment rollover. Power loss can take every commit since the last of those.
        case none
    }

    /// When a store flushes its log's tail into sorted tables and merges tables, on its own
    /// (FORMAT.md, "Flush", "Merge"); ``LogStore/compact()`` does both at once on demand.
    ///
    /// Only the tail (the segments not yet flushed) has a resident index, so its size bounds the
    /// index's memory and open's replay. With ``isAutomatic``, once the sealed segments of the
    /// tail hold at least ``flushBytes``, a background flush writes their current entries into new
    /// level-0 tables (one per run of about ``flushBytes`` of segments) and removes them; then,
    /// while some level holds ``mergeFanIn`` tables, they are merged into one table of the next
    /// level (tiered merging), which bounds the tables a read consults to about
    /// `(mergeFanIn − 1) × levels`, and each entry is rewritten once per level.
    public struct CompactionPolicy: Sendable, Equatable {
        /// Flush and merge after commits on its own (true), or only when ``LogStore/compact()`` is
        /// called.
        public var isAutomatic: Bool
        /// The bytes of sealed segments (every segment of the tail but the active one) at which a
        /// flush starts: it is checked whenever a segment is sealed, at open and when a flush
        /// ends. Default: 64 MiB, so with the default ``LogStore/Options/segmentSize`` each sealed
        /// segment is flushed. While the sealed segments hold this plus one segment and a flush
        /// is under way, commits wait for it (FORMAT.md, "The tail's bound"), so the tail stays
        /// within about this plus a segment under any commit load.
        public var flushBytes: Int
        /// Tables of one level that are merged into one table of the next (2 ... 64; default 4).
        public var mergeFanIn: Int
        /// With ``isAutomatic``, ``LogStore/close()`` flushes the whole tail (the active segment
        /// included) into a table when its segments hold at least this many bytes, so that the
        /// next open loads no index of it and holds none in memory. The tail is bounded (by about
        /// ``flushBytes`` plus a segment), so this work is too. Close then runs the merges due, so
        /// each level is left with fewer than ``mergeFanIn`` tables. Default: 1 MiB; `Int.max`
        /// turns the flush off. A crash instead of a close loses nothing: open replays the tail as it would have.
        public var flushAtCloseBytes: Int

        /// Automatic, flushing at 64 MiB of sealed segments, merging 4 tables of a level, and
        /// flushing at close a tail of 1 MiB or more.
        public init(isAutomatic: Bool = true, flushBytes: Int = 64 << 20, mergeFanIn: Int = 4, flushAtCloseBytes: Int = 1 << 20) {
            self.isAutomatic = isAutomatic
            self.flushBytes = flushBytes
            self.mergeFanIn = mergeFanIn
            self.flushAtCloseBytes = flushAtCloseBytes
        }

        /// Flushes and merges only on demand.
        public static let manual = CompactionPolicy(isAutomatic: false)
    }
}
