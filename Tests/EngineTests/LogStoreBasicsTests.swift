import Engine
import EngineTestSupport
import Testing

@Suite struct LogStoreBasicsTests {
    let fs = FaultInjectingFileSystem()
    let dir = "/store"

    func open(_ options: LogStore.Options = LogStore.Options()) throws -> LogStore {
        try LogStore.open(at: dir, options: options, fileSystem: fs)
    }

    @Test func putThenReadReturnsTheValue() throws {
        let store = try open()
        let sequence = try store.write { $0.put(bytes("a"), bytes("apple")) }
        #expect(sequence == 1)
        #expect(try store.value(forKey: bytes("a")) == bytes("apple"))
        #expect(try store.contains(bytes("a")))
        #expect(try store.value(forKey: bytes("b")) == nil)
        #expect(try !store.contains(bytes("b")))
    }

    /// `write` and `withValue` with bodies that cannot fail throw `EngineError` itself, so a
    /// `catch` sees the error's code without a cast; a body that throws gets its own error back.
    @Test func writeAndWithValueKeepTypedThrowsForBodiesThatCannotFail() throws {
        let store = try open()
        let length: Int? = try { () throws(EngineError) -> Int? in
            try store.write { $0.put(bytes("a"), bytes("apple")) }
            return try store.withValue(forKey: bytes("a")) { $0.count }
        }()
        #expect(length == 5)
        try store.close()
        let closed = Result { () throws(EngineError) in try store.write { $0.put(bytes("b"), bytes("x")) } }
        guard case .failure(let error) = closed else { Issue.record("a closed store took a write"); return }
        #expect(error.code == .closed)

        struct BodyError: Error {}
        let reopened = try open()
        #expect(throws: BodyError.self) { try reopened.write { _ in throw BodyError() } }
        #expect(throws: BodyError.self) {
            try reopened.withValue(forKey: bytes("a")) { _ -> Int in throw BodyError() }
        }
    }

    @Test func overwriteReturnsTheLatestValue() throws {
        let store = try open()
        try store.write { $0.put(bytes("a"), bytes("one")) }
        try store.write { $0.put(bytes("a"), bytes("two")) }
        #expect(try store.value(forKey: bytes("a")) == bytes("two"))
        try store.close()
        let reopened = try open()
        #expect(try reopened.value(forKey: bytes("a")) == bytes("two"))
    }

    @Test func deleteRemovesTheKeyAndSurvivesReopen() throws {
        let store = try open()
        try store.write {
            $0.put(bytes("a"), bytes("one"))
            $0.put(bytes("b"), bytes("two"))
        }
        try store.write { $0.delete(bytes("a")) }
        #expect(try store.value(forKey: bytes("a")) == nil)
        try store.close()
        let reopened = try open()
        #expect(try reopened.contents() == [bytes("b"): bytes("two")])
    }

    @Test func laterOperationOnTheSameKeyInOneBatchWins() throws {
        let store = try open()
        try store.write {
            $0.put(bytes("k"), bytes("first"))
            $0.put(bytes("k"), bytes("second"))
            $0.put(bytes("gone"), bytes("x"))
            $0.delete(bytes("gone"))
        }
        try store.close()
        let reopened = try open()
        #expect(try reopened.contents() == [bytes("k"): bytes("second")])
    }

    @Test func reopenGivesEqualContentsAndSequence() throws {
        let store = try open()
        var expected: [[UInt8]: [UInt8]] = [:]
        for i in 0..<200 {
            try store.write { batch in
                for j in 0..<5 {
                    let key = bytes("key-\(i * 7 % 50)-\(j)")
                    let value = bytes(String(repeating: "v\(i)", count: j + 1))
                    batch.put(key, value)
                    expected[key] = value
                }
            }
        }
        #expect(try store.contents() == expected)
        try store.close()
        let reopened = try open()
        #expect(try reopened.contents() == expected)
        #expect(reopened.statistics.lastSequence == 200)
        #expect(try reopened.write { $0.put(bytes("next"), []) } == 201)
    }

    @Test func emptyStoreOpensEmptyAndReopensEmpty() throws {
        let store = try open()
        #expect(try store.contents().isEmpty)
        #expect(store.statistics.keyCount == 0)
        #expect(store.statistics.lastSequence == 0)
        try store.close()
        let reopened = try open()
        #expect(try reopened.contents().isEmpty)
        #expect(fs.names(in: dir).filter { $0.hasSuffix(".wal") } == ["0000000000000001.wal"])
    }

    @Test func creatingAStoreMakesItsDirectoryEntryDurable() throws {
        let fs = FaultInjectingFileSystem()
        try LogStore.open(at: "/parent/store", options: LogStore.Options(), fileSystem: fs).close()
        #expect(fs.operationLog.contains { $0.kind == .syncDirectory && $0.path == "/parent" })
        let before = fs.operationCount
        try LogStore.open(at: "/parent/store", options: LogStore.Options(), fileSystem: fs).close()
        #expect(!fs.operationLog.dropFirst(before).contains { $0.kind == .syncDirectory && $0.path == "/parent" })
    }

    @Test func zeroByteValueIsStoredAndIsNotAbsence() throws {
        let store = try open()
        try store.write { $0.put(bytes("empty"), []) }
        try store.close()
        let reopened = try open()
        #expect(try reopened.value(forKey: bytes("empty")) == [])
        #expect(try reopened.contains(bytes("empty")))
    }

    @Test func sixteenMiBValueRoundTrips() throws {
        var generator = SeededGenerator(seed: 16)
        let big = generator.bytes(16 << 20)
        let store = try open()
        try store.write {
            $0.put(bytes("big"), big)
            $0.put(bytes("small"), bytes("s"))
        }
        #expect(try store.value(forKey: bytes("big")) == big)
        try store.close()
        let reopened = try open()
        #expect(try reopened.value(forKey: bytes("big")) == big)
        #expect(try reopened.value(forKey: bytes("small")) == bytes("s"))
    }

    @Test func emptyBatchWritesNothingAndReturnsTheLastSequence() throws {
        let store = try open()
        try store.write { $0.put(bytes("a"), bytes("1")) }
        let before = fs.operationCount
        #expect(try store.commit(WriteBatch()) == 1)
        #expect(fs.operationCount == before)
    }

    @Test func invalidBatchIsRejectedBeforeAnyByteIsWritten() throws {
        let store = try open()
        try store.write { $0.put(bytes("a"), bytes("1")) }
        let before = fs.operationCount
        let tooLongKey = [UInt8](repeating: 1, count: 65_536)
        for bad in [{ (b: inout WriteBatch) in b.put([], bytes("x")) }, { $0.put(tooLongKey, []) }] {
            var batch = WriteBatch()
            batch.put(bytes("fine"), bytes("ok"))
            bad(&batch)
            let error = #expect(throws: EngineError.self) { try store.commit(batch) }
            #expect(error?.code == .invalidArgument)
        }
        #expect(fs.operationCount == before)
        #expect(try store.contents() == [bytes("a"): bytes("1")])
    }

    @Test func scanReturnsOnlyThePrefixInByteOrder() throws {
        let store = try open()
        try store.write { batch in
            for key in ["user/3", "user/1", "post/9", "user/2", "userx", "post/1", "u"] {
                batch.put(bytes(key), bytes("v-" + key))
            }
        }
        try store.write { $0.delete(bytes("user/2")) }
        let scanned = try store.scan(prefix: bytes("user/")).collect().map { String(decoding: $0.key, as: UTF8.self) }
        #expect(scanned == ["user/1", "user/3"])
        let values = try store.scan(prefix: bytes("post/")).collect().map { try $0.value() }
        #expect(values == [bytes("v-post/1"), bytes("v-post/9")])
        #expect(try (store.scan(prefix: bytes("zzz")).collect()).count == 0)
        #expect(try (store.scan(prefix: []).collect()).count == 6)
    }

    @Test func scanSeesTheValuesAsOfItsStart() throws {
        let store = try open()
        try store.write { $0.put(bytes("p/a"), bytes("old")) }
        let scan = try store.scan(prefix: bytes("p/"))
        try store.write {
            $0.put(bytes("p/a"), bytes("new"))
            $0.put(bytes("p/b"), bytes("added"))
        }
        #expect(try scan.collect().map { try $0.value() } == [bytes("old")])
    }

    @Test func segmentsRollOverAndReopenAcrossThem() throws {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.compressionLevel = 0
        let store = try open(options)
        var expected: [[UInt8]: [UInt8]] = [:]
        for i in 0..<300 {
            let value = [UInt8](repeating: UInt8(i % 251), count: 1000)
            try store.write { $0.put(bytes("k\(i % 120)"), value) }
            expected[bytes("k\(i % 120)")] = value
        }
        let segments = store.statistics.segments
        #expect(segments.count >= 4)
        // Finished segments are trimmed to their frames; the active one is preallocated.
        #expect(segments.dropLast().allSatisfy { $0.bytesOnDisk <= 64 << 10 + 2048 })
        try store.close()
        let reopened = try open(options)
        #expect(try reopened.contents() == expected)
        #expect(reopened.statistics.segments.count == segments.count)
    }

    @Test func statisticsCountLiveAndDeadBytes() throws {
        let store = try open()
        try store.write { $0.put(bytes("a"), bytes("12345")) }
        let first = store.statistics
        #expect(first.keyCount == 1)
        #expect(first.liveBytes == 1 + 1 + 1 + 1 + 5)  // kind, key length, value length, key, value
        #expect(first.deadBytes == 0)
        try store.write { $0.put(bytes("a"), bytes("6789")) }
        try store.write { $0.delete(bytes("a")) }
        let later = store.statistics
        #expect(later.keyCount == 0)
        #expect(later.liveBytes == 0)
        #expect(later.deadBytes == 9 + 8 + 3)
        #expect(later.bytesOnDisk + later.preallocatedBytes == UInt64(fs.contents(of: dir + "/0000000000000001.wal")!.count))
        try store.close()
        let reopened = try open()
        #expect(reopened.statistics.liveBytes == 0)
        #expect(reopened.statistics.deadBytes == 20)
    }

    @Test func compressibleCommitsAreStoredCompressed() throws {
        let store = try open()
        let value = bytes(String(repeating: "{\"name\":\"walstore\",\"n\":1}", count: 40))
        try store.write { batch in
            for i in 0..<100 { batch.put(bytes("key\(i)"), value) }
        }
        let stats = store.statistics
        #expect(stats.bytesOnDisk < UInt64(stats.liveBytes) / 4)
        #expect(stats.preallocatedBytes == 1 << 20, "the zeros ahead are counted apart")
        let fileSize = UInt64(fs.contents(of: dir + "/0000000000000001.wal")!.count)
        #expect(stats.bytesOnDisk + stats.preallocatedBytes == fileSize)
        #expect(try store.value(forKey: bytes("key50")) == value)
    }

    @Test func optionsOutOfRangeAreRejected() throws {
        var options = LogStore.Options()
        options.blockSize = 100
        let error = #expect(throws: EngineError.self) { try open(options) }
        #expect(error?.code == .invalidArgument)
        options = LogStore.Options()
        options.compressionLevel = 10
        #expect(throws: EngineError.self) { try open(options) }
    }

    @Test func closedStoreRefusesCallsAndReleasesTheLock() throws {
        let store = try open()
        try store.write { $0.put(bytes("a"), bytes("1")) }
        try store.close()
        try store.close()
        #expect(throws: EngineError.self) { try store.value(forKey: bytes("a")) }
        let error = #expect(throws: EngineError.self) { try store.write { $0.put(bytes("b"), []) } }
        #expect(error?.code == .closed)
        _ = try open()
    }

    @Test func secondOpenInTheSameProcessIsLocked() throws {
        let store = try open()
        let error = #expect(throws: EngineError.self) { try open() }
        #expect(error?.code == .locked)
        try store.close()
    }

    @Test func blockCacheServesOtherValuesOfABlockWithoutIO() throws {
        var options = LogStore.Options()
        options.valueCacheCapacity = 0
        let store = try open(options)
        try store.write { batch in
            for i in 0..<20 { batch.put(bytes("k\(i)"), bytes("value \(i)")) }  // one block
        }
        let before = fs.readCount
        #expect(try store.value(forKey: bytes("k1")) == bytes("value 1"))
        #expect(fs.readCount == before + 1)
        for i in 2..<20 { #expect(try store.value(forKey: bytes("k\(i)")) == bytes("value \(i)")) }
        #expect(fs.readCount == before + 1, "the block was read once")
        try store.close()
        var uncached = LogStore.Options()
        uncached.valueCacheCapacity = 0
        uncached.blockCacheCapacity = 0
        let reopened = try open(uncached)
        let reads = fs.readCount
        for i in 0..<20 { _ = try reopened.value(forKey: bytes("k\(i)")) }
        #expect(fs.readCount == reads + 20, "without caches every read goes to disk")
    }

    @Test func valueCacheServesRepeatedReads() throws {
        let store = try open()
        try store.write { $0.put(bytes("a"), bytes("cached")) }
        _ = try store.value(forKey: bytes("a"))
        _ = try store.value(forKey: bytes("a"))
        let stats = store.statistics
        #expect(stats.cacheMisses == 1)
        #expect(stats.cacheHits == 1)
        try store.write { $0.put(bytes("a"), bytes("fresh")) }
        #expect(try store.value(forKey: bytes("a")) == bytes("fresh"))
    }
}
