import Engine
import EngineTestSupport
import Foundation
@testable import Snapshot
import Testing

/// Writes planned and not yet committed read on top of the engine's keys: a pending put or
/// delete wins over the engine's key, in lookups and in scans of either direction and with a
/// limit.
@Suite struct PendingWritesTests {
    static func key(_ s: String) -> [UInt8] { [RecordKeys.recordTag] + Array(s.utf8) }

    /// A space over an engine holding R-a, R-c, R-e (values "1", "3", "5"), in generation
    /// `generation`, with pending writes: R-b put, R-c deleted, R-e replaced, R-f put.
    static func space(_ fs: FaultInjectingFileSystem, generation: UInt32) throws -> RecordSpace {
        let engine = try LogStore.open(at: "/pending", options: LogStore.Options(), fileSystem: fs)
        var space = RecordSpace(engine: engine, generation: generation)
        var batch = WriteBatch()
        for (k, v) in [("a", "1"), ("c", "3"), ("e", "5")] { batch.put(key(k), Array(v.utf8)) }
        try space.commit(batch)
        var pending = WriteBatch()
        pending.put(key("b"), Array("2".utf8))
        pending.delete(key("c"))
        pending.put(key("e"), Array("five".utf8))
        pending.putExternal(key("f"), Array("6".utf8))
        space.pending = PendingWrites.none.adding(try #require(space.engineBatch(pending).entries))
        return space
    }

    static func collect(_ scan: RecordSpace.Scan) throws -> [String] {
        var scan = scan
        var result: [String] = []
        while let entry = try scan.next() {
            result.append(String(decoding: entry.key.dropFirst(), as: UTF8.self) + "=" + String(decoding: try entry.value(), as: UTF8.self))
        }
        return result
    }

    @Test(arguments: [UInt32(0), 3])
    func lookupsAndScansSeePendingWritesOverTheEngine(generation: UInt32) throws {
        let fs = FaultInjectingFileSystem()
        let space = try Self.space(fs, generation: generation)
        #expect(try space.value(forKey: Self.key("b")) == Array("2".utf8))
        #expect(try space.value(forKey: Self.key("c")) == nil, "a pending delete hides the engine's key")
        #expect(try space.value(forKey: Self.key("e")) == Array("five".utf8))
        #expect(try space.value(forKey: Self.key("a")) == Array("1".utf8))
        let all = LogStore.KeyRange.prefix([RecordKeys.recordTag])
        #expect(try Self.collect(space.scan(all)) == ["a=1", "b=2", "e=five", "f=6"])
        #expect(try Self.collect(space.scan(all, reverse: true)) == ["f=6", "e=five", "b=2", "a=1"])
        #expect(try Self.collect(space.scan(all, limit: 2)) == ["a=1", "b=2"], "the deleted key does not count")
        #expect(try Self.collect(space.scan(all, limit: 3, reverse: true)) == ["f=6", "e=five", "b=2"])
        let middle = LogStore.KeyRange(lower: .exclusive(Self.key("a")), upper: .exclusive(Self.key("f")))
        #expect(try Self.collect(space.scan(middle)) == ["b=2", "e=five"])
        var plain = space
        plain.pending = .none
        #expect(try Self.collect(plain.scan(all)) == ["a=1", "c=3", "e=5"], "other readers see the engine only")
    }
}
