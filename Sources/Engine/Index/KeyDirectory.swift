/// Where the latest version of a key lives on disk.
struct Location: Sendable, Equatable {
    var segment: UInt64
    /// File offset of the block header that holds the value.
    var blockOffset: UInt64
    /// Block header plus stored bytes: one `pread` of this many bytes reads the block.
    var blockLength: UInt32
    /// Offset of the value in the block's raw bytes.
    var valueOffset: UInt32
    var valueLength: UInt32
    /// The record's encoded size, counted in live or dead bytes.
    var recordSize: UInt32
    /// The commit that wrote it.
    var sequence: UInt64

    /// `valueLength` of a value that lives in a blob file (no inline value is this long); the
    /// reference is in ``KeyDirectory/blobs``.
    static let blobMarker = UInt32.max

    var isBlob: Bool { valueLength == Self.blobMarker }
}

extension Location {
    /// Where the put or blob put `record` lies: in file `file`, in the block at `blockOffset` of
    /// `blockLength` bytes; a blob record's value length is ``blobMarker``.
    init(_ record: RecordPlacement, file: UInt64, blockOffset: UInt64, blockLength: Int, sequence: UInt64) {
        self.init(
            segment: file, blockOffset: blockOffset, blockLength: UInt32(blockLength),
            valueOffset: UInt32(record.valueOffset),
            valueLength: record.blob == nil ? UInt32(record.valueLength!) : Self.blobMarker,
            recordSize: UInt32(record.recordSize), sequence: sequence)
    }
}

/// Live and dead bytes of one segment: the raw encoded sizes of the records it holds that are the
/// latest version of their key (live) or have been overwritten, deleted, or are tombstones (dead).
struct SegmentUsage: Sendable, Equatable {
    var liveBytes = 0
    var deadBytes = 0
}

/// Bitcask's keydir: every live key → ``Location``, plus the key order for prefix scans and the
/// live/dead byte counts per segment. Values stay on disk.
struct KeyDirectory {
    private(set) var locations: [HashedKey: Location] = [:]
    /// nil while the store is loading; built once, sorted, by ``finishLoading()``.
    private var ordered: SortedKeys?
    private(set) var usage: [UInt64: SegmentUsage] = [:]
    /// The total length of the live keys.
    private(set) var keyBytes = 0
    /// The blob reference of every live key whose value is a blob.
    private(set) var blobs: [HashedKey: BlobReference] = [:]
    /// The total size of the live keys' blob files.
    private(set) var blobBytes: UInt64 = 0
    /// The size of blob files whose keys were overwritten or deleted since the last collection:
    /// dead space for the compaction policy.
    var retiredBlobBytes: UInt64 = 0

    var count: Int { locations.count }

    subscript(key: [UInt8]) -> Location? { locations[HashedKey(key)] }

    /// Sets `key` to the version at `location`; `blob` is its reference when the value is a blob
    /// (then `location.valueLength` is ``Location/blobMarker``).
    mutating func put(_ key: [UInt8], at location: Location, blob: BlobReference? = nil) {
        let hashed = HashedKey(key)
        if let old = locations.updateValue(location, forKey: hashed) {
            retire(old, key: hashed)
        } else {
            if ordered == nil { loading.replayAdded.append(key) } else { ordered!.insert(key) }
            keyBytes += key.count
        }
        if let blob { addBlob(blob, key: hashed) }
        usage[location.segment, default: SegmentUsage()].liveBytes += Int(location.recordSize)
    }

    private mutating func addBlob(_ blob: BlobReference, key: HashedKey) {
        blobs[key] = blob
        blobBytes += blob.fileLength
    }

    /// Records a delete whose tombstone (of `recordSize` bytes) is in `segment`.
    mutating func delete(_ key: [UInt8], tombstoneIn segment: UInt64, recordSize: Int) {
        let hashed = HashedKey(key)
        if let old = locations.removeValue(forKey: hashed) {
            retire(old, key: hashed)
            if ordered == nil { loading.replayRemovedAny = true } else { ordered!.remove(key) }
            keyBytes -= key.count
        }
        usage[segment, default: SegmentUsage()].deadBytes += recordSize
    }

    /// Moves `key` from `old` to `new` (a compaction rewrote it) unless it has changed since:
    /// true when it moved. Its bytes count as live in the new file and leave the old one; a copy
    /// that arrived too late counts as dead in the new file.
    mutating func move(_ key: [UInt8], from old: Location, to new: Location) -> Bool {
        let hashed = HashedKey(key)
        guard locations[hashed] == old else {
            usage[new.segment, default: SegmentUsage()].deadBytes += Int(new.recordSize)
            return false
        }
        locations[hashed] = new
        usage[old.segment, default: SegmentUsage()].liveBytes -= Int(old.recordSize)
        usage[new.segment, default: SegmentUsage()].liveBytes += Int(new.recordSize)
        return true
    }

    /// Forgets the byte counts of files that compaction has removed.
    mutating func forgetFiles(_ files: some Sequence<UInt64>) {
        for file in files { usage[file] = nil }
    }

    private mutating func retire(_ old: Location, key: HashedKey) {
        usage[old.segment, default: SegmentUsage()].liveBytes -= Int(old.recordSize)
        usage[old.segment, default: SegmentUsage()].deadBytes += Int(old.recordSize)
        if old.isBlob, let blob = blobs.removeValue(forKey: key) {
            blobBytes -= blob.fileLength
            retiredBlobBytes += blob.fileLength
        }
    }

    /// Counts `bytes` of records in `file` as dead without a key: records a segment hint left out
    /// because later records in the same segment replaced them.
    mutating func countDead(_ bytes: Int, in file: UInt64) {
        usage[file, default: SegmentUsage()].deadBytes += bytes
    }

    mutating func noteSegment(_ segment: UInt64) {
        if usage[segment] == nil { usage[segment] = SegmentUsage() }
    }

    /// Loads a pack's entries, which come in key order, while the store opens.
    mutating func load(sortedEntries entries: [IndexEntry], expectedTotal: Int) {
        precondition(ordered == nil, "packs are loaded while the store opens")
        locations.reserveCapacity(expectedTotal)
        var keys: [[UInt8]] = []
        keys.reserveCapacity(entries.count)
        var live = 0
        for entry in entries {
            let hashed = HashedKey(entry.key)
            if let old = locations.updateValue(entry.location, forKey: hashed) {
                // Only a damaged manifest lists two packs holding one key; the later one wins.
                retire(old, key: hashed)
            } else {
                keys.append(entry.key)
                keyBytes += entry.key.count
            }
            if let blob = entry.blob { addBlob(blob, key: hashed) }
            live += Int(entry.location.recordSize)
        }
        if let file = entries.first?.location.segment {
            usage[file, default: SegmentUsage()].liveBytes += live
        }
        loading.packRuns.append(keys)
    }

    /// Builds the key order once after loading; from then on every put and delete keeps it. The
    /// packs' keys come sorted from their hint files, so only the keys the replayed segments
    /// added are sorted here.
    mutating func finishLoading() {
        var keys = mergeSortedRuns(loading.packRuns)
        if loading.replayRemovedAny {
            keys.removeAll { locations[HashedKey($0)] == nil }
        }
        if !loading.replayAdded.isEmpty {
            var added = loading.replayAdded
            loading.replayAdded = []
            added.sort { compareBytes($0, $1) < 0 }
            if loading.replayRemovedAny {
                // A key added, removed and added again is listed twice; one removed for good, once.
                added = added.enumerated().compactMap { index, key in
                    let repeated = index > 0 && compareBytes(key, added[index - 1]) == 0
                    return repeated || locations[HashedKey(key)] == nil ? nil : key
                }
            }
            keys = mergeSortedRuns([keys, added])
        }
        assert(keys.count == locations.count, "the key order lost or duplicated keys")
        ordered = SortedKeys(sorted: keys)
        loading = Loading()
    }

    /// What open gathers to build the key order in ``finishLoading()``.
    private struct Loading {
        var packRuns: [[[UInt8]]] = []
        /// Keys the replay added (maybe removed again later, maybe more than once).
        var replayAdded: [[UInt8]] = []
        var replayRemovedAny = false
    }
    private var loading = Loading()

    /// Up to `limit` entries whose keys lie in `range`, ascending (descending when `reverse`),
    /// starting strictly after `cursor` in that direction when it is given.
    func entries(in range: LogStore.KeyRange, after cursor: [UInt8]?, reverse: Bool, limit: Int) -> [IndexEntry] {
        guard let ordered else { return [] }
        return ordered.keys(in: range, after: cursor, reverse: reverse, limit: limit).map(entry)
    }

    private func entry(_ key: [UInt8]) -> IndexEntry {
        let hashed = HashedKey(key)
        let location = locations[hashed]!
        return IndexEntry(key: key, location: location, blob: location.isBlob ? blobs[hashed] : nil)
    }

    /// The blob reference of `key`'s current value, if that value is a blob.
    func blob(forKey key: [UInt8]) -> BlobReference? { blobs[HashedKey(key)] }

    /// An estimate of the heap bytes per key held by the index for keys of `averageKeyLength`:
    /// the dictionary slot (key reference and location, at the hash table's typical load of about
    /// 0.56 between its growth steps), the key's heap buffer (a 32-byte array header and the bytes
    /// in 16-byte malloc granules, plus malloc's 16-byte overhead) and its reference and 8-byte
    /// prefix in the ordered chunks (at their typical fill of 3/4). `walstore-example` measures
    /// the real figure with `mallinfo2`.
    static func estimatedBytesPerKey(averageKeyLength: Int) -> Int {
        let slot = (MemoryLayout<[UInt8]>.stride + MemoryLayout<Location>.stride) * 16 / 9
        let keyBuffer = 32 + (averageKeyLength + 15) / 16 * 16 + 16
        let ordered = (MemoryLayout<[UInt8]>.stride + MemoryLayout<UInt64>.stride) * 4 / 3
        return slot + keyBuffer + ordered
    }
}
