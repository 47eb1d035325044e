import Engine
import Foundation
import EngineTestSupport
import Testing

/// Random sequences of puts (inline and blob), deletes, commits, flushes into tables, merges,
/// compactions (manual, and automatic flushes and merges in the background) and reopens, checked
/// against a plain dictionary after every step: point reads, and scans in both directions with
/// limits, through the tail and several tables. The seed is printed on failure so that a run can
/// be replayed.
@Suite struct ModelBasedTests {
    /// Runs `steps` random steps from `seed`, recording an issue (naming seed and step) wherever the
    /// store and the model disagree.
    static func run(seed: UInt64, steps: Int, fileSystem: FaultInjectingFileSystem? = nil) throws {
        var random = SeededGenerator(seed: seed)
        let fs = fileSystem ?? FaultInjectingFileSystem()
        var options = LogStore.Options()
        options.segmentSize = 64 << 10  // small segments, so rollovers happen
        options.valueCacheCapacity = 4 << 10
        options.blockCacheCapacity = [0, 64 << 10][Int.random(in: 0...1, using: &random)]
        options.preallocationSize = [0, 4 << 10, 64 << 10][Int.random(in: 0...2, using: &random)]
        options.compressionLevel = Int.random(in: 0...9, using: &random)
        options.blockSize = [4 << 10, 16 << 10][Int.random(in: 0...1, using: &random)]
        options.blobThreshold = [64, 1000, 4096][Int.random(in: 0...2, using: &random)]
        options.compaction = LogStore.CompactionPolicy(
            isAutomatic: Bool.random(using: &random), flushBytes: 64 << 10, mergeFanIn: Int.random(in: 2...4, using: &random))
        var store = try LogStore.open(at: "/model", options: options, fileSystem: fs)
        var model: [[UInt8]: [UInt8]] = [:]
        var lastSequence: UInt64 = 0
        var touched: [[UInt8]] = []
        var compactions = 0
        var flushes = 0

        func randomKey() -> [UInt8] {
            // Few distinct keys, so overwrites and deletes hit live keys; a shared prefix for scans.
            let prefix = ["a/", "b/", "ab", "c"][Int.random(in: 0...3, using: &random)]
            return bytes(prefix + String(Int.random(in: 0..<60, using: &random)))
        }

        for step in 0..<steps {
            let action = Int.random(in: 0..<100, using: &random)
            if action < 80 {
                var batch = WriteBatch()
                var next = model
                touched = []
                for _ in 0..<Int.random(in: 1...8, using: &random) {
                    let key = randomKey()
                    touched.append(key)
                    if Int.random(in: 0..<4, using: &random) == 0 {
                        batch.delete(key)
                        next[key] = nil
                    } else {
                        let length = [0, 1, 30, 300, 5000][Int.random(in: 0...4, using: &random)]
                        let value = random.bytes(length).map { 97 + $0 & 3 }
                        if Int.random(in: 0..<10, using: &random) == 0 {
                            batch.putExternal(key, value)
                        } else {
                            batch.put(key, value)
                        }
                        next[key] = value
                    }
                }
                let sequence = try store.commit(batch)
                #expect(sequence == lastSequence + 1, "seed \(seed) step \(step)")
                lastSequence = sequence
                model = next
            } else if action < 86 {
                // A flush of the whole tail (tombstones kept while older tables exist), then
                // the merges the policy makes due.
                try store.flushForTesting(sealingActive: Bool.random(using: &random))
                if Bool.random(using: &random) { try store.mergeDueForTesting() }
                flushes += 1
            } else if action < 87 {
                try store.compact()
                compactions += 1
                let stats = store.statistics
                #expect(stats.tailKeyCount == 0 || options.compaction.isAutomatic, "seed \(seed) step \(step)")
                #expect(stats.tables.count <= 1 || options.compaction.isAutomatic, "seed \(seed) step \(step)")
                if !options.compaction.isAutomatic {
                    // Exact after compact(): one table holds every key, and only the blobs it references are left.
                    #expect(stats.keyCount == model.count, "seed \(seed) step \(step)")
                    let blobs = try store.scan().collect().filter(\.isBlob).count
                    #expect(fs.names(in: "/model/blobs").count == blobs, "seed \(seed) step \(step)")
                }
            } else if action < 98 {
                let key = randomKey()
                #expect(try store.value(forKey: key) == model[key], "seed \(seed) step \(step)")
                #expect(try store.contains(key) == (model[key] != nil), "seed \(seed) step \(step)")
                let prefix = Array(key.prefix(2))
                let expected = model.keys.filter { $0.starts(with: prefix) }.sorted { $0.lexicographicallyPrecedes($1) }
                #expect(try store.scan(prefix: prefix).collect().map(\.key) == expected, "seed \(seed) step \(step)")
                // A bounded range, either direction, with a limit; values as the model's.
                let limit = Int.random(in: 1...20, using: &random)
                let reverse = Bool.random(using: &random)
                let range = LogStore.KeyRange(lower: .exclusive(key), upper: .unbounded)
                let inRange = model.keys.filter { range.contains($0) }.sorted { $0.lexicographicallyPrecedes($1) }
                let want = Array((reverse ? inRange.reversed() : inRange).prefix(limit))
                let got = try store.scan(range, limit: limit, reverse: reverse).collect().map { ($0.key, try $0.value()) }
                #expect(got.map(\.0) == want, "seed \(seed) step \(step)")
                #expect(got.allSatisfy { model[$0.0] == $0.1 }, "seed \(seed) step \(step)")
            } else {
                // Half the reopens find every sealed segment's hint written (the background job
                // may have written some anyway): open loads those instead of replaying.
                if Bool.random(using: &random) { store.writePendingSegmentHints() }
                try store.close()
                store = try LogStore.open(at: "/model", options: options, fileSystem: fs)
                #expect(store.statistics.lastSequence == lastSequence, "seed \(seed) step \(step)")
            }
            // After every step the keys it touched and the key count; every 25 steps, and after
            // each compaction and reopen, everything.
            if step % 25 != 0 && action < 80 {
                for key in touched { #expect(try store.value(forKey: key) == model[key], "seed \(seed) step \(step)") }
                let statistics = store.statistics
                #expect(
                    statistics.tables.isEmpty ? statistics.keyCount == model.count : statistics.keyCount >= model.count, "seed \(seed) step \(step)")
            } else {
                let contents = try store.contents()
                #expect(contents == model, "seed \(seed) step \(step)")
                if contents != model { return }
                let reversed = try store.scan(.all, reverse: true).collect().map(\.key)
                #expect(reversed == model.keys.sorted { $0.lexicographicallyPrecedes($1) }.reversed(), "seed \(seed) step \(step)")
                if store.statistics.tables.isEmpty {
                    #expect(store.statistics.keyCount == model.count, "seed \(seed) step \(step)")
                }
            }
        }
        try store.close()
        let reopened = try LogStore.open(at: "/model", options: options, fileSystem: fs)
        #expect(try reopened.contents() == model, "seed \(seed) final reopen")
        #expect(compactions + flushes == 0 || !reopened.statistics.tables.isEmpty || model.isEmpty, "seed \(seed): no table after flushes")
    }

    @Test func fixedSeedAgreesWithTheModel() throws {
        try Self.run(seed: 0x5EED_0001, steps: 3000)
    }

    @Test func randomSeedAgreesWithTheModel() throws {
        let seed =
            ProcessInfo.processInfo.environment["WALSTORE_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        print("ModelBasedTests.randomSeedAgreesWithTheModel seed: \(seed) (replay: WALSTORE_SEED=\(seed) swift test)")
        try Self.run(seed: seed, steps: 3000)
    }
}
