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
    /// `valueLength` of a tombstone: the key was deleted in the tail by the commit `sequence`, in
    /// segment `segment`; the tombstone hides any older version in a table. Its other fields are 0.
    static let tombstoneMarker = UInt32.max - 1

    var isBlob: Bool { valueLength == Self.blobMarker }
    var isTombstone: Bool { valueLength == Self.tombstoneMarker }

    /// The tombstone of a delete by commit `sequence` in `segment`.
    static func tombstone(in segment: UInt64, sequence: UInt64) -> Location {
        Location(
            segment: segment, blockOffset: 0, blockLength: 0, valueOffset: 0, valueLength: tombstoneMarker, recordSize: 0,
            sequence: sequence)
    }
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

/// The index of the log's tail (the segments from the manifest's log start on): every key the
/// tail holds → ``Location`` of its latest version there, a tombstone included (it hides the key's
/// older versions in the tables), in key order for range scans, plus the live/dead byte counts
/// per segment and the blob references. Values stay on disk. A flush moves a sealed segment's
/// entries into a table and drops them from here (``dropFlushed(_:at:)``).
///
/// The keys and their locations live in one ``KeyTable``: keys inline in their chunk's buffers,
/// locations packed to 32 bytes (``PackedLocation``, files by slot in ``FileSlots``). There is
/// no hash table: a point lookup is the table's binary search, over contiguous 8-byte prefixes.
///
/// Open loads each hint file's entries (a pack's or a segment's), already in key order, as a run
/// of its own, decoded straight into table chunks (``LoadedRun``: no hashing, no per-key
/// allocation), and merges the runs in one pass when the first put, delete, move or
/// ``finishLoading()`` needs the table (a lone run becomes the table as it is); lookups meanwhile
/// search the runs, newest first.
/// Until then a key that two runs list (only a damaged manifest does that; the later run wins)
/// counts in ``count``, ``keyBytes`` and ``usage`` twice: the merge retires the older copy as an
/// overwrite would. The blob figures are exact throughout.
struct KeyDirectory {
    private var table = KeyTable<PackedLocation>()
    private var slots = FileSlots()
    /// Runs loaded and not yet merged into `table`, oldest first, each strictly ascending.
    private var pending: [KeyTable<PackedLocation>] = []
    private var pendingCount = 0
    /// Set by ``finishLoading()``: ``entries(in:after:reverse:limit:)`` lists nothing before.
    private var finished = false
    private(set) var usage: [UInt64: SegmentUsage] = [:]
    /// Entries that are tombstones (counted in ``count``).
    private(set) var tombstoneCount = 0
    /// The total length of the keys held, tombstones' included.
    private(set) var keyBytes = 0
    /// The blob reference of every live key whose value is a blob.
    private(set) var blobs: [HashedKey: BlobReference] = [:]
    /// The total size of the live keys' blob files.
    private(set) var blobBytes: UInt64 = 0
    /// The size of blob files whose keys were overwritten or deleted since the last collection:
    /// dead space for the compaction policy.
    var retiredBlobBytes: UInt64 = 0

    /// Entries held, tombstones included.
    var count: Int { table.count + pendingCount }
    /// Keys whose tail version is a value.
    var liveCount: Int { count - tombstoneCount }

    subscript(key: [UInt8]) -> Location? {
        if !pending.isEmpty, let packed = pendingValue(key) { return slots.location(packed) }
        guard let packed = table[key] else { return nil }
        return slots.location(packed)
    }

    /// The newest pending run's value for `key`.
    private func pendingValue(_ key: [UInt8]) -> PackedLocation? {
        key.withUnsafeBytes { bytes in
            let prefix = KeyOrder.prefix(bytes)
            let tail = KeyOrder.tail(bytes)
            for run in pending.reversed() {
                if let value = run.value(prefix, tail) { return value }
            }
            return nil
        }
    }

    /// Sets `key` to the version at `location`; `blob` is its reference when the value is a blob
    /// (then `location.valueLength` is ``Location/blobMarker``).
    mutating func put(_ key: [UInt8], at location: Location, blob: BlobReference? = nil) {
        mergePending()
        let packed = slots.retain(location)
        if let old = table.updateValue(packed, forKey: key) {
            retire(old, key: key)
        } else {
            keyBytes += key.count
        }
        if let blob { addBlob(blob, key: HashedKey(key)) }
        usage[location.segment, default: SegmentUsage()].liveBytes += Int(location.recordSize)
    }

    private mutating func addBlob(_ blob: BlobReference, key: HashedKey) {
        blobs[key] = blob
        blobBytes += blob.fileLength
    }

    /// Records a delete by commit `sequence` whose tombstone (of `recordSize` bytes, counted
    /// dead) is in `segment`: the key's entry becomes a tombstone.
    mutating func delete(_ key: [UInt8], tombstoneIn segment: UInt64, recordSize: Int, sequence: UInt64) {
        mergePending()
        let packed = slots.retain(.tombstone(in: segment, sequence: sequence))
        if let old = table.updateValue(packed, forKey: key) {
            retire(old, key: key)
        } else {
            keyBytes += key.count
        }
        tombstoneCount += 1
        usage[segment, default: SegmentUsage()].deadBytes += recordSize
    }

    /// Applies the puts and deletes of one or more commits, in their order, leaving the index
    /// exactly as ``put(_:at:blob:)`` and ``delete(_:tombstoneIn:recordSize:sequence:)`` called
    /// one at a time would (every count, byte figure and blob reference; of several updates of
    /// one key, the last is its entry and the earlier ones count as overwritten): the updates are
    /// sorted once by key (``KeyOrder``: 8-byte prefix, then tail) and merged into the key table
    /// in one pass (``KeyTable/updateValues(_:replaced:)``). One update takes the lone-key path.
    mutating func apply(_ updates: [IndexUpdate]) {
        if updates.count == 1 {
            let update = updates[0]
            if update.location.isTombstone {
                delete(update.key, tombstoneIn: update.location.segment, recordSize: update.tombstoneSize, sequence: update.location.sequence)
            } else {
                put(update.key, at: update.location, blob: update.blob)
            }
            return
        }
        guard !updates.isEmpty else { return }
        mergePending()
        // The keys in one buffer, then the updates' numbers sorted by key, in commit order among
        // equal keys.
        var flatKeys: [UInt8] = []
        var keyStarts: [Int] = [0]
        keyStarts.reserveCapacity(updates.count + 1)
        for update in updates {
            flatKeys += update.key
            keyStarts.append(flatKeys.count)
        }
        var sums = UsageSums()
        var batch = KeyTable<PackedLocation>.AscendingBatch(capacity: updates.count)
        // For each key of the batch, its last update.
        var finals: [Int] = []
        finals.reserveCapacity(updates.count)
        flatKeys.withUnsafeBytes { bytes in
            func key(_ update: Int) -> UnsafeRawBufferPointer {
                UnsafeRawBufferPointer(rebasing: bytes[keyStarts[update]..<keyStarts[update + 1]])
            }
            var items: [(prefix: UInt64, update: Int)] = []
            items.reserveCapacity(updates.count)
            for update in updates.indices { items.append((KeyOrder.prefix(key(update)), update)) }
            func compareKeys(_ a: (prefix: UInt64, update: Int), _ b: (prefix: UInt64, update: Int)) -> Int {
                if a.prefix != b.prefix { return a.prefix < b.prefix ? -1 : 1 }
                guard KeyOrder.hasTail(a.prefix) else { return 0 }
                return KeyOrder.compareTails(KeyOrder.tail(key(a.update)), KeyOrder.tail(key(b.update)))
            }
            items.sort { a, b in
                let order = compareKeys(a, b)
                return order != 0 ? order < 0 : a.update < b.update
            }
            for (position, item) in items.enumerated() {
                let update = updates[item.update]
                if position + 1 < items.count, compareKeys(item, items[position + 1]) == 0 {
                    // Overwritten by the next update of its key in this batch: counted as a
                    // put or delete followed by its retirement.
                    if update.location.isTombstone {
                        sums.add(dead: update.tombstoneSize, in: update.location.segment)
                    } else {
                        sums.add(live: 0, dead: Int(update.location.recordSize), in: update.location.segment)
                        if let blob = update.blob { retiredBlobBytes += blob.fileLength }
                    }
                    continue
                }
                finals.append(item.update)
                batch.append(key(item.update), slots.retain(update.location))
            }
        }
        var present = [Bool](repeating: false, count: finals.count)
        var replaced: [(index: Int, old: PackedLocation)] = []
        table.updateValues(batch) { index, old in replaced.append((index, old)) }
        for (index, old) in replaced {
            present[index] = true
            retire(old, key: updates[finals[index]].key, sums: &sums)
        }
        for (index, number) in finals.enumerated() {
            let update = updates[number]
            if !present[index] { keyBytes += update.key.count }
            if update.location.isTombstone {
                tombstoneCount += 1
                sums.add(dead: update.tombstoneSize, in: update.location.segment)
            } else {
                if let blob = update.blob { addBlob(blob, key: HashedKey(update.key)) }
                sums.add(live: Int(update.location.recordSize), dead: 0, in: update.location.segment)
            }
        }
        for (file, sum) in sums.files {
            usage[file, default: SegmentUsage()].liveBytes += sum.liveBytes
            usage[file, default: SegmentUsage()].deadBytes += sum.deadBytes
        }
    }

    /// ``retire(_:key:blobDone:)`` with the byte counts added to `sums`.
    private mutating func retire(_ old: PackedLocation, key: [UInt8], sums: inout UsageSums) {
        if old.isTombstone { tombstoneCount -= 1 }
        sums.add(live: -Int(old.recordSize), dead: Int(old.recordSize), in: slots.file(old))
        slots.release(old)
        if old.isBlob, let blob = blobs.removeValue(forKey: HashedKey(key)) { retireBlob(blob) }
    }

    /// Drops `key`'s entry if it is still `location` (a flush wrote it to a table, and no commit
    /// has changed the key since): true when dropped. Its blob, if any, is not retired: the
    /// table references it now.
    mutating func dropFlushed(_ key: [UInt8], at location: Location) -> Bool {
        key.withUnsafeBytes { dropFlushed(ascending: [($0, location)]) } == 1
    }

    /// ``dropFlushed(_:at:)`` for each of `flushed`, whose keys ascend, at once: the table loses
    /// the keys dropped in one pass (a key below the one before costs a pass of its own). Returns
    /// how many were dropped.
    mutating func dropFlushed(ascending flushed: [(key: UnsafeRawBufferPointer, location: Location)]) -> Int {
        mergePending()
        var positions: [KeyTable<PackedLocation>.Position] = []
        var dropped = 0
        for (key, location) in flushed {
            var (position, found) = table.find(key, after: positions.last)
            if found, let last = positions.last, position <= last {
                // Keys out of order: the removals so far go first, so that positions ascend.
                table.remove(at: positions)
                positions = []
                (position, found) = table.find(key)
            }
            guard found else { continue }
            let old = table.value(at: position)
            guard slots.location(old) == location else { continue }
            positions.append(position)
            dropped += 1
            slots.release(old)
            keyBytes -= key.count
            if old.isTombstone { tombstoneCount -= 1 }
            usage[location.segment, default: SegmentUsage()].liveBytes -= Int(old.recordSize)
            if old.isBlob, let blob = blobs.removeValue(forKey: HashedKey(Array(key))) { blobBytes -= blob.fileLength }
        }
        table.remove(at: positions)
        return dropped
    }

    /// What a flush writes of one key: the key, its version's place in the tail (a tombstone's
    /// included), and its blob reference when the version is a blob.
    struct FlushEntry {
        var key: [UInt8]
        var location: Location
        var blob: BlobReference?

        /// The bytes a flush buffers for it: the entry itself, its key, and its inline value.
        var bufferedBytes: Int {
            MemoryLayout<FlushEntry>.stride + key.count
                + (location.isTombstone || location.isBlob ? 0 : Int(location.valueLength))
        }
    }

    /// The next entries of a flush's walk over the index in key order: from the first key after
    /// `cursor` (the first key when nil), looking at up to `scanLimit` keys, those whose version
    /// lies in a segment of `segments` (tombstones only when `tombstones`), in key order, stopping
    /// before the one whose ``FlushEntry/bufferedBytes`` would take `holding` (the bytes the
    /// caller holds already) plus theirs past `byteBudget` (when nothing is held yet, one entry is
    /// always taken). Returns them, the last key looked at (the next call's cursor), whether the
    /// budget stopped them, and whether the index's last key was looked at.
    mutating func flushEntries(
        after cursor: [UInt8]?, in segments: ClosedRange<UInt64>, tombstones: Bool, holding: Int, byteBudget: Int,
        scanLimit: Int
    ) -> (entries: [FlushEntry], last: [UInt8]?, full: Bool, atEnd: Bool) {
        mergePending()
        let positions = table.positions(in: .all, after: cursor, reverse: false, limit: scanLimit)
        var entries: [FlushEntry] = []
        var bytes = holding
        for (number, position) in positions.enumerated() {
            let packed = table.value(at: position)
            guard segments.contains(slots.file(packed)), tombstones || !packed.isTombstone else { continue }
            let key = table.key(at: position)
            let entry = FlushEntry(key: key, location: slots.location(packed), blob: packed.isBlob ? blobs[HashedKey(key)] : nil)
            if bytes > 0, bytes + entry.bufferedBytes > byteBudget {
                // The next call starts at this entry.
                return (entries, number == 0 ? cursor : table.key(at: positions[number - 1]), true, false)
            }
            bytes += entry.bufferedBytes
            entries.append(entry)
        }
        return (entries, positions.last.map(table.key(at:)) ?? cursor, false, positions.count < scanLimit)
    }

    /// After a flush's switch: drops, from the first key after `cursor` and looking at up to
    /// `scanLimit` keys, every entry whose version lies in a segment of `segments`, the segments
    /// the flush replaced. Those are exactly the versions its tables hold (or the tombstones it
    /// left out, with no older table to hide): the flush looked at every key of the index while
    /// it held these segments, and a version in a sealed segment is only ever replaced by one in
    /// a newer segment, never by one in these, so an entry still there is the one it wrote. A
    /// blob stays unretired (the table references it now). Returns the last key looked at (the
    /// next call's cursor), whether that was the index's last key, and how many were dropped.
    mutating func dropFlushed(
        in segments: ClosedRange<UInt64>, after cursor: [UInt8]?, scanLimit: Int
    ) -> (last: [UInt8]?, atEnd: Bool, dropped: Int) {
        mergePending()
        let scanned = table.positions(in: .all, after: cursor, reverse: false, limit: scanLimit)
        guard let lastPosition = scanned.last else { return (cursor, true, 0) }
        let last = table.key(at: lastPosition)
        var positions: [KeyTable<PackedLocation>.Position] = []
        for position in scanned {
            let old = table.value(at: position)
            let file = slots.file(old)
            guard segments.contains(file) else { continue }
            positions.append(position)
            slots.release(old)
            keyBytes -= table.keyLength(at: position)
            if old.isTombstone { tombstoneCount -= 1 }
            usage[file, default: SegmentUsage()].liveBytes -= Int(old.recordSize)
            if old.isBlob, let blob = blobs.removeValue(forKey: HashedKey(table.key(at: position))) { blobBytes -= blob.fileLength }
        }
        table.remove(at: positions)
        return (last, scanned.count < scanLimit, positions.count)
    }

    /// Forgets the byte counts of files that compaction has removed.
    mutating func forgetFiles(_ files: some Sequence<UInt64>) {
        for file in files { usage[file] = nil }
    }

    /// Counts `old`'s bytes as dead and lets go of its file slot; `key`'s blob, if `old` was one,
    /// is retired too unless `blobDone` (a load settles blobs as it reads them).
    private mutating func retire(_ old: PackedLocation, key: [UInt8], blobDone: Bool = false) {
        let file = slots.file(old)
        if old.isTombstone { tombstoneCount -= 1 }
        usage[file, default: SegmentUsage()].liveBytes -= Int(old.recordSize)
        usage[file, default: SegmentUsage()].deadBytes += Int(old.recordSize)
        slots.release(old)
        if !blobDone, old.isBlob, let blob = blobs.removeValue(forKey: HashedKey(key)) { retireBlob(blob) }
    }

    private mutating func retireBlob(_ blob: BlobReference) {
        blobBytes -= blob.fileLength
        retiredBlobBytes += blob.fileLength
    }

    /// Counts `bytes` of records in `file` as dead without a key: records a segment hint left out
    /// because later records in the same segment replaced them.
    mutating func countDead(_ bytes: Int, in file: UInt64) {
        usage[file, default: SegmentUsage()].deadBytes += bytes
    }

    mutating func noteSegment(_ segment: UInt64) {
        if usage[segment] == nil { usage[segment] = SegmentUsage() }
    }

    /// Loads a pack's entries, which come in key order, while the store opens, as a run merged
    /// later (see the type's comment); a later run wins over an earlier one. Entries out of order
    /// (a hint file does not prove its order) are loaded sorted as a newer run; of two entries
    /// for one key, the later wins.
    mutating func load(sortedEntries entries: [IndexEntry]) {
        loadRun { run in
            for entry in entries { run.put(entry.key[...], entry.location, blob: entry.blob) }
        }
    }

    /// Builds a run of entries beside the index with `body` (which feeds it a hint's entries,
    /// ``LoadedRun``) and, when `body` returns, takes it in as the newest pending run; when
    /// `body` throws, the index is left exactly as it was.
    mutating func loadRun<T, Failure: Error>(_ body: (inout LoadedRun) throws(Failure) -> T) throws(Failure) -> T {
        var run = LoadedRun(slots: slots, olderBlobs: blobs)
        let result = try body(&run)
        take(&run)
        return result
    }

    private mutating func take(_ run: inout LoadedRun) {
        let (table, unordered) = run.finish()
        slots = run.slots
        for (file, bytes) in run.usage {
            usage[file, default: SegmentUsage()].liveBytes += bytes.liveBytes
            usage[file, default: SegmentUsage()].deadBytes += bytes.deadBytes
        }
        keyBytes += run.keyBytes
        retiredBlobBytes += run.retiredBlobBytes
        for key in run.replacedBlobKeys {
            // An older run's blob, replaced by this run's inline value.
            if let old = blobs.removeValue(forKey: HashedKey(key)) { retireBlob(old) }
        }
        for (key, blob) in run.blobs {
            if let old = blobs.updateValue(blob, forKey: HashedKey(key)) { retireBlob(old) }
            blobBytes += blob.fileLength
        }
        if table.count > 0 {
            pending.append(table)
            pendingCount += table.count
        }
        if !unordered.isEmpty {
            // The rest, sorted (stably: of two entries for one key, the later wins), is a run of
            // its own, newer than the first part.
            let order = unordered.indices.sorted { a, b in
                let order = compareBytes(unordered[a].key, unordered[b].key)
                return order != 0 ? order < 0 : a < b
            }
            loadRun { rest in
                for index in order { rest.put(unordered[index].key[...], unordered[index].location, blob: unordered[index].blob) }
            }
            return
        }
        if finished { mergePending() }
    }

    /// Merges the pending runs (and the table, older than all of them) into the table.
    private mutating func mergePending() {
        guard !pending.isEmpty else { return }
        if table.count == 0, pending.count == 1 {
            // The only source (a store with one hint or pack): already a table in key order.
            table = pending.removeLast()
            pendingCount = 0
            return
        }
        var sources: [[KeyTable<PackedLocation>.Chunk]] = table.count > 0 ? [table.chunks] : []
        sources += pending.map(\.chunks)
        table = KeyTable()
        pending = []
        pendingCount = 0
        var merge = RunMerge(sources)
        var builder = KeyTable<PackedLocation>.Builder()
        // The smallest key not yet written, from the newest source seen for it so far.
        var held: RunMerge.Cursor? = nil
        while let next = merge.pop() {
            if let current = held {
                if merge.compare(current, next) == 0 {
                    // A key in two sources: the later wins, the earlier is retired.
                    let key = merge.key(current)
                    retire(merge.value(current), key: key, blobDone: true)
                    keyBytes -= key.count
                } else {
                    merge.append(current, to: &builder)
                }
            }
            held = next
        }
        if let held { merge.append(held, to: &builder) }
        table = builder.finish()
    }

    /// Builds the key order once after loading; from then on every put and delete keeps it.
    mutating func finishLoading() {
        mergePending()
        finished = true
    }

    /// Up to `limit` entries whose keys lie in `range`, ascending (descending when `reverse`),
    /// starting strictly after `cursor` in that direction when it is given.
    func entries(in range: LogStore.KeyRange, after cursor: [UInt8]?, reverse: Bool, limit: Int) -> [IndexEntry] {
        guard finished else { return [] }
        return table.positions(in: range, after: cursor, reverse: reverse, limit: limit).map { position in
            let key = table.key(at: position)
            let packed = table.value(at: position)
            return IndexEntry(key: key, location: slots.location(packed), blob: packed.isBlob ? blobs[HashedKey(key)] : nil)
        }
    }

    /// Up to `limit` entries whose keys lie in `range`, nearest its low end (its high end when
    /// `reverse`), as a batch of a ``TailCursor``, ascending either way: the keys written back to
    /// back into one buffer straight from the table's chunks, so a batch allocates its buffer and
    /// its list of items, not an array per key (a blob's key is built once, to find its
    /// reference).
    func tailBatch(in range: LogStore.KeyRange, reverse: Bool, limit: Int) -> TailCursor.Batch {
        guard finished else { return .empty }
        var positions = table.positions(in: range, after: nil, reverse: reverse, limit: limit)
        if reverse { positions.reverse() }
        let chunks = table.chunks
        // (Indexed loops, not iterators: a scan's tail allocates per batch, in debug builds too.)
        func headLength(_ prefix: UInt64) -> Int { KeyOrder.hasTail(prefix) ? KeyOrder.prefixLength : Int(prefix & 0xFF) }
        var bounds = [Int](repeating: 0, count: positions.count + 1)
        var i = 0
        while i < positions.count {
            let position = positions[i]
            bounds[i + 1] =
                bounds[i] + headLength(chunks[position.chunk].prefix(position.index))
                + chunks[position.chunk].withTail(position.index) { $0.count }
            i += 1
        }
        let keys = PackedKeys(bounds: bounds) { base in
            var i = 0
            while i < positions.count {
                let position = positions[i]
                let start = bounds[i]
                let prefix = chunks[position.chunk].prefix(position.index)
                let head = headLength(prefix)
                var byte = 0
                while byte < head {
                    base.storeBytes(of: UInt8(truncatingIfNeeded: prefix >> (56 - 8 * byte)), toByteOffset: start + byte, as: UInt8.self)
                    byte += 1
                }
                chunks[position.chunk].withTail(position.index) { tail in
                    if let from = tail.baseAddress { (base + start + head).copyMemory(from: from, byteCount: tail.count) }
                }
                i += 1
            }
        }
        var items: [TailCursor.Item] = []
        items.reserveCapacity(positions.count)
        i = 0
        while i < positions.count {
            let packed = table.value(at: positions[i])
            let blob = packed.isBlob ? blobs[HashedKey(Array(keys[i]))] : nil
            items.append(TailCursor.Item(location: slots.location(packed), blob: blob))
            i += 1
        }
        return TailCursor.Batch(keys: keys, items: items)
    }

    /// The blob reference of `key`'s current value, if that value is a blob.
    func blob(forKey key: [UInt8]) -> BlobReference? { blobs[HashedKey(key)] }

    /// An estimate of the heap bytes per key held by the index for keys of `averageKeyLength`:
    /// a ``KeyTable`` entry (8-byte prefix, 4-byte tail end, the key's bytes after the seventh,
    /// the 32-byte ``PackedLocation``) in chunks whose arrays are allocated for a full chunk and
    /// are typically 3/4 used (7/8 after open, about 0.7 under random inserts, which split full
    /// chunks in halves), plus a small share of each chunk's four array headers and the
    /// per-chunk prefix. `walstore-example` measures the real figure with `mallinfo2`.
    static func estimatedBytesPerKey(averageKeyLength: Int) -> Int {
        let capacity = KeyTable<PackedLocation>.chunkCapacity
        let entry =
            MemoryLayout<UInt64>.stride + MemoryLayout<UInt32>.stride
            + max(averageKeyLength - KeyOrder.prefixLength, 0) + MemoryLayout<PackedLocation>.stride
        let chunkOverhead = 4 * (32 + 16) + MemoryLayout<KeyTable<PackedLocation>.Chunk>.stride + 8
        return (entry * (capacity + 1) + chunkOverhead) * 4 / (3 * capacity)
    }
}

/// One record of a commit as the index takes it (``KeyDirectory/apply(_:)``): a put, of a value
/// or of a blob (`blob` set) at `location`, or a delete, whose `location` is its tombstone.
struct IndexUpdate: Sendable {
    var key: [UInt8]
    var location: Location
    var blob: BlobReference? = nil
    /// A delete's record size, counted dead in its segment; 0 for a put.
    var tombstoneSize = 0
}

/// Live and dead bytes added per file over a batch, applied to the index's figures once.
private struct UsageSums {
    /// The files touched, in the order met: a commit's records share one or two.
    private(set) var files: [(file: UInt64, sum: SegmentUsage)] = []

    @inline(__always)
    mutating func add(live: Int = 0, dead: Int, in file: UInt64) {
        if let index = files.lastIndex(where: { $0.file == file }) {
            files[index].sum.liveBytes += live
            files[index].sum.deadBytes += dead
        } else {
            files.append((file, SegmentUsage(liveBytes: live, deadBytes: dead)))
        }
    }
}

/// A k-way merge over sources of ascending chunks (each source strictly ascending), yielding
/// every entry in key order; equal keys come oldest source first.
private struct RunMerge {
    typealias Chunk = KeyTable<PackedLocation>.Chunk
    struct Cursor {
        /// The prefix of the key at the cursor, which settles most comparisons.
        var prefix: UInt64
        var source: Int
        var chunk: Int
        var index: Int
    }

    private let sources: [[Chunk]]
    /// A binary min-heap of the sources' current cursors, by key, then source.
    private var heap: [Cursor] = []

    init(_ sources: [[Chunk]]) {
        self.sources = sources
        for (source, chunks) in sources.enumerated() {
            if let first = chunks.firstIndex(where: { $0.count > 0 }) {
                push(Cursor(prefix: chunks[first].prefix(0), source: source, chunk: first, index: 0))
            }
        }
    }

    func key(_ cursor: Cursor) -> [UInt8] { sources[cursor.source][cursor.chunk].key(at: cursor.index) }
    func value(_ cursor: Cursor) -> PackedLocation { sources[cursor.source][cursor.chunk].value(cursor.index) }

    /// Key order of two cursors.
    @inline(__always)
    func compare(_ a: Cursor, _ b: Cursor) -> Int {
        if a.prefix != b.prefix { return a.prefix < b.prefix ? -1 : 1 }
        guard KeyOrder.hasTail(a.prefix) else { return 0 }
        return sources[b.source][b.chunk].withTail(b.index) { tail in
            sources[a.source][a.chunk].compare(a.index, b.prefix, tail)
        }
    }

    @inline(__always)
    private func precedes(_ a: Cursor, _ b: Cursor) -> Bool {
        let order = compare(a, b)
        return order != 0 ? order < 0 : a.source < b.source
    }

    func append(_ cursor: Cursor, to builder: inout KeyTable<PackedLocation>.Builder) {
        let chunk = sources[cursor.source][cursor.chunk]
        chunk.withTail(cursor.index) { builder.append(cursor.prefix, $0, chunk.value(cursor.index)) }
    }

    /// The smallest cursor, after which its source moves on.
    mutating func pop() -> Cursor? {
        guard let top = heap.first else { return nil }
        var next = top
        next.index += 1
        let chunks = sources[top.source]
        while next.chunk < chunks.count, next.index >= chunks[next.chunk].count {
            next.chunk += 1
            next.index = 0
        }
        if next.chunk < chunks.count {
            next.prefix = chunks[next.chunk].prefix(next.index)
            heap[0] = next
        } else {
            heap[0] = heap[heap.count - 1]
            heap.removeLast()
        }
        if !heap.isEmpty { siftDown(0) }
        return top
    }

    private mutating func push(_ cursor: Cursor) {
        heap.append(cursor)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var smallest = left
            if left + 1 < heap.count, precedes(heap[left + 1], heap[left]) { smallest = left + 1 }
            guard precedes(heap[smallest], heap[parent]) else { return }
            heap.swapAt(smallest, parent)
            parent = smallest
        }
    }
}
