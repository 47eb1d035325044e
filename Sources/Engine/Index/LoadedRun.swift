/// Takes the put entries a hint file lists, in the order it lists them: an array of
/// ``IndexEntry`` (``IndexEntryList``), or a run of the index built on the side
/// (``LoadedRun``), so that open decodes a hint straight into the index without a heap buffer
/// per key.
protocol IndexEntrySink {
    /// Takes the entry of `key` (a slice of the hint's bytes, valid only during the call).
    mutating func put(_ key: ArraySlice<UInt8>, _ location: Location, blob: BlobReference?)
}

/// The entries a hint lists, as ``IndexEntry`` values (salvage, fuzzing and tests read hints so).
struct IndexEntryList: IndexEntrySink {
    var entries: [IndexEntry] = []

    mutating func put(_ key: ArraySlice<UInt8>, _ location: Location, blob: BlobReference?) {
        entries.append(IndexEntry(key: Array(key), location: location, blob: blob))
    }
}

/// The index entries of one file loaded at open (a pack's or a segment's hint), built beside the
/// index in key order, straight into table chunks (``KeyTable/Builder``): no per-key heap buffer,
/// no sort, and no merge when it is the index's only source. ``KeyDirectory/loadRun(_:)`` takes
/// it in only once its hint checked out whole, so a hint that fails a check late leaves the index
/// as it was.
///
/// Entries should come strictly ascending (hints are written so). One equal to the last replaces
/// it (the later wins); the entries from the first that sorts before the last on are kept aside
/// and loaded, sorted, as a newer run of their own: a hint does not prove its order.
struct LoadedRun: IndexEntrySink {
    typealias Table = KeyTable<PackedLocation>
    private(set) var builder = Table.Builder()
    /// The index's file slots, retained for this run's entries; the index adopts them with it.
    private(set) var slots: FileSlots
    /// The index's blob references before this run: a key of the run that replaces one of them
    /// with an inline value retires the blob.
    private let olderBlobs: [HashedKey: BlobReference]
    /// This run's blob references, ascending by key.
    private(set) var blobs: [(key: [UInt8], blob: BlobReference)] = []
    /// Keys whose older blob this run replaces with an inline value.
    private(set) var replacedBlobKeys: [[UInt8]] = []
    /// Blob bytes replaced inside the run (the same key twice).
    private(set) var retiredBlobBytes: UInt64 = 0
    /// Live and dead record bytes per file.
    private(set) var usage: [UInt64: SegmentUsage] = [:]
    private var currentFile: UInt64 = 0
    private var currentBytes = 0
    private(set) var keyBytes = 0
    /// The record bytes of the entries taken (replaced ones included).
    private(set) var recordBytes = 0
    /// Entries from the first out of order on, loaded after the run as a newer one.
    private(set) var unordered: [IndexEntry] = []

    init(slots: FileSlots, olderBlobs: [HashedKey: BlobReference]) {
        self.slots = slots
        self.olderBlobs = olderBlobs
    }

    var count: Int { builder.count }

    mutating func put(_ key: ArraySlice<UInt8>, _ location: Location, blob: BlobReference?) {
        recordBytes += Int(location.recordSize)
        guard unordered.isEmpty else {
            unordered.append(IndexEntry(key: Array(key), location: location, blob: blob))
            return
        }
        let order: Int? = key.withUnsafeBytes { bytes in
            builder.compareLast(KeyOrder.prefix(bytes), KeyOrder.tail(bytes))
        }
        if let order, order > 0 {
            unordered.append(IndexEntry(key: Array(key), location: location, blob: blob))
            return
        }
        if location.segment != currentFile {
            flushBytes()
            currentFile = location.segment
        }
        currentBytes += Int(location.recordSize)
        let packed = slots.retain(location)
        if order == 0, let old = builder.lastValue {
            // The same key twice: the later wins, the earlier is dead where it lies.
            let file = slots.location(old).segment
            usage[file, default: SegmentUsage()].liveBytes -= Int(old.recordSize)
            usage[file, default: SegmentUsage()].deadBytes += Int(old.recordSize)
            slots.release(old)
            if old.isBlob, let last = blobs.popLast() { retiredBlobBytes += last.blob.fileLength }
            builder.setLastValue(packed)
        } else {
            key.withUnsafeBytes { bytes in builder.append(KeyOrder.prefix(bytes), KeyOrder.tail(bytes), packed) }
            keyBytes += key.count
        }
        if let blob {
            blobs.append((Array(key), blob))
        } else if !olderBlobs.isEmpty, olderBlobs[HashedKey(Array(key))] != nil {
            replacedBlobKeys.append(Array(key))
        }
    }

    private mutating func flushBytes() {
        if currentBytes != 0 { usage[currentFile, default: SegmentUsage()].liveBytes += currentBytes }
        currentBytes = 0
    }

    /// Ends the run: its table, and the entries kept aside for a newer run (sorted by the caller).
    mutating func finish() -> (Table, [IndexEntry]) {
        flushBytes()
        let unordered = self.unordered
        self.unordered = []
        return (builder.finish(), unordered)
    }
}
