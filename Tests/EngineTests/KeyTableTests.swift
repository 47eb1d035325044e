@testable import Engine
import EngineTestSupport
import Testing

/// The index's new parts (KeyOrder, KeyTable, FileSlots, KeyDirectory's loading and merging)
/// against plain references: a dictionary and a sorted array.
@Suite struct KeyTableTests {
    /// Keys that make the prefixes tie: a shared start (sometimes longer than the 7 prefix bytes),
    /// a two-letter alphabet, lengths 0 to 20 (the empty key and keys shorter than a prefix too).
    static func key(_ random: inout SeededGenerator) -> [UInt8] {
        let start: [UInt8] =
            switch Int.random(in: 0..<4, using: &random) {
            case 0: []
            case 1: [7]
            case 2: [7, 7, 7, 7, 7, 7]
            default: [7, 7, 7, 7, 7, 7, 7, 7, 7, 7]
            }
        return start + random.bytes(Int.random(in: 0...10, using: &random)).map { $0 % 2 }
    }

    static func sorted(_ keys: some Sequence<[UInt8]>) -> [[UInt8]] { keys.sorted { $0.lexicographicallyPrecedes($1) } }

    /// What `positions(in:after:reverse:limit:)` must list, from a sorted array.
    static func expected(_ sortedKeys: [[UInt8]], _ range: LogStore.KeyRange, after cursor: [UInt8]?, reverse: Bool, limit: Int) -> [[UInt8]] {
        var keys = sortedKeys.filter(range.contains)
        if reverse { keys.reverse() }
        if let cursor {
            keys = keys.filter { reverse ? $0.lexicographicallyPrecedes(cursor) : cursor.lexicographicallyPrecedes($0) }
        }
        return Array(keys.prefix(limit))
    }

    static func randomRange(_ random: inout SeededGenerator) -> LogStore.KeyRange {
        func bound() -> LogStore.KeyRange.Bound {
            switch Int.random(in: 0..<3, using: &random) {
            case 0: .unbounded
            case 1: .inclusive(key(&random))
            default: .exclusive(key(&random))
            }
        }
        if Int.random(in: 0..<4, using: &random) == 0 { return .prefix(key(&random)) }
        return LogStore.KeyRange(lower: bound(), upper: bound())
    }

    @Test func keyOrderPrefixesAgreeWithByteOrderAndKeysRoundTrip() {
        var random = SeededGenerator(seed: 11)
        for _ in 0..<20_000 {
            let a = Self.key(&random)
            let b = Self.key(&random)
            let (pa, pb) = (a.withUnsafeBytes(KeyOrder.prefix), b.withUnsafeBytes(KeyOrder.prefix))
            let expected = a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
            if pa != pb { #expect((pa < pb ? -1 : 1) == expected, "\(a) vs \(b)") }
            if pa == pb, !KeyOrder.hasTail(pa) { #expect(a == b, "\(a) vs \(b): equal prefixes without tails") }
            if pa == pb, KeyOrder.hasTail(pa) {
                let order = a.withUnsafeBytes { ra in b.withUnsafeBytes { rb in KeyOrder.compareTails(KeyOrder.tail(ra), KeyOrder.tail(rb)) } }
                #expect(order.signum() == expected, "\(a) vs \(b)")
            }
            #expect(a.withUnsafeBytes { KeyOrder.key(prefix: pa, tail: KeyOrder.tail($0)) } == a)
        }
        // Keys equal but for trailing zeros, and the empty key, stay apart.
        let keys: [[UInt8]] = [[], [0], [0, 0], [1], [1, 0], [1, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0, 0]]
        let prefixes = keys.map { $0.withUnsafeBytes(KeyOrder.prefix) }
        #expect(Set(prefixes.prefix(7)).count == 7)
        #expect(prefixes == prefixes.sorted())
    }

    @Test func keyTableMatchesADictionaryUnderRandomInsertsRemovesAndScans() {
        var random = SeededGenerator(seed: 5)
        var table = KeyTable<UInt64>()
        var reference: [[UInt8]: UInt64] = [:]
        for step in 0..<30_000 {
            let key = Self.key(&random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                let value = random.next()
                #expect(table.updateValue(value, forKey: key) == reference.updateValue(value, forKey: key))
            case 5..<8:
                #expect(table.removeValue(forKey: key) == reference.removeValue(forKey: key))
            default:
                #expect(table[key] == reference[key])
            }
            if step % 500 == 0 {
                let sortedKeys = Self.sorted(reference.keys)
                let range = Self.randomRange(&random)
                let reverse = Bool.random(using: &random)
                let cursor = Bool.random(using: &random) ? Self.key(&random) : nil
                let limit = Int.random(in: 0...40, using: &random)
                let listed = table.positions(in: range, after: cursor, reverse: reverse, limit: limit)
                #expect(listed.map(table.key(at:)) == Self.expected(sortedKeys, range, after: cursor, reverse: reverse, limit: limit), "step \(step)")
                #expect(listed.map(table.value(at:)) == listed.map { reference[table.key(at: $0)]! })
            }
        }
        #expect(table.count == reference.count)
        let all = table.positions(in: .all, after: nil, reverse: false, limit: .max)
        #expect(all.map(table.key(at:)) == Self.sorted(reference.keys))
        #expect(all.map(table.value(at:)) == Self.sorted(reference.keys).map { reference[$0]! })
        for (key, value) in reference { #expect(table[key] == value) }
    }

    @Test func aScanResumedFromItsCursorListsEveryKeyOnceInBothDirections() {
        var random = SeededGenerator(seed: 8)
        var table = KeyTable<UInt8>()
        for _ in 0..<3_000 { table.updateValue(0, forKey: random.bytes(Int.random(in: 1...12, using: &random))) }
        let range = LogStore.KeyRange(lower: .inclusive([0x40]), upper: .exclusive([0xC0]))
        for reverse in [false, true] {
            var listed: [[UInt8]] = []
            var cursor: [UInt8]? = nil
            while true {
                let batch = table.positions(in: range, after: cursor, reverse: reverse, limit: 37).map(table.key(at:))
                guard let last = batch.last else { break }
                listed += batch
                cursor = last
            }
            let all = table.positions(in: .all, after: nil, reverse: false, limit: .max).map(table.key(at:))
            let expected = all.filter(range.contains)
            #expect(listed == (reverse ? expected.reversed() : expected))
            #expect(!listed.isEmpty)
        }
    }

    @Test func anEmptyTableFindsAndListsNothing() {
        var table = KeyTable<UInt32>()
        #expect(table[[1]] == nil)
        #expect(table[[]] == nil)
        #expect(table.removeValue(forKey: [1]) == nil)
        #expect(table.positions(in: .all, after: nil, reverse: false, limit: 10).isEmpty)
        #expect(table.positions(in: .all, after: [5], reverse: true, limit: 10).isEmpty)
        table.updateValue(3, forKey: [])
        #expect(table[[]] == 3)
        #expect(table.positions(in: .all, after: nil, reverse: true, limit: 10).map(table.key(at:)) == [[]])
        #expect(table.removeValue(forKey: []) == 3)
        #expect(table.count == 0)
        #expect(table.chunks.isEmpty)
    }

    /// Long keys (up to the format's limit) share long prefixes and mix with short ones, so
    /// chunks hold tails of different lengths and split, grow their tail buffers and merge.
    @Test func keysOfVeryDifferentLengthsKeepTheirOrderAndValues() {
        var random = SeededGenerator(seed: 21)
        var table = KeyTable<UInt32>()
        var reference: [[UInt8]: UInt32] = [:]
        let long = [UInt8](repeating: 9, count: 3_000)
        for i in 0..<2_000 {
            var key = Int.random(in: 0..<3, using: &random) == 0 ? long : []
            key += random.bytes(Int.random(in: 0...4, using: &random)).map { $0 % 3 }
            if i == 0 { key = [UInt8](repeating: 0xFF, count: LogFormat.maxKeyLength) }
            if Int.random(in: 0..<4, using: &random) == 0 {
                #expect(table.removeValue(forKey: key) == reference.removeValue(forKey: key))
            } else {
                #expect(table.updateValue(UInt32(i), forKey: key) == reference.updateValue(UInt32(i), forKey: key))
            }
        }
        let all = table.positions(in: .all, after: nil, reverse: false, limit: .max)
        #expect(all.map(table.key(at:)) == Self.sorted(reference.keys))
        for (key, value) in reference { #expect(table[key] == value) }
    }

    @Test func removingMostKeysMergesChunks() {
        var random = SeededGenerator(seed: 4)
        var table = KeyTable<UInt64>()
        var keys: [[UInt8]] = []
        for _ in 0..<20_000 {
            let key = random.bytes(16)
            keys.append(key)
            table.updateValue(1, forKey: key)
        }
        let full = table.chunks.count
        keys.shuffle(using: &random)
        for key in keys.prefix(19_500) { table.removeValue(forKey: key) }
        #expect(table.count == 500)
        // A chunk under a quarter full has neighbours it cannot join: two chunks in a row hold
        // more than a quarter chunk.
        let quarter = KeyTable<UInt64>.chunkCapacity / 4
        #expect(table.chunks.count <= 2 * 500 / quarter + 1, "\(table.chunks.count) chunks of \(full)")
        for key in keys.suffix(500) { #expect(table[key] == 1) }
    }

    /// Batches of ascending positions, as a flush drops them: a stretch removed whole, keys
    /// spread over many chunks, a lone key; the table keeps every other key, in order, and
    /// chunks merge as single removals merge them.
    @Test func removingBatchesOfAscendingPositionsKeepsTheRestAndMergesChunks() {
        var random = SeededGenerator(seed: 8)
        var table = KeyTable<UInt64>()
        var reference: [[UInt8]: UInt64] = [:]
        for _ in 0..<8_000 {
            let key = random.bytes(Int.random(in: 4...20, using: &random))
            let value = random.next()
            table.updateValue(value, forKey: key)
            reference[key] = value
        }
        let full = table.chunks.count
        var batches = 0
        while reference.count > 300 {
            let keys = Self.sorted(reference.keys)
            var batch = [keys.randomElement(using: &random)!]
            if batches % 3 == 0 {
                let length = min(400, keys.count / 2)
                batch = Array(keys[Int.random(in: 0...keys.count - length, using: &random)...].prefix(length))
            } else if batches % 3 == 1 {
                batch = keys.filter { _ in Int.random(in: 0..<4, using: &random) == 0 }
            }
            let positions = batch.map { key in
                let (position, found) = table.find(key)
                #expect(found)
                return position
            }
            table.remove(at: positions)
            for key in batch { reference[key] = nil }
            batches += 1
        }
        #expect(table.count == reference.count)
        let all = table.positions(in: .all, after: nil, reverse: false, limit: .max)
        #expect(all.map(table.key(at:)) == Self.sorted(reference.keys))
        for (key, value) in reference { #expect(table[key] == value) }
        let quarter = KeyTable<UInt64>.chunkCapacity / 4
        #expect(table.chunks.allSatisfy { $0.count > 0 })
        #expect(table.chunks.count <= 2 * reference.count / quarter + 1, "\(table.chunks.count) chunks of \(full)")
    }

    @Test func keysInsertedInAscendingOrderFillChunksAsABulkLoadDoes() {
        var table = KeyTable<Int>()
        let keys = (0..<10_000).map { bytes("user/" + String(100_000 + $0)) }
        for (i, key) in keys.enumerated() { table.updateValue(i, forKey: key) }
        // Split at 7/8 at the table's end rather than in halves: about 10,000 / 56 chunks.
        let fill = KeyTable<Int>.loadFill
        #expect(table.chunks.count <= keys.count / fill + 1, "\(table.chunks.count) chunks")
        #expect(table.positions(in: .all, after: nil, reverse: false, limit: .max).map(table.key(at:)) == keys)
        for (i, key) in keys.enumerated() { #expect(table[key] == i) }
    }

    @Test func bulkBuiltTableEqualsIncrementalInserts() {
        var random = SeededGenerator(seed: 13)
        let keys = Self.sorted(Set((0..<5_000).map { _ in Self.key(&random) }))
        var builder = KeyTable<Int>.Builder()
        for (i, key) in keys.enumerated() { key.withUnsafeBytes { builder.append(KeyOrder.prefix($0), KeyOrder.tail($0), i) } }
        var bulk = builder.finish()
        #expect(bulk.count == keys.count)
        #expect(bulk.positions(in: .all, after: nil, reverse: false, limit: .max).map(bulk.key(at:)) == keys)
        for (i, key) in keys.enumerated() { #expect(bulk[key] == i) }
        // Inserting into built chunks (filled to 7/8) splits them and keeps the order.
        var reference = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
        for i in 0..<3_000 {
            let key = Self.key(&random)
            bulk.updateValue(-i, forKey: key)
            reference[key] = -i
        }
        #expect(bulk.positions(in: .all, after: nil, reverse: false, limit: .max).map(bulk.key(at:)) == Self.sorted(reference.keys))
        for (key, value) in reference { #expect(bulk[key] == value) }
    }

    @Test func fileSlotsKeepEveryLocationExactlyAndReuseFreedSlots() {
        var slots = FileSlots()
        let odd = [
            Location(
                segment: UInt64.max, blockOffset: UInt64.max, blockLength: .max, valueOffset: .max,
                valueLength: Location.blobMarker, recordSize: .max, sequence: .max),
            Location(
                segment: PackFile.fileID(3), blockOffset: 1 << 40, blockLength: 1, valueOffset: 2,
                valueLength: 3, recordSize: 4, sequence: 5),
            Location(
                segment: 0, blockOffset: (1 << 40) - 1, blockLength: 0, valueOffset: 0, valueLength: 0,
                recordSize: 0, sequence: 0),
        ]
        let packed = odd.map { slots.retain($0) }
        #expect(packed.map(slots.location) == odd)
        #expect(packed.map(slots.file) == odd.map(\.segment))
        #expect(slots.overflowCount == 2)  // the offsets past 40 bits
        #expect(MemoryLayout<PackedLocation>.stride == 32)
        for p in packed { slots.release(p) }
        #expect(slots.overflowCount == 0)
        #expect(slots.slotsInUse == 0)
        // A freed slot serves another file, and the old file's locations are gone with it.
        let a = slots.retain(Location(segment: 7, blockOffset: 24, blockLength: 9, valueOffset: 1, valueLength: 2, recordSize: 3, sequence: 4))
        let b = slots.retain(Location(segment: 8, blockOffset: 48, blockLength: 9, valueOffset: 1, valueLength: 2, recordSize: 3, sequence: 5))
        #expect(slots.slotsInUse == 2)
        slots.release(a)
        let c = slots.retain(Location(segment: 9, blockOffset: 72, blockLength: 9, valueOffset: 1, valueLength: 2, recordSize: 3, sequence: 6))
        #expect(c.slot == a.slot)
        #expect(slots.file(b) == 8)
        #expect(slots.file(c) == 9)
        #expect(slots.slotsInUse == 2)
    }
}

/// KeyDirectory against a plain dictionary: the same figures after any mix of loads, puts,
/// deletes (which leave tombstones) and flushes (which drop entries still where they were).
@Suite struct KeyDirectoryModelTests {
    /// The old KeyDirectory's semantics, on plain dictionaries.
    struct Reference {
        var locations: [[UInt8]: Location] = [:]
        var usage: [UInt64: SegmentUsage] = [:]
        var keyBytes = 0
        var blobs: [[UInt8]: BlobReference] = [:]
        var blobBytes: UInt64 = 0
        var retiredBlobBytes: UInt64 = 0

        mutating func put(_ key: [UInt8], at location: Location, blob: BlobReference?) {
            if let old = locations.updateValue(location, forKey: key) { retire(old, key) } else { keyBytes += key.count }
            if let blob {
                blobs[key] = blob
                blobBytes += blob.fileLength
            }
            usage[location.segment, default: SegmentUsage()].liveBytes += Int(location.recordSize)
        }

        mutating func delete(_ key: [UInt8], segment: UInt64, recordSize: Int, sequence: UInt64) {
            if let old = locations.updateValue(.tombstone(in: segment, sequence: sequence), forKey: key) {
                retire(old, key)
            } else {
                keyBytes += key.count
            }
            usage[segment, default: SegmentUsage()].deadBytes += recordSize
        }

        mutating func dropFlushed(_ key: [UInt8], at location: Location) -> Bool {
            guard locations[key] == location else { return false }
            locations[key] = nil
            keyBytes -= key.count
            usage[location.segment, default: SegmentUsage()].liveBytes -= Int(location.recordSize)
            if location.isBlob, let blob = blobs.removeValue(forKey: key) { blobBytes -= blob.fileLength }
            return true
        }

        private mutating func retire(_ old: Location, _ key: [UInt8]) {
            usage[old.segment, default: SegmentUsage()].liveBytes -= Int(old.recordSize)
            usage[old.segment, default: SegmentUsage()].deadBytes += Int(old.recordSize)
            if old.isBlob, let blob = blobs.removeValue(forKey: key) {
                blobBytes -= blob.fileLength
                retiredBlobBytes += blob.fileLength
            }
        }
    }

    /// Calls `body` with the bytes of each of `keys`.
    static func withBytes<R>(of keys: [[UInt8]], _ body: ([UnsafeRawBufferPointer]) -> R) -> R {
        let flat = keys.flatMap { $0 }
        return flat.withUnsafeBytes { bytes in
            var start = 0
            return body(
                keys.map { key in
                    defer { start += key.count }
                    return UnsafeRawBufferPointer(rebasing: bytes[start..<start + key.count])
                })
        }
    }

    static func location(_ random: inout SeededGenerator, file: UInt64, blob: Bool) -> Location {
        // Now and then an offset that does not pack (the overflow list).
        let offset = Int.random(in: 0..<20, using: &random) == 0 ? (1 << 40) + random.next() % 1000 : random.next() % 100_000
        return Location(
            segment: file, blockOffset: offset, blockLength: UInt32(random.next() % 70_000),
            valueOffset: UInt32(random.next() % 65_536), valueLength: blob ? Location.blobMarker : UInt32(random.next() % 1000),
            recordSize: UInt32(1 + random.next() % 500), sequence: random.next() % 1_000_000)
    }

    static func blob(_ random: inout SeededGenerator) -> BlobReference {
        BlobReference(id: random.next(), length: 100, fileLength: 1 + random.next() % 10_000, checksum: 0, encoding: 0)
    }

    static func entry(_ key: [UInt8], _ random: inout SeededGenerator, file: UInt64) -> IndexEntry {
        let isBlob = Int.random(in: 0..<5, using: &random) == 0
        return IndexEntry(key: key, location: location(&random, file: file, blob: isBlob), blob: isBlob ? blob(&random) : nil)
    }

    static func expectSame(_ index: KeyDirectory, _ reference: Reference, _ note: String) {
        #expect(index.count == reference.locations.count, "\(note)")
        #expect(index.liveCount == reference.locations.values.filter { !$0.isTombstone }.count, "\(note)")
        #expect(index.keyBytes == reference.keyBytes, "\(note)")
        #expect(index.usage.filter { $0.value != SegmentUsage() } == reference.usage.filter { $0.value != SegmentUsage() }, "\(note)")
        #expect(index.blobBytes == reference.blobBytes, "\(note)")
        #expect(index.retiredBlobBytes == reference.retiredBlobBytes, "\(note)")
        #expect(Set(index.blobs.values.map(\.id)) == Set(reference.blobs.values.map(\.id)), "\(note)")
        #expect(index.blobs.count == reference.blobs.count, "\(note)")
        for (key, location) in reference.locations {
            #expect(index[key] == location, "\(note): \(key)")
            #expect(index.blob(forKey: key) == reference.blobs[key], "\(note): \(key)")
        }
        let entries = index.entries(in: .all, after: nil, reverse: false, limit: .max)
        let keys = KeyTableTests.sorted(reference.locations.keys)
        #expect(entries.map(\.key) == keys, "\(note)")
        #expect(entries.map(\.location) == keys.map { reference.locations[$0]! }, "\(note)")
        #expect(entries.map(\.blob) == keys.map { reference.locations[$0]!.isBlob ? reference.blobs[$0] : nil }, "\(note)")
    }

    /// Open's order: runs (sorted, overlapping, one with a key twice and one out of order), the
    /// replay's puts and tombstones, then finishLoading and ordinary traffic with moves.
    @Test(arguments: [1, 2, 3, 4])
    func loadingRunsThenReplayingThenTrafficMatchesTheReference(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var index = KeyDirectory()
        var reference = Reference()
        let runCount = Int(seed) + 1
        var lookups: [[UInt8]] = []
        for run in 0..<runCount {
            let file = PackFile.fileID(UInt64(run + 1))
            index.noteSegment(file)
            var keys = KeyTableTests.sorted(Set((0..<Int.random(in: 0...800, using: &random)).map { _ in KeyTableTests.key(&random) }))
            if run == 1, keys.count > 3 { keys.insert(keys[2], at: 3) }  // a key twice in one run
            if run == 2, keys.count > 10 { keys.swapAt(4, 9) }  // a run out of order
            let entries = keys.map { KeyDirectoryModelTests.entry($0, &random, file: file) }
            index.load(sortedEntries: entries)
            for entry in entries { reference.put(entry.key, at: entry.location, blob: entry.blob) }
            lookups += keys.prefix(20)
            // While loading, lookups see the newest run's version.
            for key in lookups { #expect(index[key] == reference.locations[key], "run \(run): \(key)") }
            for key in lookups { #expect(index.blob(forKey: key) == reference.blobs[key], "run \(run): \(key)") }
        }
        #expect(index.entries(in: .all, after: nil, reverse: false, limit: 10).isEmpty)  // not finished yet
        // Replay: a segment's puts and tombstones before finishLoading.
        let segment: UInt64 = 1
        index.noteSegment(segment)
        for _ in 0..<600 {
            let key = KeyTableTests.key(&random)
            if Int.random(in: 0..<3, using: &random) == 0 {
                let size = Int.random(in: 1...50, using: &random)
                index.delete(key, tombstoneIn: segment, recordSize: size, sequence: 7)
                reference.delete(key, segment: segment, recordSize: size, sequence: 7)
            } else {
                let entry = Self.entry(key, &random, file: segment)
                index.put(key, at: entry.location, blob: entry.blob)
                reference.put(key, at: entry.location, blob: entry.blob)
            }
        }
        index.finishLoading()
        Self.expectSame(index, reference, "after loading")

        // Traffic: puts, deletes, flushes (of entries current and stale), files forgotten.
        for step in 0..<3_000 {
            let key =
                Int.random(in: 0..<2, using: &random) == 0
                ? KeyTableTests.key(&random) : reference.locations.keys.randomElement(using: &random) ?? []
            let file = UInt64(2 + step / 1000)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                let entry = Self.entry(key, &random, file: file)
                index.put(key, at: entry.location, blob: entry.blob)
                reference.put(key, at: entry.location, blob: entry.blob)
            case 5..<7:
                let sequence = UInt64(step)
                index.delete(key, tombstoneIn: file, recordSize: 9, sequence: sequence)
                reference.delete(key, segment: file, recordSize: 9, sequence: sequence)
            case 7..<9:
                let current = Bool.random(using: &random) ? reference.locations[key] : nil
                let at = current ?? Self.location(&random, file: file, blob: false)
                let dropped = index.dropFlushed(key, at: at)
                #expect(dropped == reference.dropFlushed(key, at: at))
            default:
                // A flush's batch: ascending keys, most still current, some changed since, some
                // absent.
                var batch = Array(KeyTableTests.sorted(reference.locations.keys).shuffled(using: &random).prefix(40))
                batch += (0..<5).map { _ in KeyTableTests.key(&random) }
                batch = KeyTableTests.sorted(Set(batch))
                // Now and then out of order, which costs more but drops the same.
                if Int.random(in: 0..<4, using: &random) == 0 { batch.reverse() }
                let flushed = batch.map { key in
                    let current = Int.random(in: 0..<4, using: &random) > 0 ? reference.locations[key] : nil
                    return (key: key, location: current ?? Self.location(&random, file: file, blob: false))
                }
                let dropped = Self.withBytes(of: flushed.map(\.key)) { keys in
                    index.dropFlushed(ascending: Array(zip(keys, flushed.map(\.location))))
                }
                #expect(dropped == flushed.filter { reference.dropFlushed($0.key, at: $0.location) }.count)
            }
            if step % 1000 == 999 {
                let range = KeyTableTests.randomRange(&random)
                let reverse = Bool.random(using: &random)
                let cursor = Bool.random(using: &random) ? KeyTableTests.key(&random) : nil
                let limit = Int.random(in: 1...50, using: &random)
                let listed = index.entries(in: range, after: cursor, reverse: reverse, limit: limit)
                let expected = KeyTableTests.expected(
                    KeyTableTests.sorted(reference.locations.keys), range, after: cursor, reverse: reverse, limit: limit)
                #expect(listed.map(\.key) == expected)
                #expect(listed.map(\.location) == expected.map { reference.locations[$0]! })
            }
        }
        Self.expectSame(index, reference, "after traffic")
        let files = Array(reference.usage.keys.filter { !PackFile.isPack($0) })
        index.forgetFiles(files)
        for file in files { reference.usage[file] = nil }
        Self.expectSame(index, reference, "after forgetting files")
    }

    /// A store's one hint, as the record layer writes keys: thousands sharing their first seven
    /// bytes. Lookups while the lone run is pending (open applying a hint's deletes) find each
    /// key and miss absent ones, and the run becomes the table with the same contents.
    @Test func aLoneRunOfKeysSharingTheirPrefixIsSearchedAndBecomesTheTable() {
        var random = SeededGenerator(seed: 7)
        var index = KeyDirectory()
        var reference = Reference()
        let file = PackFile.fileID(1)
        index.noteSegment(file)
        let keys = (0..<6_000).map { bytes("IPost\u{0}date\u{0}\(100_000 + $0 * 2)") }
        let entries = keys.map { Self.entry($0, &random, file: file) }
        index.load(sortedEntries: entries)
        for entry in entries { reference.put(entry.key, at: entry.location, blob: entry.blob) }
        for (number, key) in keys.enumerated() where number % 7 == 0 {
            #expect(index[key] == reference.locations[key], "\(key)")
            let absent = bytes("IPost\u{0}date\u{0}\(100_000 + number * 2 + 1)")
            #expect(index[absent] == nil, "\(absent)")
        }
        for key in keys.prefix(300) {
            index.delete(key, tombstoneIn: file, recordSize: 20, sequence: 3)
            reference.delete(key, segment: file, recordSize: 20, sequence: 3)
        }
        index.finishLoading()
        Self.expectSame(index, reference, "lone run")
    }

    /// Runs that list the same keys (a damaged manifest): the later run wins, and the merge
    /// settles the figures exactly as the dictionary did.
    @Test func overlappingRunsMergeWithTheLaterWinning() {
        var random = SeededGenerator(seed: 99)
        var index = KeyDirectory()
        var reference = Reference()
        let keys = KeyTableTests.sorted(Set((0..<500).map { _ in KeyTableTests.key(&random) }))
        for run in 0..<4 {
            let file = PackFile.fileID(UInt64(run + 1))
            let entries = keys.filter { _ in Bool.random(using: &random) }.map { Self.entry($0, &random, file: file) }
            index.load(sortedEntries: entries)
            for entry in entries { reference.put(entry.key, at: entry.location, blob: entry.blob) }
        }
        index.finishLoading()
        Self.expectSame(index, reference, "merged")
        // Loading after finishLoading merges at once.
        let late = keys.prefix(50).map { Self.entry($0, &random, file: PackFile.fileID(9)) }
        index.load(sortedEntries: late)
        for entry in late { reference.put(entry.key, at: entry.location, blob: entry.blob) }
        Self.expectSame(index, reference, "late run")
    }

    @Test func anEmptyDirectoryListsNothing() {
        var index = KeyDirectory()
        index.load(sortedEntries: [])
        index.finishLoading()
        #expect(index.count == 0)
        #expect(index[[1]] == nil)
        #expect(index.entries(in: .all, after: nil, reverse: true, limit: 5).isEmpty)
        index.delete([1], tombstoneIn: 1, recordSize: 4, sequence: 5)
        #expect(index.usage[1] == SegmentUsage(liveBytes: 0, deadBytes: 4))
        #expect(index.count == 1 && index.liveCount == 0)
        #expect(index[[1]] == .tombstone(in: 1, sequence: 5))
        let stale = index.dropFlushed([1], at: .tombstone(in: 1, sequence: 4))
        #expect(!stale)
        let current = index.dropFlushed([1], at: .tombstone(in: 1, sequence: 5))
        #expect(current)
        #expect(index.count == 0 && index[[1]] == nil && index.keyBytes == 0)
    }
}
