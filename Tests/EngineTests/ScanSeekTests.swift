@testable import Engine
import EngineTestSupport
import Testing

/// A forward scan moved by ``LogStore/Scan/seek(to:)`` lands on the first key at or above the
/// target (within its range) wherever it was — ahead, behind, between keys — over the tail and
/// the tables merged, newest version winning and deletes hidden, counting towards its limit.
@Suite struct ScanSeekTests {
    let fs = FaultInjectingFileSystem()

    static func key(_ number: Int) -> [UInt8] { bytes("k" + String(1000 + number)) }

    /// A store holding keys 0, 2, …, 98 (values "old") in a table, then in the tail: keys
    /// 10...19 rewritten ("new"), key 40 deleted, odd keys 51, 53 added.
    func store() throws -> LogStore {
        let store = try LogStore.open(
            at: "/seek", options: CompactionTests.options(), fileSystem: fs, testHooks: LogStore.TestHooks(scanBatchSize: 3))
        try store.write { batch in for n in stride(from: 0, to: 100, by: 2) { batch.put(Self.key(n), bytes("old")) } }
        _ = try store.compact()
        try store.write { batch in
            for n in stride(from: 10, to: 20, by: 2) { batch.put(Self.key(n), bytes("new")) }
            batch.delete(Self.key(40))
            batch.put(Self.key(51), bytes("new"))
            batch.put(Self.key(53), bytes("new"))
        }
        return store
    }

    /// The next `count` entries: key number and value.
    static func take(_ scan: inout LogStore.Scan, _ count: Int) throws -> [String] {
        var found: [String] = []
        while found.count < count, let entry = try scan.next() {
            found.append(String(decoding: entry.key, as: UTF8.self) + "=" + String(decoding: try entry.value(), as: UTF8.self))
        }
        return found
    }

    @Test func aSeekLandsOnTheFirstKeyAtOrAboveItsTargetWhereverTheScanWas() throws {
        let store = try store()
        defer { try? store.close() }
        var scan = try store.scan(LogStore.KeyRange(lower: .inclusive(Self.key(4)), upper: .exclusive(Self.key(60))))
        #expect(try Self.take(&scan, 2) == ["k1004=old", "k1006=old"])
        // Ahead, between keys: the next key of the tail (rewritten) wins over the table's.
        try scan.seek(to: Self.key(11))
        #expect(try Self.take(&scan, 2) == ["k1012=new", "k1014=new"])
        // Behind the position: back to it.
        try scan.seek(to: Self.key(6))
        #expect(try Self.take(&scan, 1) == ["k1006=old"])
        // Onto a deleted key: the next live one.
        try scan.seek(to: Self.key(40))
        #expect(try Self.take(&scan, 1) == ["k1042=old"])
        // Tail keys between table keys.
        try scan.seek(to: Self.key(51))
        #expect(try Self.take(&scan, 4) == ["k1051=new", "k1052=old", "k1053=new", "k1054=old"])
        // Below the range's lower bound: the range's first key; past its upper bound: the end.
        try scan.seek(to: Self.key(0))
        #expect(try Self.take(&scan, 1) == ["k1004=old"])
        try scan.seek(to: Self.key(70))
        #expect(try scan.next() == nil)
    }

    @Test func entriesReturnedBeforeASeekCountTowardsTheLimit() throws {
        let store = try store()
        defer { try? store.close() }
        var scan = try store.scan(.all, limit: 3)
        #expect(try Self.take(&scan, 2).count == 2)
        try scan.seek(to: Self.key(80))
        #expect(try Self.take(&scan, 5) == ["k1080=old"])
    }

    @Test func aSeekRepositionsTheOverlayOfWritesNotYetCommittedToo() throws {
        let store = try store()
        defer { try? store.close() }
        let overlay: [LogStore.Scan.OverlayEntry] = [
            .init(key: Self.key(3), value: bytes("pending")),
            .init(key: Self.key(12), value: nil),
            .init(key: Self.key(31), value: bytes("pending")),
            .init(key: Self.key(80), value: bytes("pending")),
        ]
        var scan = try store.scan(.all, overlay: overlay)
        #expect(try Self.take(&scan, 3) == ["k1000=old", "k1002=old", "k1003=pending"])
        // Ahead, over the overlay's deletion of key 12 and onto its put of 31.
        try scan.seek(to: Self.key(11))
        #expect(try Self.take(&scan, 1) == ["k1014=new"])
        try scan.seek(to: Self.key(29))
        #expect(try Self.take(&scan, 3) == ["k1030=old", "k1031=pending", "k1032=old"])
        // Behind: the overlay's earlier entries are met again.
        try scan.seek(to: Self.key(2))
        #expect(try Self.take(&scan, 2) == ["k1002=old", "k1003=pending"])
        // Onto the overlay's put of a key the store holds: the overlay wins.
        try scan.seek(to: Self.key(80))
        #expect(try Self.take(&scan, 2) == ["k1080=pending", "k1082=old"])
    }

    @Test func aReverseScanRefusesASeek() throws {
        let store = try store()
        defer { try? store.close() }
        var scan = try store.scan(.all, reverse: true)
        #expect(throws: EngineError.self) { try scan.seek(to: Self.key(10)) }
        #expect(store.scanFigures.seeks == 0)
    }
}
