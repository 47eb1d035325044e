@testable import Engine
import EngineTestSupport
import Testing

/// A flush writes the tail's current entries into a table in key order, each key once, whatever
/// order the commits wrote them in.
@Suite struct FlushOrderTests {
    /// Every entry of `table`, in its order.
    static func entries(of table: StoreTable) throws -> [TableEntry] {
        try table.reader.entries()
    }

    @Test func aFlushWritesEachCurrentKeyOnceInKeyOrderWithItsLatestVersion() throws {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: "/flush", options: CompactionTests.options(), fileSystem: fs)
        // A table below, so that the flush keeps its tombstones.
        var older = WriteBatch()
        older.put(bytes("key/deleted-twice"), bytes("in the table"))
        try store.commit(older)
        try store.flushForTesting()

        // Each key's commit and value (nil: the blob below).
        var expected: [[UInt8]: (sequence: UInt64, value: TableEntry.Value?)] = [:]
        // Keys in descending order, several sharing their first seven bytes, one of them short.
        var first = WriteBatch()
        let firstKeys = ["key/z", "key/overwritten-later", "key/m-long-enough-for-a-tail", "key/b", "k"]
        for key in firstKeys { first.put(bytes(key), bytes("first \(key)")) }
        let firstSequence = try store.commit(first)
        for key in firstKeys { expected[bytes(key)] = (firstSequence, .value(bytes("first \(key)"))) }
        // Filler that rolls the log over to later segments (each put its own key).
        var random = SeededGenerator(seed: 3)
        for round in 0..<6 {
            let values = (0..<40).map { _ in random.bytes(1000) }
            var filler = WriteBatch()
            for i in stride(from: 39, through: 0, by: -1) { filler.put(bytes("fill/\(round)/\(i)"), values[i]) }
            let sequence = try store.commit(filler)
            for i in 0..<40 { expected[bytes("fill/\(round)/\(i)")] = (sequence, .value(values[i])) }
        }
        // A later segment: an overwrite, a key deleted twice, a key put twice, a blob, a delete
        // of a key first put in this commit.
        var last = WriteBatch()
        last.put(bytes("key/overwritten-later"), bytes("second"))
        last.delete(bytes("key/deleted-twice"))
        last.put(bytes("key/put-twice"), bytes("one"))
        last.delete(bytes("key/deleted-twice"))
        last.put(bytes("key/put-twice"), bytes("two"))
        last.putExternal(bytes("key/a-blob"), Array(repeating: 7, count: 100))
        last.put(bytes("key/put-then-deleted"), bytes("gone"))
        last.delete(bytes("key/put-then-deleted"))
        let lastSequence = try store.commit(last)
        expected[bytes("key/overwritten-later")] = (lastSequence, .value(bytes("second")))
        expected[bytes("key/deleted-twice")] = (lastSequence, .tombstone)
        expected[bytes("key/put-twice")] = (lastSequence, .value(bytes("two")))
        expected[bytes("key/put-then-deleted")] = (lastSequence, .tombstone)
        expected[bytes("key/a-blob")] = (lastSequence, nil)
        let segments = fs.names(in: "/flush").filter { $0.hasSuffix(LogFormat.segmentSuffix) }.count
        #expect(segments > 2, "the commits span several segments")

        try store.flushForTesting()
        let table = try #require(store.state.withLock { $0.tables.first })
        let entries = try Self.entries(of: table)
        #expect(entries.map(\.key) == expected.keys.sorted { compareBytes($0, $1) < 0 })
        for entry in entries {
            let want = try #require(expected[entry.key])
            #expect(entry.sequence == want.sequence, "\(String(decoding: entry.key, as: UTF8.self))")
            if let value = want.value {
                #expect(entry.value == value, "\(String(decoding: entry.key, as: UTF8.self))")
            } else if case .blob(let reference) = entry.value {
                #expect(reference.length == 100)
            } else {
                Issue.record("the blob's entry is \(entry.value)")
            }
        }
        #expect(store.state.withLock { $0.index.count } == 0, "every flushed key left the resident index")
        try store.close()
    }
}
