@testable import Engine
import EngineTestSupport
import Testing

/// The in-memory index's parts against plain reference implementations.
@Suite struct IndexTests {
    @Test func sortedKeysMatchASortedSetUnderRandomInsertsAndRemoves() {
        var random = SeededGenerator(seed: 42)
        var keys = SortedKeys()
        var reference = Set<[UInt8]>()
        for step in 0..<20_000 {
            let key = random.bytes(Int.random(in: 1...3, using: &random)).map { $0 % 8 }
            if Int.random(in: 0..<3, using: &random) == 0 {
                keys.remove(key)
                reference.remove(key)
            } else {
                keys.insert(key)
                reference.insert(key)
            }
            if step % 1000 == 0 {
                let prefix = random.bytes(Int.random(in: 0...2, using: &random)).map { $0 % 8 }
                let expected = reference.filter { $0.starts(with: prefix) }.sorted { $0.lexicographicallyPrecedes($1) }
                #expect(keys.keys(withPrefix: prefix) == expected, "step \(step)")
            }
        }
        #expect(keys.count == reference.count)
        #expect(keys.keys(withPrefix: []) == reference.sorted { $0.lexicographicallyPrecedes($1) })
    }

    /// Keys of 6 to 12 bytes over {0, 1}: most share their first eight bytes (or differ only in
    /// padding), so the searches must fall back from the integer prefixes to the whole keys.
    @Test func sortedKeysOrderKeysThatShareTheirFirstEightBytes() {
        var random = SeededGenerator(seed: 77)
        var keys = SortedKeys()
        var reference = Set<[UInt8]>()
        for _ in 0..<6_000 {
            let key = random.bytes(Int.random(in: 6...12, using: &random)).map { $0 % 2 }
            if Int.random(in: 0..<4, using: &random) == 0 {
                keys.remove(key)
                reference.remove(key)
            } else {
                keys.insert(key)
                reference.insert(key)
            }
        }
        #expect(keys.count == reference.count)
        #expect(keys.keys(withPrefix: []) == reference.sorted { $0.lexicographicallyPrecedes($1) })
        let prefix: [UInt8] = [1, 0, 1, 1, 0, 0, 1, 0, 1]
        #expect(keys.keys(withPrefix: prefix) == reference.filter { $0.starts(with: prefix) }.sorted { $0.lexicographicallyPrecedes($1) })
    }

    @Test func sortedKeysBulkLoadEqualsIncrementalInserts() {
        var random = SeededGenerator(seed: 9)
        let all = (0..<5000).map { _ in random.bytes(4) }
        var incremental = SortedKeys()
        for key in all { incremental.insert(key) }
        let bulk = SortedKeys(sorted: Array(Set(all)).sorted { compareBytes($0, $1) < 0 })
        #expect(bulk.keys(withPrefix: []) == incremental.keys(withPrefix: []))
        #expect(bulk.count == incremental.count)
    }

    @Test func valueCacheEvictsTheLeastRecentlyUsedWithinItsCapacity() {
        var cache = ValueCache(capacity: 8 * (100 + 1 + 96))
        let value = [UInt8](repeating: 1, count: 100)
        for i in 0..<8 { cache.insert(value, forKey: HashedKey([UInt8(i)]), tag: 1, keyCost: 1) }
        #expect(cache.count == 8)
        _ = cache.value(forKey: HashedKey([0]), tag: 1)  // 0 becomes most recent; 1 is now the oldest
        cache.insert(value, forKey: HashedKey([8]), tag: 1, keyCost: 1)
        #expect(cache.value(forKey: HashedKey([1]), tag: 1) == nil)
        #expect(cache.value(forKey: HashedKey([0]), tag: 1) == value)
        #expect(cache.bytes <= cache.capacity)
    }

    @Test func valueCacheNeverReturnsAnotherVersion() {
        var cache = ValueCache(capacity: 1 << 20)
        cache.insert([1], forKey: HashedKey([7]), tag: 3)
        #expect(cache.value(forKey: HashedKey([7]), tag: 4) == nil)
        #expect(cache.value(forKey: HashedKey([7]), tag: 3) == [1])
    }

    @Test func varintsRoundTripAndRejectOverlongOrOversizedInput() {
        for value in [0, 1, 127, 128, 300, 16_383, 16_384, 65_535, 1 << 28] {
            var writer = ByteWriter()
            writer.appendVarint(value)
            var reader = ByteReader(writer.bytes[...])
            #expect(reader.readVarint(limit: 1 << 28) == value)
            #expect(reader.isAtEnd)
        }
        var tooBig = ByteReader([0xFF, 0xFF, 0x04][...])
        #expect(tooBig.readVarint(limit: 65_535) == nil)
        var overlong = ByteReader([0x80, 0x80, 0x80, 0x80, 0x80, 0x01][...])
        #expect(overlong.readVarint(limit: Int.max) == nil)
        var truncated = ByteReader([0x80][...])
        #expect(truncated.readVarint(limit: Int.max) == nil)
    }

    @Test func byteOrderAgreesWithLexicographicOrderForKeysOfAnyLength() {
        var random = SeededGenerator(seed: 3)
        for _ in 0..<20_000 {
            // A small alphabet and a shared start, so ties in the first eight bytes are common.
            let a = [1, 2, 3] + random.bytes(Int.random(in: 0...14, using: &random)).map { $0 % 3 }
            let b = [1, 2, 3] + random.bytes(Int.random(in: 0...14, using: &random)).map { $0 % 3 }
            let expected = a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
            #expect(compareBytes(a, b).signum() == expected, "\(a) vs \(b)")
        }
    }

    @Test func byteOrderIsLexicographicWithShorterFirst() {
        #expect(compareBytes([1, 2], [1, 2, 0]) < 0)
        #expect(compareBytes([1, 3], [1, 2, 9]) > 0)
        #expect(compareBytes([], []) == 0)
        #expect(compareBytes([0xFF], [0x00, 0x01]) > 0)
    }
}

extension SortedKeys {
    /// Every key under `prefix`, in order.
    func keys(withPrefix prefix: [UInt8]) -> [[UInt8]] {
        keys(in: .prefix(prefix), after: nil, reverse: false, limit: .max)
    }
}
