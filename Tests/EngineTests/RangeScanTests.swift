import Engine
import EngineTestSupport
import Testing

/// `scan(_:limit:reverse:)` against a sorted reference, and what a scan sees while commits run.
@Suite struct RangeScanTests {
    let fs = FaultInjectingFileSystem()

    func open() throws -> LogStore {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        return try LogStore.open(at: "/range", options: options, fileSystem: fs)
    }

    static func key(_ number: Int) -> [UInt8] { bytes("k" + String(number).leftPadded(to: 5)) }

    /// A random bound over keys like those in the store, sometimes between two of them.
    static func bound(_ random: inout SeededGenerator) -> LogStore.KeyRange.Bound {
        let edge = key(Int.random(in: 0..<3200, using: &random)) + (Bool.random(using: &random) ? [] : [0x2F])
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return .unbounded
        case 1, 2: return .inclusive(edge)
        default: return .exclusive(edge)
        }
    }

    /// The reference answer: the model's keys in the range, ordered, cut at the limit.
    static func expected(
        _ model: [[UInt8]: UInt64], _ range: LogStore.KeyRange, limit: Int?, reverse: Bool
    ) -> [[UInt8]] {
        func inRange(_ key: [UInt8]) -> Bool {
            let lower: Bool
            switch range.lower {
            case .unbounded: lower = true
            case .inclusive(let b): lower = !key.lexicographicallyPrecedes(b)
            case .exclusive(let b): lower = b.lexicographicallyPrecedes(key)
            }
            let upper: Bool
            switch range.upper {
            case .unbounded: upper = true
            case .inclusive(let b): upper = !b.lexicographicallyPrecedes(key)
            case .exclusive(let b): upper = key.lexicographicallyPrecedes(b)
            }
            return lower && upper
        }
        var keys = model.keys.filter(inRange).sorted { $0.lexicographicallyPrecedes($1) }
        if reverse { keys.reverse() }
        return Array(keys.prefix(limit ?? .max))
    }

    /// Random commits, then random ranges (open, inclusive and exclusive ends, empty and inverted
    /// ranges), limits around the batch size, both directions; with a reopen in the middle, so
    /// the index is scanned both as commits built it and as open loaded it.
    @Test func rangeScansMatchASortedModelInBothDirectionsAcrossBatches() throws {
        var random = SeededGenerator(seed: 7)
        var store = try open()
        var model: [[UInt8]: UInt64] = [:]
        for round in 0..<6 {
            var batch = WriteBatch()
            for _ in 0..<900 {
                let key = Self.key(Int.random(in: 0..<3200, using: &random))
                if Int.random(in: 0..<5, using: &random) == 0 {
                    batch.delete(key)
                    model[key] = nil
                } else {
                    batch.put(key, Array(key.reversed()))
                    model[key] = 0
                }
            }
            try store.commit(batch)
            if round == 3 {
                try store.close()
                store = try open()
            }
            for query in 0..<40 {
                let range = LogStore.KeyRange(lower: Self.bound(&random), upper: Self.bound(&random))
                let limit = [nil, 0, 1, 7, 1023, 1024, 1025, 2049][Int.random(in: 0...7, using: &random)]
                let reverse = Bool.random(using: &random)
                let scan = try store.scan(range, limit: limit, reverse: reverse)
                let want = Self.expected(model, range, limit: limit, reverse: reverse)
                let got = try scan.collect().map(\.key)
                let matches = got == want  // compared apart, so a failure prints counts, not keys
                #expect(
                    matches,
                    "round \(round) query \(query): \(got.count) keys where \(want.count) were expected; limit \(String(describing: limit)) reverse \(reverse)"
                )
                // A copy taken before iterating gives the same answer (nothing changed meanwhile).
                let again = try scan.collect().map(\.key) == got
                #expect(again, "round \(round) query \(query): second iteration differs")
                var cursor = scan
                if let first = try cursor.next() {
                    #expect(try first.value() == Array(first.key.reversed()))
                }
            }
        }
        let all = (try store.scan(.all).collect())
        #expect(all.count == model.count)
        #expect(all.count > 2 * LogStore.Scan.batchSize, "the workload must span several batches")
        for entry in all { #expect(try entry.value() == Array(entry.key.reversed())) }
    }

    @Test func prefixRangeEndsAtTheFirstKeyPastThePrefix() throws {
        let store = try open()
        let keys: [[UInt8]] = [[0x61], [0x61, 0xFF], [0x61, 0xFF, 0xFF, 0x01], [0x62], [0xFF], [0xFF, 0xFF, 0x00], [0xFF, 0xFF]]
        try store.write { batch in for key in keys { batch.put(key, key) } }
        #expect(try store.scan(.prefix([0x61, 0xFF])).collect().map(\.key) == [[0x61, 0xFF], [0x61, 0xFF, 0xFF, 0x01]])
        #expect(try store.scan(.prefix([0xFF, 0xFF])).collect().map(\.key) == [[0xFF, 0xFF], [0xFF, 0xFF, 0x00]])
        #expect(try store.scan(prefix: [0x61]).collect().map(\.key) == Array(keys[0...2]))
        #expect(try store.scan(prefix: []).collect().map(\.key).count == keys.count)
        #expect(LogStore.KeyRange.prefix([0x61, 0xFF]) == LogStore.KeyRange(lower: .inclusive([0x61, 0xFF]), upper: .exclusive([0x62])))
        #expect(LogStore.KeyRange.prefix([0x61, 0xFF]).contains([0x61, 0xFF, 0xFF]))
        #expect(!LogStore.KeyRange.prefix([0x61, 0xFF]).contains([0x62]))
    }

    @Test func aScansValuesDoNotFillTheValueCacheButPointReadsDo() throws {
        var store = try open()
        try store.write { batch in for n in 0..<200 { batch.put(Self.key(n), Array(repeating: UInt8(n % 251), count: 100)) } }
        try store.close()
        store = try open()
        var scanned = 0
        for (n, entry) in try store.scan(prefix: Array(Self.key(0).prefix(1))).collect().enumerated() {
            #expect(try entry.value() == Array(repeating: UInt8(n % 251), count: 100))
            scanned += 1
        }
        #expect(scanned == 200)
        #expect(store.statistics.cacheBytes == 0, "a scan reads through the block cache and leaves the value cache alone")
        _ = try store.value(forKey: Self.key(7))
        _ = try store.value(forKey: Self.key(7))
        #expect(store.statistics.cacheBytes > 0 && store.statistics.cacheHits == 1, "a point read fills it")
        try store.close()
    }

    @Test func negativeLimitIsRefused() throws {
        let store = try open()
        #expect { try store.scan(limit: -1) } throws: { ($0 as? EngineError)?.code == .invalidArgument }
    }

    /// While commits insert, overwrite and delete keys both behind and ahead of a long scan: keys
    /// come strictly in order and at most once, every key left alone throughout is returned with
    /// its value, and every entry is a version that was committed.
    @Test func aScanDuringCommitsReturnsEveryUntouchedKeyInOrderOnce() throws {
        var random = SeededGenerator(seed: 11)
        let store = try open()
        let initial = 5000
        try store.write { batch in
            for number in stride(from: 0, to: 2 * initial, by: 2) { batch.put(Self.key(number), bytes("v0")) }
        }
        var touched = Set<[UInt8]>()
        var written: [[UInt8]: Set<[UInt8]>] = [:]  // every value each key ever had
        for number in stride(from: 0, to: 2 * initial, by: 2) { written[Self.key(number), default: []].insert(bytes("v0")) }
        for reverse in [false, true] {
            var seen: [[UInt8]] = []
            var cursor = try store.scan(reverse: reverse)
            var round = 1
            while let entry = try cursor.next() {
                seen.append(entry.key)
                #expect(written[entry.key]?.contains(try entry.value()) == true, "\(entry.key) has a value never written")
                guard seen.count % 700 == 0 else { continue }
                round += 1
                try store.write { batch in
                    for _ in 0..<50 {
                        let key = Self.key(Int.random(in: 0..<(2 * initial), using: &random))
                        touched.insert(key)
                        if Bool.random(using: &random) {
                            batch.delete(key)
                        } else {
                            let value = bytes("v\(round)")
                            batch.put(key, value)
                            written[key, default: []].insert(value)
                        }
                    }
                }
            }
            let ordered = zip(seen, seen.dropFirst()).allSatisfy { reverse ? $1.lexicographicallyPrecedes($0) : $0.lexicographicallyPrecedes($1) }
            #expect(ordered, "reverse \(reverse): keys out of order or repeated")
            let untouched = Set(stride(from: 0, to: 2 * initial, by: 2).map(Self.key)).subtracting(touched)
            #expect(untouched.isSubset(of: Set(seen)), "reverse \(reverse): an untouched key was skipped")
            #expect(round > 5, "the scan must have run across several commits")
        }
    }

    /// A scan of at most one batch is read in one step: commits after `scan` returns are not seen.
    @Test func aScanOfOneBatchSeesTheStoreAsItWasWhenItBegan() throws {
        let store = try open()
        try store.write { batch in for number in 0..<10 { batch.put(Self.key(number), bytes("old")) } }
        let scan = try store.scan(limit: 10)
        try store.write { batch in
            batch.delete(Self.key(0))
            batch.put(Self.key(5), bytes("new"))
        }
        #expect(try scan.collect().map(\.key) == (0..<10).map(Self.key))
        #expect(try scan.collect().map { try $0.value() } == Array(repeating: bytes("old"), count: 10))
    }

    /// Closing the store does not cut a scan short without a word: it still lists every key, and
    /// a value it had not reached throws `closed`.
    @Test func aScanAfterCloseListsItsKeysAndRefusesUnreadValues() throws {
        let store = try open()
        let count = LogStore.Scan.batchSize + 10
        try store.write { batch in for number in 0..<count { batch.put(Self.key(number), bytes("v")) } }
        let scan = try store.scan()
        try store.close()
        let entries = try scan.collect()
        #expect(entries.count == count)
        #expect(try entries[0].value() == bytes("v"), "the first batch holds its files")
        #expect { try entries[count - 1].value() } throws: { ($0 as? EngineError)?.code == .closed }
        #expect { try store.scan() } throws: { ($0 as? EngineError)?.code == .closed }
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}
