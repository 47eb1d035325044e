@testable import Engine
import EngineTestSupport
import Testing

/// A commit's keys go into the tail's index as one sorted batch (`KeyDirectory.apply(_:)`,
/// `KeyTable.updateValues(_:replaced:)`), which must leave the index exactly as applying them one
/// at a time does.
@Suite struct BatchedIndexTests {
    /// Random keys over a small space (so that batches repeat keys and hit present ones), sharing
    /// their first seven bytes often, from the empty key to keys with long tails.
    static func key(_ random: inout SeededGenerator, space: Int) -> [UInt8] {
        let number = Int.random(in: 0..<space, using: &random)
        switch number % 4 {
        case 0: return Array("k\(number)".utf8)
        case 1: return Array("record/\(number)".utf8)
        case 2: return number % 16 == 1 ? [] : [UInt8(number % 251)]
        default: return Array("record/entity-with-a-long-name/\(number)".utf8)
        }
    }

    /// A random batch for a key table: sizes from one key to several chunks, ascending at the
    /// table's end now and then.
    static func tableBatch(_ random: inout SeededGenerator, round: Int) -> [[UInt8]] {
        let size = [1, 2, 3, 10, 64, 65, 200, 700][Int.random(in: 0..<8, using: &random)]
        if Int.random(in: 0..<5, using: &random) == 0 {
            // Past every key so far, ascending: the table's end grows.
            return (0..<size).map { Array("zz/\(round + 100_000)/\($0 + 10_000)".utf8) }
        }
        return (0..<size).map { _ in key(&random, space: 3_000) }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func aBatchMergedIntoAKeyTableEqualsInsertingItsKeysOneByOne(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var batched = KeyTable<UInt64>()
        var single = KeyTable<UInt64>()
        for round in 0..<300 {
            // Distinct keys, ascending, each with a value: what the directory hands the table.
            var values: [[UInt8]: UInt64] = [:]
            for key in Self.tableBatch(&random, round: round) { values[key] = random.next() }
            let keys = KeyTableTests.sorted(values.keys)
            var batch = KeyTable<UInt64>.AscendingBatch()
            for key in keys { key.withUnsafeBytes { batch.append($0, values[key]!) } }
            var replaced: [Int: UInt64] = [:]
            var order: [Int] = []
            batched.updateValues(batch) { index, old in
                replaced[index] = old
                order.append(index)
            }
            var expectedReplaced: [Int: UInt64] = [:]
            for (index, key) in keys.enumerated() {
                if let old = single.updateValue(values[key]!, forKey: key) { expectedReplaced[index] = old }
            }
            #expect(replaced == expectedReplaced, "round \(round)")
            #expect(order == order.sorted(), "replacements are reported in ascending order")
            #expect(batched.count == single.count, "round \(round)")
            #expect(batched.isWellFormed, "round \(round)")
            if round % 50 == 49 || round == 299 {
                let all = batched.positions(in: .all, after: nil, reverse: false, limit: .max)
                let expected = single.positions(in: .all, after: nil, reverse: false, limit: .max)
                #expect(all.map(batched.key(at:)) == expected.map(single.key(at:)), "round \(round)")
                #expect(all.map(batched.value(at:)) == expected.map(single.value(at:)), "round \(round)")
            }
        }
    }

    @Test func batchesAscendingAtTheTableEndFillChunksAsABulkLoadDoes() {
        var table = KeyTable<UInt64>()
        for round in 0..<50 {
            var batch = KeyTable<UInt64>.AscendingBatch()
            for i in 0..<100 {
                Array("key/\(100_000 + round * 100 + i)".utf8).withUnsafeBytes { batch.append($0, UInt64(i)) }
            }
            table.updateValues(batch) { _, _ in Issue.record("no key was present") }
        }
        #expect(table.count == 5_000)
        #expect(table.isWellFormed)
        let fill = Double(table.count) / Double(table.chunks.count * KeyTable<UInt64>.chunkCapacity)
        #expect(fill > 0.8, "chunks are \(fill) full")
    }

    /// One random commit group's updates: puts (inline and blob), deletes (of present and absent
    /// keys), keys repeated within the batch, in one or two segments.
    static func updates(_ random: inout SeededGenerator, segment: UInt64, sequence: UInt64) -> [IndexUpdate] {
        let size = [1, 2, 5, 30, 150, 400][Int.random(in: 0..<6, using: &random)]
        var result: [IndexUpdate] = []
        for _ in 0..<size {
            let key = Self.key(&random, space: 1_500)
            // A group spans commits: now and then the next sequence.
            let sequence = sequence + UInt64(Int.random(in: 0..<2, using: &random))
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                let size = Int.random(in: 1...60, using: &random)
                result.append(IndexUpdate(key: key, location: .tombstone(in: segment, sequence: sequence), tombstoneSize: size))
            case 3..<5:
                var location = KeyDirectoryModelTests.location(&random, file: segment, blob: true)
                location.sequence = sequence
                result.append(IndexUpdate(key: key, location: location, blob: KeyDirectoryModelTests.blob(&random)))
            default:
                var location = KeyDirectoryModelTests.location(&random, file: segment, blob: false)
                location.sequence = sequence
                result.append(IndexUpdate(key: key, location: location))
            }
        }
        return result
    }

    /// The same entries and figures in two directories.
    static func expectSame(_ batched: KeyDirectory, _ single: KeyDirectory, _ note: String) {
        #expect(batched.count == single.count, "\(note)")
        #expect(batched.tombstoneCount == single.tombstoneCount, "\(note)")
        #expect(batched.keyBytes == single.keyBytes, "\(note)")
        #expect(batched.usage == single.usage, "\(note)")
        #expect(batched.blobs == single.blobs, "\(note)")
        #expect(batched.blobBytes == single.blobBytes, "\(note)")
        #expect(batched.retiredBlobBytes == single.retiredBlobBytes, "\(note)")
        let entries = batched.entries(in: .all, after: nil, reverse: false, limit: .max)
        #expect(entries == single.entries(in: .all, after: nil, reverse: false, limit: .max), "\(note)")
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func aBatchAppliedToTheIndexEqualsItsPutsAndDeletesOneAtATime(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var batched = KeyDirectory()
        var single = KeyDirectory()
        batched.finishLoading()
        single.finishLoading()
        var sequence: UInt64 = 1
        for round in 0..<400 {
            let segment = UInt64(1 + round / 40)
            batched.noteSegment(segment)
            single.noteSegment(segment)
            let updates = Self.updates(&random, segment: segment, sequence: sequence)
            sequence += 2
            batched.apply(updates)
            for update in updates {
                if update.location.isTombstone {
                    single.delete(
                        update.key, tombstoneIn: update.location.segment, recordSize: update.tombstoneSize,
                        sequence: update.location.sequence)
                } else {
                    single.put(update.key, at: update.location, blob: update.blob)
                }
            }
            if round % 20 == 19 {
                Self.expectSame(batched, single, "round \(round)")
            } else {
                #expect(batched.count == single.count && batched.usage == single.usage, "round \(round)")
            }
            // Now and then a flush drops some entries from both, as it finds them.
            if round % 25 == 24 {
                let flushed = single.entries(in: .all, after: nil, reverse: false, limit: .max)
                    .filter { _ in Int.random(in: 0..<3, using: &random) == 0 }
                let keys = flushed.map(\.key)
                let dropped = KeyDirectoryModelTests.withBytes(of: keys) { bytes in
                    (
                        batched.dropFlushed(ascending: Array(zip(bytes, flushed.map(\.location)))),
                        single.dropFlushed(ascending: Array(zip(bytes, flushed.map(\.location))))
                    )
                }
                #expect(dropped.0 == dropped.1)
            }
        }
        Self.expectSame(batched, single, "at the end")
        #expect(batched.count > 500, "the index held many keys")
    }

    /// Through the store: commits whose keys repeat (the last operation wins), delete absent
    /// keys, and hold blobs leave the index as a replay of the same log one record at a time
    /// (open, with no segment hints) builds it.
    @Test func commitsLeaveTheIndexAsAReplayOfTheirRecordsOneByOneDoes() throws {
        let fs = FaultInjectingFileSystem()
        var options = LogStore.Options()
        options.compaction = .manual
        options.writesSegmentHints = false
        options.segmentSize = 64 << 10
        options.blobThreshold = 2_000
        var random = SeededGenerator(seed: 9)
        var expected: [[UInt8]: [UInt8]] = [:]
        let store = try LogStore.open(at: "/batched", options: options, fileSystem: fs)
        for _ in 0..<60 {
            var batch = WriteBatch()
            for _ in 0..<Int.random(in: 1...80, using: &random) {
                let key = Self.key(&random, space: 400)
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<3:
                    batch.delete(key)
                    expected[key] = nil
                case 3:
                    let value = random.bytes(2_500)
                    batch.put(key, value)
                    expected[key] = value
                default:
                    let value = random.bytes(Int.random(in: 0..<200, using: &random))
                    batch.put(key, value)
                    expected[key] = value
                }
            }
            try store.commit(batch)
        }
        for (key, value) in expected { #expect(try store.value(forKey: key) == value) }
        let live = store.state.withLock { $0.index }
        try store.close()
        let reopened = try LogStore.open(at: "/batched", options: options, fileSystem: fs)
        let replayed = reopened.state.withLock { $0.index }
        #expect(reopened.statistics.recovery.replayedBytes > 0, "the log was replayed")
        Self.expectSame(live, replayed, "after the commits")
        for (key, value) in expected { #expect(try reopened.value(forKey: key) == value) }
        try reopened.close()
    }
}
