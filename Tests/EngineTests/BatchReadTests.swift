@testable import Engine
import EngineTestSupport
import Testing

/// `values(forKeys:)` answers as one `value(forKey:)` per key does, over a tail and several
/// tables holding overwrites, tombstones and blobs, for keys in any order, repeated or absent;
/// a damaged table block is a typed error naming the table, never a trap.
@Suite struct BatchReadTests {
    static let dir = "/batch"

    /// A store of three tables and a tail, each round overwriting and deleting keys of the ones
    /// before (some values blobs), and the model of its contents.
    static func layered(_ fs: FaultInjectingFileSystem, seed: UInt64) throws -> (LogStore, [[UInt8]: [UInt8]]) {
        let store = try LogStore.open(at: dir, options: TableStoreTests.options(), fileSystem: fs)
        var model: [[UInt8]: [UInt8]] = [:]
        var random = SeededGenerator(seed: seed)
        for round in 0..<4 {
            try store.write { batch in
                for _ in 0..<150 {
                    let key = bytes("key/\(Int.random(in: 0..<200, using: &random))")
                    if Int.random(in: 0..<5, using: &random) == 0 {
                        batch.delete(key)
                        model[key] = nil
                    } else {
                        let length = Int.random(in: 0..<20, using: &random) == 0 ? 2500 : Int.random(in: 0..<120, using: &random)
                        let value = random.bytes(length)
                        batch.put(key, value)
                        model[key] = value
                    }
                }
            }
            if round < 3 { try store.flushForTesting() }
        }
        #expect(store.statistics.tables.count == 3)
        return (store, model)
    }

    /// Random key lists: keys of the store, deleted ones, ones never written, repeats, any order.
    static func probes(_ random: inout SeededGenerator) -> [[UInt8]] {
        (0..<Int.random(in: 0..<120, using: &random)).map { _ in
            Int.random(in: 0..<10, using: &random) == 0
                ? bytes("other/\(Int.random(in: 0..<5, using: &random))")
                : bytes("key/\(Int.random(in: 0..<210, using: &random))")
        }
    }

    @Test func answersEqualOneReadPerKeyOverTailTablesTombstonesAndBlobs() throws {
        for seed in 1...4 as ClosedRange<UInt64> {
            let fs = FaultInjectingFileSystem()
            let (store, model) = try Self.layered(fs, seed: seed)
            var random = SeededGenerator(seed: seed * 7919)
            func check(_ store: LogStore) throws {
                for _ in 0..<40 {
                    let keys = Self.probes(&random)
                    let batched = try store.values(forKeys: keys)
                    #expect(batched == keys.map { model[$0] }, "seed \(seed)")
                    #expect(batched == (try keys.map { key throws(EngineError) in try store.value(forKey: key) }), "seed \(seed)")
                }
                let all = model.keys.sorted { compareBytes($0, $1) < 0 }
                #expect(try store.values(forKeys: all) == all.map { model[$0] }, "seed \(seed)")
                #expect(try store.values(forKeys: all.reversed()) == all.reversed().map { model[$0] }, "seed \(seed)")
            }
            try check(store)
            try store.close()
            // Reopened: nothing cached, the tables' filters and indexes not yet loaded.
            let reopened = try LogStore.open(at: Self.dir, options: TableStoreTests.options(), fileSystem: fs)
            try check(reopened)
            try reopened.close()
        }
    }

    @Test func anEmptyListReadsNothingAndAClosedStoreRefuses() throws {
        let fs = FaultInjectingFileSystem()
        let (store, _) = try Self.layered(fs, seed: 9)
        #expect(try store.values(forKeys: []) == [])
        try store.close()
        #expect(throws: EngineError.self) { try store.values(forKeys: [bytes("key/1")]) }
        do {
            _ = try store.values(forKeys: [bytes("key/1")])
        } catch {
            #expect(error.code == .closed)
        }
    }

    @Test func aDamagedTableBlockIsCorruptionNamingTheTable() throws {
        let fs = FaultInjectingFileSystem()
        let (store, model) = try Self.layered(fs, seed: 3)
        try store.close()
        // Every key of the store, all but the newest values read from the tables.
        let keys = model.keys.sorted { compareBytes($0, $1) < 0 }
        let tables = fs.names(in: Self.dir).filter { $0.hasSuffix(LogFormat.tableSuffix) }.sorted()
        #expect(tables.count == 3)
        for name in tables {
            let damaged = fs.clone()
            // The first data block starts the file.
            damaged.flipBit(in: Self.dir + "/" + name, atByte: 20)
            let reopened = try LogStore.open(at: Self.dir, options: TableStoreTests.options(), fileSystem: damaged)
            defer { try? reopened.close() }
            let probes = keys + (0..<200).map { bytes("key/\($0)") }
            do {
                let values = try reopened.values(forKeys: probes)
                Issue.record("a flipped bit of \(name) was read: \(values.count) values")
            } catch {
                #expect(error.code == .corruption, "\(name): \(error)")
                #expect(error.path == Self.dir + "/" + name, "\(name): \(error)")
            }
        }
    }
}
