import CAllocationCounter
@testable import Engine
import EngineTestSupport
import Testing

/// Reads on borrowed bytes: a scan's `withNext` and the point and batched reads' `withValue`
/// lend keys and values in place, agree with the copying calls, and allocate nothing per entry
/// once the blocks they read are cached.
@Suite struct BorrowedReadTests {
    static func key(_ n: Int) -> [UInt8] { bytes("key/" + String(100_000 + n)) }
    static func value(_ n: Int, _ version: Int = 0) -> [UInt8] {
        [UInt8](repeating: UInt8(truncatingIfNeeded: n &+ version), count: 20 + n % 50)
    }

    /// A store of `count` keys compacted into one table, every block then read once (cached).
    static func compactedStore(_ fs: FaultInjectingFileSystem, count: Int) throws -> LogStore {
        let store = try LogStore.open(at: "/borrowed", options: CompactionTests.options(), fileSystem: fs)
        try store.write { batch in for n in 0..<count { batch.put(key(n), value(n)) } }
        _ = try store.compact()
        #expect(store.statistics.tables.count == 1)
        var warm = try store.scan()
        while try warm.withNext({ _ in }) != nil {}
        return store
    }

    /// Counts the allocations `body` makes on this thread.
    static func allocations(_ body: () throws -> Void) rethrows -> Int {
        walstore_allocations_start()
        defer { _ = walstore_allocations_stop() }
        try body()
        return walstore_allocations_stop()
    }

    @Test func aWarmBorrowedScanAllocatesNothingPerEntry() throws {
        try #require(walstore_allocations_available() == 1, "this build has the allocation counter")
        let fs = FaultInjectingFileSystem()
        let store = try Self.compactedStore(fs, count: 5000)
        defer { try? store.close() }
        func scanCount(_ limit: Int, reverse: Bool) throws -> (entries: Int, allocations: Int) {
            var entries = 0
            var total = 0
            let allocations = try Self.allocations {
                var scan = try store.scan(limit: limit, reverse: reverse)
                while let length = try scan.withNext({ (entry) throws(EngineError) in try entry.withValue { $0.count + entry.key.count } }) {
                    total += length
                    entries += 1
                }
            }
            #expect(total > 0)
            return (entries, allocations)
        }
        for reverse in [false, true] {
            let few = try scanCount(50, reverse: reverse)
            let all = try scanCount(5000, reverse: reverse)
            #expect(few.entries == 50 && all.entries == 5000)
            // The scan itself allocates its cursors; the 4,950 entries more, nothing.
            #expect(all.allocations <= few.allocations + 2, "reverse \(reverse): \(few.allocations) for 50, \(all.allocations) for 5,000")
        }
    }

    @Test func aBorrowedScanOfTheLogsTailAllocatesPerBatchNotPerEntry() throws {
        try #require(walstore_allocations_available() == 1, "this build has the allocation counter")
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: "/borrowed", options: CompactionTests.options(), fileSystem: fs)
        defer { try? store.close() }
        try store.write { batch in for n in 0..<5000 { batch.put(Self.key(n), Self.value(n)) } }
        #expect(store.statistics.tables.isEmpty, "every key is in the tail")
        func scan(_ limit: Int) throws -> Int {
            var total = 0
            let allocations = try Self.allocations {
                var scan = try store.scan(limit: limit)
                while let length = try scan.withNext({ (entry) throws(EngineError) in try entry.withValue { $0.count + entry.key.count } }) {
                    total += length
                }
            }
            #expect(total > 0)
            return allocations
        }
        _ = try scan(5000)  // every log block cached
        let one = try scan(1000)  // one batch
        let five = try scan(5000)  // five batches
        // Each batch allocates its key buffer, its item list and the like; its 1,000 entries and
        // their values (lent from the cached log blocks) nothing.
        #expect(five <= 5 * one + 5, "\(one) allocations for one batch of 1,000 entries, \(five) for five")
        #expect(one < 50, "\(one) allocations for 1,000 entries")
    }

    @Test func cachedPointReadsLendTheValueAndAllocateNothingPerRead() throws {
        try #require(walstore_allocations_available() == 1, "this build has the allocation counter")
        let fs = FaultInjectingFileSystem()
        let store = try Self.compactedStore(fs, count: 3000)
        defer { try? store.close() }
        let keys = (0..<3000).map { Self.key(($0 &* 7919) % 3000) }
        func read(_ count: Int) throws -> Int {
            var sum = 0
            let allocations = try Self.allocations {
                for i in 0..<count {
                    let length: Int? = try store.withValue(forKey: keys[i]) { (bytes: UnsafeRawBufferPointer) -> Int in bytes.count }
                    sum += length ?? 0
                }
            }
            #expect(sum > 0)
            return allocations
        }
        _ = try read(3000)  // every block cached
        let few = try read(10)
        let many = try read(3000)
        #expect(many <= few + 2, "\(few) allocations for 10 reads, \(many) for 3,000")
    }

    @Test func borrowedAndCopyingReadsAgreeOverATailAndSeveralTables() throws {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: "/borrowed", options: CompactionTests.options(), fileSystem: fs)
        defer { try? store.close() }
        var model: [[UInt8]: [UInt8]] = [:]
        var random = SeededGenerator(seed: 32)
        // Three tables and a tail, each overwriting and deleting keys of the ones before, and a
        // blob among them.
        for round in 0..<4 {
            try store.write { batch in
                for _ in 0..<400 {
                    let n = Int(random.next() % 1000)
                    if random.next() % 5 == 0 {
                        batch.delete(Self.key(n))
                        model[Self.key(n)] = nil
                    } else {
                        let value = Self.value(n, round)
                        batch.put(Self.key(n), value)
                        model[Self.key(n)] = value
                    }
                }
                let blob = [UInt8](repeating: 7, count: 5000)
                batch.put(Self.key(2000 + round), blob)
                model[Self.key(2000 + round)] = blob
            }
            if round < 3 { _ = try store.flushForTesting() }
        }
        #expect(store.statistics.tables.count == 3)
        let sorted = model.keys.sorted { compareBytes($0, $1) < 0 }
        let ranges: [LogStore.KeyRange] = [
            .all, .prefix(bytes("key/1002")),
            LogStore.KeyRange(lower: .exclusive(Self.key(100)), upper: .inclusive(Self.key(700))),
            LogStore.KeyRange(lower: .inclusive(Self.key(999)), upper: .exclusive(Self.key(2002))),
        ]
        for range in ranges {
            for reverse in [false, true] {
                var expected = sorted.filter(range.contains)
                if reverse { expected.reverse() }
                var borrowed: [([UInt8], [UInt8])] = []
                var scan = try store.scan(range, reverse: reverse)
                while let pair = try scan.withNext({ (entry) throws(EngineError) in (Array(entry.key), try entry.value()) }) { borrowed.append(pair) }
                #expect(borrowed.map(\.0) == expected, "range \(range), reverse \(reverse)")
                #expect(borrowed.allSatisfy { model[$0.0] == $0.1 })
                let copied = try store.scan(range, reverse: reverse).collect()
                #expect(copied.map(\.key) == expected)
                #expect(try copied.allSatisfy { try model[$0.key] == $0.value() })
                // A limit stops the merge where it says.
                let limited = try store.scan(range, limit: 7, reverse: reverse).collect().map(\.key)
                #expect(limited == Array(expected.prefix(7)))
            }
        }
        // Point and batched reads, lent and copied.
        let asked = (0..<1100).map { Self.key($0) } + [Self.key(2001), Self.key(5)]
        let copied = try store.values(forKeys: asked)
        var lent = [[UInt8]?](repeating: [0xFF], count: asked.count)
        try store.withValues(forKeys: asked) { position, value in lent[position] = value.map { Array($0) } }
        #expect(lent == copied)
        #expect(copied == asked.map { model[$0] })
        for key in asked.prefix(300) {
            #expect(try store.withValue(forKey: key) { (bytes: UnsafeRawBufferPointer) in Array(bytes) } == model[key])
        }
    }

    @Test func aScanLargerThanTheBlockCacheLeavesThePointReadsWorkingSetCached() throws {
        var options = CompactionTests.options()
        options.tableCacheCapacity = 256 << 10
        options.compressionLevel = 0
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: "/borrowed", options: options, fileSystem: fs)
        defer { try? store.close() }
        // About 1 MiB of table: four times the cache.
        try store.write { batch in for n in 0..<10_000 { batch.put(Self.key(n), [UInt8](repeating: 1, count: 100)) } }
        _ = try store.compact()
        // The working set: 20 keys, read twice each (the second read protects their blocks).
        let hot = (0..<20).map { Self.key($0 * 97) }
        for _ in 0..<2 { for key in hot { _ = try store.value(forKey: key) } }
        var scan = try store.scan()
        while try scan.withNext({ _ in }) != nil {}
        let reads = fs.readCount
        for key in hot { _ = try store.value(forKey: key) }
        #expect(fs.readCount == reads, "the hot keys' blocks survived the scan")
        // Without the protected segment the scan would have evicted them: a second scan still
        // has to read most of its blocks.
        let beforeRescan = fs.readCount
        var again = try store.scan()
        while try again.withNext({ _ in }) != nil {}
        #expect(fs.readCount - beforeRescan > 100, "a scan four times the cache does not stay cached")
    }
}
