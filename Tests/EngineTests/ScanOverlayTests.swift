@testable import Engine
import EngineTestSupport
import Testing

/// Writes not yet committed, laid over a scan by the engine's merging cursor, read as if they
/// had been committed last.
@Suite struct ScanOverlayTests {
    static func key(_ n: Int) -> [UInt8] { bytes("k/" + String(1000 + n)) }

    @Test func overlaidWritesWinOverTheTailAndTheTablesInEitherDirectionAndCountTowardTheLimit() throws {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: "/overlay", options: CompactionTests.options(), fileSystem: fs)
        defer { try? store.close() }
        var model: [[UInt8]: [UInt8]] = [:]
        try store.write { batch in for n in 0..<40 { batch.put(Self.key(n), bytes("table \(n)")) } }
        _ = try store.flushForTesting()
        try store.write { batch in for n in stride(from: 0, to: 40, by: 3) { batch.put(Self.key(n), bytes("tail \(n)")) } }
        for n in 0..<40 { model[Self.key(n)] = n % 3 == 0 ? bytes("tail \(n)") : bytes("table \(n)") }
        // Puts over table keys, tail keys and new keys; deletes of both; a key given twice (the
        // last wins); one outside the range.
        var overlay: [LogStore.Scan.OverlayEntry] = [
            .init(key: Self.key(4), value: bytes("first")), .init(key: Self.key(5), value: nil),
            .init(key: Self.key(6), value: nil), .init(key: Self.key(50), value: bytes("new"), isBlob: true),
            .init(key: Self.key(4), value: bytes("over table")), .init(key: Self.key(9), value: bytes("over tail")),
            .init(key: bytes("z"), value: bytes("outside")),
        ]
        overlay.swapAt(0, 3)
        model[Self.key(4)] = bytes("over table")
        model[Self.key(5)] = nil
        model[Self.key(6)] = nil
        model[Self.key(50)] = bytes("new")
        model[Self.key(9)] = bytes("over tail")
        let range = LogStore.KeyRange.prefix(bytes("k/"))
        let sorted = model.keys.sorted { compareBytes($0, $1) < 0 }
        for reverse in [false, true] {
            let expected = reverse ? Array(sorted.reversed()) : sorted
            let all = try store.scan(range, reverse: reverse, overlay: overlay).collect()
            #expect(all.map(\.key) == expected, "reverse \(reverse)")
            #expect(try all.allSatisfy { try model[$0.key] == $0.value() })
            #expect(all.filter(\.isBlob).map(\.key) == [Self.key(50)])
            #expect(all.first { $0.key == Self.key(9) }?.sequence == 0)
            // The limit counts merged entries: the deleted keys take none of it.
            let limited = try store.scan(range, limit: 8, reverse: reverse, overlay: overlay).collect().map(\.key)
            #expect(limited == Array(expected.prefix(8)))
            var borrowed: [[UInt8]] = []
            var scan = try store.scan(range, reverse: reverse, overlay: overlay)
            while let value = try scan.withNext({ (entry) throws(EngineError) in try entry.value() }) { borrowed.append(value) }
            #expect(borrowed == expected.map { model[$0]! })
        }
        // Nothing was committed.
        #expect(try store.value(forKey: Self.key(50)) == nil)
        #expect(try store.value(forKey: Self.key(5)) == bytes("table 5"))
    }
}
