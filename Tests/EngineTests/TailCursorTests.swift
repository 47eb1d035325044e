@testable import Engine
import EngineTestSupport
import Testing

/// The log tail's cursor (``TailCursor``) on its own — seeks, moves both ways across its batch
/// boundaries, direction changes, bounds, an empty tail, commits made while it walks — and the
/// merged scan built on it, against a model, with flushes and merges between and during scans.
@Suite struct TailCursorTests {
    let fs = FaultInjectingFileSystem()

    func open(scanBatchSize: Int? = nil) throws -> LogStore {
        try LogStore.open(
            at: "/tail", options: CompactionTests.options(), fileSystem: fs,
            testHooks: LogStore.TestHooks(scanBatchSize: scanBatchSize))
    }

    static func key(_ number: Int) -> [UInt8] { bytes("k" + String(1000 + number)) }

    /// A store whose tail holds the even keys `0, 2, …, 2 * (count - 1)`.
    func storeWithEvenKeys(_ count: Int, scanBatchSize: Int? = nil) throws -> LogStore {
        let store = try open(scanBatchSize: scanBatchSize)
        try store.write { batch in for n in 0..<count { batch.put(Self.key(2 * n), Self.key(2 * n)) } }
        return store
    }

    /// The keys from the cursor's position on, moving with `next()` (or `previous()`).
    static func walk(_ cursor: inout TailCursor, reverse: Bool = false) throws -> [[UInt8]] {
        var keys: [[UInt8]] = []
        while cursor.isValid {
            keys.append(Array(cursor.key))
            if reverse { try cursor.previous() } else { try cursor.next() }
        }
        return keys
    }

    @Test func walksEveryTailKeyForwardAndBackwardAcrossBatchBoundaries() throws {
        let store = try storeWithEvenKeys(20)
        defer { try? store.close() }
        let all = (0..<20).map { Self.key(2 * $0) }
        for batchSize in [1, 2, 3, 7, 19, 20, 21, 1024] {
            var cursor = TailCursor(store: store, batchSize: batchSize)
            try cursor.seek(to: .unbounded)
            #expect(try Self.walk(&cursor) == all, "batch size \(batchSize)")
            try cursor.seekReverse(to: .unbounded)
            #expect(try Self.walk(&cursor, reverse: true) == all.reversed(), "batch size \(batchSize), reverse")
        }
    }

    @Test func seeksHonourInclusiveAndExclusiveBoundsInsideTheCursorsRange() throws {
        let store = try storeWithEvenKeys(20)
        defer { try? store.close() }
        // The cursor's range: keys 4 ... 30 (inclusive), so k1004 ... k1030.
        let range = LogStore.KeyRange(lower: .inclusive(Self.key(4)), upper: .exclusive(Self.key(31)))
        var cursor = TailCursor(store: store, range: range, batchSize: 3)
        func first(_ bound: LogStore.KeyRange.Bound) throws -> [UInt8]? {
            try cursor.seek(to: bound)
            return cursor.isValid ? Array(cursor.key) : nil
        }
        func last(_ bound: LogStore.KeyRange.Bound) throws -> [UInt8]? {
            try cursor.seekReverse(to: bound)
            return cursor.isValid ? Array(cursor.key) : nil
        }
        #expect(try first(.unbounded) == Self.key(4))
        #expect(try first(.inclusive(Self.key(0))) == Self.key(4), "a bound below the range: the range's first key")
        #expect(try first(.exclusive(Self.key(4))) == Self.key(6))
        #expect(try first(.inclusive(Self.key(10))) == Self.key(10))
        #expect(try first(.exclusive(Self.key(10))) == Self.key(12))
        #expect(try first(.inclusive(Self.key(11))) == Self.key(12), "a bound between keys")
        #expect(try first(.inclusive(Self.key(30))) == Self.key(30))
        #expect(try first(.exclusive(Self.key(30))) == nil, "past the range's last key")
        #expect(try last(.unbounded) == Self.key(30))
        #expect(try last(.inclusive(Self.key(99))) == Self.key(30), "a bound above the range: the range's last key")
        #expect(try last(.inclusive(Self.key(10))) == Self.key(10))
        #expect(try last(.exclusive(Self.key(10))) == Self.key(8))
        #expect(try last(.inclusive(Self.key(9))) == Self.key(8), "a bound between keys")
        #expect(try last(.exclusive(Self.key(4))) == nil, "before the range's first key")
        // Walks stay inside the range whatever the batch boundaries.
        try cursor.seek(to: .exclusive(Self.key(10)))
        #expect(try Self.walk(&cursor) == stride(from: 12, through: 30, by: 2).map(Self.key))
        try cursor.seekReverse(to: .exclusive(Self.key(20)))
        #expect(try Self.walk(&cursor, reverse: true) == stride(from: 18, through: 4, by: -2).map(Self.key))
    }

    /// A random walk of seeks, `next()` and `previous()` against the sorted keys: the cursor is
    /// where the model says, across batch boundaries and direction changes, and invalid exactly
    /// when the model walked off an end.
    @Test func movesAgreeWithTheSortedKeysThroughRandomDirectionChanges() throws {
        let store = try storeWithEvenKeys(25)
        defer { try? store.close() }
        let keys = (0..<25).map { Self.key(2 * $0) }
        var random = SeededGenerator(seed: 3)
        for batchSize in [1, 2, 3, 5, 8] {
            var cursor = TailCursor(store: store, batchSize: batchSize)
            var position: Int?  // the model: an index into `keys`, nil when invalid
            for step in 0..<400 {
                if position == nil || Int.random(in: 0..<25, using: &random) == 0 {
                    let target = Int.random(in: 0...50, using: &random)
                    let inclusive = Bool.random(using: &random)
                    let bound: LogStore.KeyRange.Bound = inclusive ? .inclusive(Self.key(target)) : .exclusive(Self.key(target))
                    if Bool.random(using: &random) {
                        try cursor.seek(to: bound)
                        let index = keys.firstIndex {
                            inclusive ? !$0.lexicographicallyPrecedes(Self.key(target)) : Self.key(target).lexicographicallyPrecedes($0)
                        }
                        position = index
                    } else {
                        try cursor.seekReverse(to: bound)
                        let index = keys.lastIndex {
                            inclusive ? !Self.key(target).lexicographicallyPrecedes($0) : $0.lexicographicallyPrecedes(Self.key(target))
                        }
                        position = index
                    }
                } else if Bool.random(using: &random) {
                    try cursor.next()
                    position = position! + 1 < keys.count ? position! + 1 : nil
                } else {
                    try cursor.previous()
                    position = position! > 0 ? position! - 1 : nil
                }
                #expect(cursor.isValid == (position != nil), "batch size \(batchSize) step \(step)")
                if let position, cursor.isValid {
                    #expect(Array(cursor.key) == keys[position], "batch size \(batchSize) step \(step)")
                }
            }
        }
    }

    @Test func anEmptyTailLeavesTheCursorInvalidAfterEverySeek() throws {
        let store = try open()
        defer { try? store.close() }
        var cursor = TailCursor(store: store, batchSize: 2)
        try cursor.seek(to: .unbounded)
        #expect(!cursor.isValid)
        try cursor.next()
        #expect(!cursor.isValid, "moving an invalid cursor leaves it invalid")
        try cursor.seekReverse(to: .inclusive(Self.key(5)))
        #expect(!cursor.isValid)
        // Keys flushed into a table leave the tail empty again; a range with no tail keys is empty too.
        try store.write { batch in for n in 0..<10 { batch.put(Self.key(n), [1]) } }
        try store.flushForTesting()
        try cursor.seek(to: .unbounded)
        #expect(!cursor.isValid, "every key is in a table now")
        try store.write { batch in batch.put(Self.key(3), [2]) }
        var narrow = TailCursor(store: store, range: LogStore.KeyRange(lower: .exclusive(Self.key(3))), batchSize: 2)
        try narrow.seek(to: .unbounded)
        #expect(!narrow.isValid)
        try narrow.seekReverse(to: .unbounded)
        #expect(!narrow.isValid)
    }

    @Test func aDeleteInTheTailIsAnEntryWithATombstoneAndValuesReadOnlyWhenAsked() throws {
        let store = try storeWithEvenKeys(4)
        defer { try? store.close() }
        try store.write { batch in batch.delete(Self.key(2)) }
        var cursor = TailCursor(store: store, batchSize: 1)
        try cursor.seek(to: .inclusive(Self.key(2)))
        #expect(Array(cursor.key) == Self.key(2))
        #expect(cursor.item.location.isTombstone)
        #expect(cursor.file == nil)
        try cursor.next()
        #expect(Array(cursor.key) == Self.key(4))
        let file = try #require(cursor.file, "a value's segment is held")
        let value = try store.lendValue(at: cursor.item.location, from: file) { Array($0) }
        #expect(value == Self.key(4))
    }

    @Test func readsNoMoreKeysThanItsReaderWants() throws {
        let store = try storeWithEvenKeys(100)
        defer { try? store.close() }
        var cursor = TailCursor(store: store, batchSize: 1024)
        cursor.wanted = 5
        try cursor.seek(to: .unbounded)
        #expect(cursor.bufferedCount == 5)
        for _ in 0..<5 { try cursor.next() }
        #expect(Array(cursor.key) == Self.key(10), "the next batch follows")
        #expect(cursor.bufferedCount == 5)
        // A scan's first batch is bounded by its limit.
        let scan = try store.scan(limit: 50)
        #expect(scan.bufferedTailKeys == 50)
        #expect(try scan.collect().count == 50)
    }

    /// Commits while the cursor walks: a key committed behind it is not met (no key twice), one
    /// committed ahead of it is met when the batch it falls in is read after the commit, and not
    /// when that batch was read before.
    @Test func aKeyCommittedBehindTheCursorIsNotMetAndOneAheadIsMetFromALaterBatch() throws {
        let store = try storeWithEvenKeys(10)  // 0, 2, ..., 18
        defer { try? store.close() }
        var cursor = TailCursor(store: store, batchSize: 3)
        try cursor.seek(to: .unbounded)  // batch 0 2 4
        var seen = [Array(cursor.key)]
        try cursor.next()
        seen.append(Array(cursor.key))  // 2
        try store.write { batch in
            batch.put(Self.key(1), [1])  // behind
            batch.put(Self.key(3), [1])  // ahead, in the batch read already
            batch.put(Self.key(9), [1])  // ahead, in a batch not read yet
        }
        try cursor.next()
        while cursor.isValid {
            seen.append(Array(cursor.key))
            try cursor.next()
        }
        #expect(seen == [0, 2, 4, 6, 8, 9, 10, 12, 14, 16, 18].map(Self.key))
        // Backward too: 17 falls in the batch read already, 11 in one not read yet.
        var back = TailCursor(store: store, batchSize: 3)
        try back.seekReverse(to: .unbounded)  // 18 16 14
        var down = [Array(back.key)]
        try store.write { batch in
            batch.put(Self.key(17), [1])
            batch.put(Self.key(11), [1])
        }
        try back.previous()
        while back.isValid {
            down.append(Array(back.key))
            try back.previous()
        }
        #expect(down == [18, 16, 14, 12, 11, 10, 9, 8, 6, 4, 3, 2, 1, 0].map(Self.key))
    }

    /// Scans over small tail batches while commits insert, delete and overwrite keys behind and
    /// ahead of them, and flushes move the tail into tables mid-scan: keys strictly ordered,
    /// each once, every key untouched throughout returned with its value.
    @Test func aScanAcrossSmallTailBatchesDuringCommitsAndFlushesSeesEachUntouchedKeyOnce() throws {
        let store = try open(scanBatchSize: 4)
        defer { try? store.close() }
        var random = SeededGenerator(seed: 5)
        try store.write { batch in for n in stride(from: 0, to: 400, by: 2) { batch.put(Self.key(n), Self.key(n)) } }
        try store.flushForTesting()
        var touched = Set<[UInt8]>()  // keys some commit changed (whose value is no longer the key)
        for reverse in [false, true] {
            // A tail of many batches over the table, of keys new to each direction.
            try store.write { batch in
                for n in stride(from: reverse ? 3 : 1, to: 400, by: 4) where !touched.contains(Self.key(n)) { batch.put(Self.key(n), Self.key(n)) }
            }
            var present = Set(try store.scan().collect().map(\.key))
            var seen: [[UInt8]] = []
            var scan = try store.scan(reverse: reverse)
            while let entry = try scan.next() {
                seen.append(entry.key)
                if !touched.contains(entry.key) { #expect(try entry.value() == entry.key) }
                if seen.count % 120 == 60 { try store.flushForTesting() }
                switch seen.count % 9 {
                case 0:
                    try store.write { batch in
                        for _ in 0..<6 {
                            let key = Self.key(Int.random(in: 0..<400, using: &random))
                            touched.insert(key)
                            if Bool.random(using: &random) { batch.delete(key) } else { batch.put(key, [0]) }
                        }
                    }
                default: break
                }
            }
            let ordered = zip(seen, seen.dropFirst()).allSatisfy { reverse ? $1.lexicographicallyPrecedes($0) : $0.lexicographicallyPrecedes($1) }
            #expect(ordered, "reverse \(reverse): keys out of order or repeated")
            present.subtract(touched)
            #expect(present.isSubset(of: Set(seen)), "reverse \(reverse): \(present.subtracting(Set(seen)).count) untouched keys skipped")
        }
    }

    /// Random puts and deletes, flushes and merges between them; then scans of random ranges,
    /// limits and directions, some with uncommitted writes laid over them, some with a flush or a
    /// compaction while they run (which changes nothing they should return), each against a
    /// dictionary.
    @Test func theMergedScanAgreesWithAModelAcrossFlushesAndMerges() throws {
        var options = CompactionTests.options()
        options.compaction = .manual
        for batchSize in [2, 5] {
            let fs = FaultInjectingFileSystem()
            let store = try LogStore.open(
                at: "/model", options: options, fileSystem: fs, testHooks: LogStore.TestHooks(scanBatchSize: batchSize))
            defer { try? store.close() }
            var random = SeededGenerator(seed: UInt64(batchSize))
            var model: [[UInt8]: [UInt8]] = [:]
            for round in 0..<30 {
                try store.write { batch in
                    for _ in 0..<Int.random(in: 1...30, using: &random) {
                        let key = Self.key(Int.random(in: 0..<120, using: &random))
                        if Int.random(in: 0..<4, using: &random) == 0 {
                            batch.delete(key)
                            model[key] = nil
                        } else {
                            let value = bytes("\(round)")
                            batch.put(key, value)
                            model[key] = value
                        }
                    }
                }
                switch Int.random(in: 0..<6, using: &random) {
                case 0: try store.flushForTesting()
                case 1: try store.mergeDueForTesting()
                case 2: _ = try store.compact()
                default: break
                }
                for query in 0..<6 {
                    let lower = Self.randomBound(&random)
                    let upper = Self.randomBound(&random)
                    let range = LogStore.KeyRange(lower: lower, upper: upper)
                    let limit = [nil, 1, 3, 10, 50][Int.random(in: 0...4, using: &random)]
                    let reverse = Bool.random(using: &random)
                    // Half the scans lay a few uncommitted writes over the store.
                    var overlay: [LogStore.Scan.OverlayEntry] = []
                    var seen = model
                    if Bool.random(using: &random) {
                        for _ in 0..<Int.random(in: 1...6, using: &random) {
                            let key = Self.key(Int.random(in: 0..<120, using: &random))
                            let value: [UInt8]? = Bool.random(using: &random) ? nil : bytes("overlay")
                            overlay.append(LogStore.Scan.OverlayEntry(key: key, value: value))
                            if range.contains(key) { seen[key] = value }
                        }
                    }
                    var want = seen.keys.filter { range.contains($0) }.sorted { $0.lexicographicallyPrecedes($1) }
                    if reverse { want.reverse() }
                    want = Array(want.prefix(limit ?? .max))
                    var scan = try store.scan(range, limit: limit, reverse: reverse, overlay: overlay)
                    var got: [[UInt8]] = []
                    var values: [[UInt8]] = []
                    let interruption = Int.random(in: 0..<8, using: &random)
                    while let entry = try scan.next() {
                        got.append(entry.key)
                        values.append(try entry.value())
                        if got.count == 3, interruption == 0 { try store.flushForTesting() }
                        if got.count == 3, interruption == 1 { _ = try store.compact() }
                    }
                    let matches = got == want && values == want.map { seen[$0]! }
                    #expect(
                        matches,
                        "batch \(batchSize) round \(round) query \(query): \(got.count) keys where \(want.count) expected; \(range) limit \(String(describing: limit)) reverse \(reverse) interruption \(interruption)"
                    )
                }
            }
        }
    }

    static func randomBound(_ random: inout SeededGenerator) -> LogStore.KeyRange.Bound {
        let key = Self.key(Int.random(in: 0..<120, using: &random))
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return .unbounded
        case 1: return .inclusive(key)
        case 2: return .exclusive(key)
        default: return .inclusive(key + [0x2F])
        }
    }
}
