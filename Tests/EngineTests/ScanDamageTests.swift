@testable import Engine
import EngineTestSupport
import Testing

/// A scan that meets a damaged table block throws, whichever batch reaches it: it never ends as
/// if the range held no more keys.
@Suite struct ScanDamageTests {
    static let dir = "/scan-damage"

    static func options() -> LogStore.Options {
        var options = LogStore.Options()
        options.compressionLevel = 0
        options.compaction = LogStore.CompactionPolicy(isAutomatic: false, flushBytes: 0, mergeFanIn: 8)
        options.writesSegmentHints = false
        return options
    }

    static func key(_ n: Int) -> [UInt8] { bytes("k/" + String(n + 10000)) }

    /// The data block of the table `bytes` that holds `key`: the one whose loss takes `key` out
    /// of what salvage keeps.
    static func block(holding key: [UInt8], in bytes: [UInt8]) throws -> BlockHandle {
        let intact = try TableSalvage(bytes: bytes, path: "t")
        for handle in intact.keptBlocks {
            var damaged = bytes
            damaged[Int(handle.offset + handle.length / 2)] ^= 1
            let kept = try TableSalvage(bytes: damaged, path: "t")
            if !kept.entries.contains(where: { $0.key == key }) { return handle }
        }
        throw EngineError.invalid("no block holds the key")
    }

    /// A store of two tables (3,000 keys, and 100 more between them), closed; the path of the
    /// table holding the last key, with its block holding that key damaged.
    static func storeWithALateDamagedBlock(_ fs: FaultInjectingFileSystem) throws -> String {
        let store = try LogStore.open(at: dir, options: options(), fileSystem: fs)
        try store.write { batch in for n in 0..<3000 { batch.put(key(n), [UInt8](repeating: UInt8(n % 251), count: 60)) } }
        _ = try store.flushForTesting()
        try store.write { batch in for n in 0..<100 { batch.put(key(n * 30) + [0x2E], bytes("between")) } }
        _ = try store.flushForTesting()
        #expect(store.statistics.tables.count == 2)
        try store.close()
        let last = key(2999)
        for name in fs.names(in: dir) where name.hasSuffix(".sst") {
            let path = dir + "/" + name
            let contents = try #require(fs.contents(of: path))
            guard try TableSalvage(bytes: contents, path: path).entries.contains(where: { $0.key == last }) else { continue }
            let handle = try block(holding: last, in: contents)
            #expect(handle.offset > 0, "the damaged block is not the table's first")
            fs.flipBit(in: path, atByte: Int(handle.offset + handle.length / 2))
            return path
        }
        throw EngineError.invalid("no table holds the last key")
    }

    @Test func aScanWhoseLaterBatchMeetsADamagedBlockThrowsCorruptionNamingTheTable() throws {
        let fs = FaultInjectingFileSystem()
        let table = try Self.storeWithALateDamagedBlock(fs)
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        defer { try? store.close() }
        var cursor = try store.scan()  // the first batch is intact
        var returned = 0
        let error = #expect(throws: EngineError.self) { while try cursor.next() != nil { returned += 1 } }
        #expect(error?.code == .corruption && error?.path == table, "\(String(describing: error))")
        #expect(returned >= LogStore.Scan.batchSize, "the damage is met after the first batch")
        // The cursor does not pretend the range ended: asking again throws again.
        #expect(throws: EngineError.self) { _ = try cursor.next() }
        // A reverse scan meets it in its first batch.
        let reverse = #expect(throws: EngineError.self) { _ = try store.scan(reverse: true) }
        #expect(reverse?.code == .corruption && reverse?.path == table)
        #expect(throws: EngineError.self) { _ = try store.scan().collect() }
        // The first batch alone is intact.
        #expect(try store.scan(limit: LogStore.Scan.batchSize).collect().count == LogStore.Scan.batchSize)
    }
}
