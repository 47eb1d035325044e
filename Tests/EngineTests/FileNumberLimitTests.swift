@testable import Engine
import EngineTestSupport
import Testing

/// Numbers that come from file names and from checksummed bytes are bounded before any
/// arithmetic: a hostile name or field gives a typed error or is ignored as foreign, never a trap.
@Suite struct FileNumberLimitTests {
    static let dir = "/limits"

    static func store() throws -> (FaultInjectingFileSystem, [[UInt8]: [UInt8]]) {
        let fs = FaultInjectingFileSystem()
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.writesSegmentHints = false
        options.compaction = .manual
        let store = try LogStore.open(at: dir, options: options, fileSystem: fs)
        var model: [[UInt8]: [UInt8]] = [:]
        for round in 0..<40 {
            try store.write { batch in
                for index in 0..<10 {
                    let key = bytes("k\(round)-\(index)")
                    batch.put(key, [UInt8](repeating: UInt8(index), count: 400))
                    model[key] = [UInt8](repeating: UInt8(index), count: 400)
                }
            }
        }
        try store.compact()
        try store.write { $0.put(bytes("after"), bytes("compaction")) }
        model[bytes("after")] = bytes("compaction")
        try store.close()
        return (fs, model)
    }

    static func put(_ fs: FaultInjectingFileSystem, _ path: String, _ bytes: [UInt8]) throws {
        let file = try fs.openFile(path, create: true)
        try file.write(bytes, at: 0)
        try file.sync()
    }

    /// Names with 16 hex digits outside 1 ... 2^48, of every kind of file the engine names: open
    /// ignores them (they are not names it writes), removes none of them, and derives nothing from
    /// them — before the bound, `ffffffffffffffff.pack` made open trap computing the next pack
    /// number, and `0000000000000000.wal` was removed as a compacted segment.
    @Test func namesOutsideTheFileNumberRangeAreIgnoredAndLeftAlone() throws {
        let (fs, model) = try Self.store()
        let numbers = ["ffffffffffffffff", "0001000000000001", "8000000000000001", "0000000000000000"]
        var planted: [String] = []
        for number in numbers {
            for suffix in [".wal", ".pack", ".hint", ".walhint", ".pack-tmp", ".hint-tmp", ".walhint-tmp"] {
                planted.append(Self.dir + "/" + number + suffix)
            }
            planted.append(Self.dir + "/blobs/" + number + ".blob")
            planted.append(Self.dir + "/blobs/" + number + ".blob-tmp")
        }
        for path in planted { try Self.put(fs, path, bytes("not ours")) }
        try fs.syncDirectory(Self.dir)
        try fs.syncDirectory(Self.dir + "/blobs")

        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        #expect(try store.contents() == model)
        #expect(store.statistics.recovery.removedLeftovers == 0)
        #expect(store.statistics.recovery.removedBlobs == 0)
        // The store goes on writing segments, tables and blobs with numbers of its own.
        try store.write { batch in
            batch.put(bytes("new"), bytes("value"))
            batch.putExternal(bytes("blob"), [UInt8](repeating: 7, count: 5000))
        }
        try store.compact()
        #expect(try store.value(forKey: bytes("blob")) == [UInt8](repeating: 7, count: 5000))
        try store.close()
        for path in planted { #expect(fs.contents(of: path) == bytes("not ours"), "\(path) was changed or removed") }
    }

    static func manifest(logStart: UInt64, lastSequence: UInt64, tables: [Manifest.Table]) -> [UInt8] {
        Manifest(logStart: logStart, lastSequence: lastSequence, tables: tables).encoded()
    }

    static func table(_ number: UInt64) -> Manifest.Table {
        Manifest.Table(number: number, level: 0, length: 100, entryCount: 1, smallestKey: [1], largestKey: [1], blobIDs: [])
    }

    /// A checksummed manifest whose numbers lie outside their ranges is corruption naming the
    /// manifest (before the bound, a last sequence of 2^64 − 1 made replay trap on `+ 1`).
    @Test func aManifestWithNumbersOutOfRangeIsCorruption() throws {
        let (base, _) = try Self.store()
        let path = Self.dir + "/MANIFEST"
        let stored = try Manifest(decoding: try #require(base.contents(of: path)), path: path)
        let cases: [(String, [UInt8])] = [
            (
                "table 2^64 - 1",
                Self.manifest(logStart: stored.logStart, lastSequence: stored.lastSequence, tables: stored.tables + [Self.table(UInt64.max)])
            ),
            ("table 0", Self.manifest(logStart: stored.logStart, lastSequence: stored.lastSequence, tables: [Self.table(0)])),
            (
                "blob id 0",
                Self.manifest(
                    logStart: stored.logStart, lastSequence: stored.lastSequence,
                    tables: stored.tables.map {
                        var t = $0; t.blobIDs = [0]; return t
                    })
            ),
            ("log start 2^64 - 1", Self.manifest(logStart: UInt64.max, lastSequence: stored.lastSequence, tables: stored.tables)),
            ("last sequence 2^64 - 1", Self.manifest(logStart: stored.logStart, lastSequence: UInt64.max, tables: stored.tables)),
            ("last sequence 2^62", Self.manifest(logStart: stored.logStart, lastSequence: LogFormat.maxSequence, tables: stored.tables)),
        ]
        for (label, bytes) in cases {
            let fs = base.clone()
            fs.setContents(bytes, of: path)
            let error = #expect(throws: EngineError.self, "\(label)") {
                try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
            }
            #expect(error?.code == .corruption, "\(label)")
            #expect(error?.path == path, "\(label)")
        }
    }

    /// Blob references name ids in 1 ... 2^48 only, so the next id (highest + 1) cannot overflow.
    @Test func blobReferencesWithIdsOutOfRangeDoNotDecode() {
        for id: UInt64 in [0, LogFormat.maxFileNumber + 1, UInt64.max] {
            var writer = ByteWriter()
            BlobReference(id: id, length: 1, fileLength: 100, checksum: 0, encoding: LogFormat.blobEncodingRaw).append(to: &writer)
            var reader = ByteReader(writer.bytes[...])
            #expect(BlobReference.read(from: &reader) == nil, "id \(id)")
        }
        var writer = ByteWriter()
        BlobReference(id: LogFormat.maxFileNumber, length: 1, fileLength: 100, checksum: 0, encoding: 0).append(to: &writer)
        var reader = ByteReader(writer.bytes[...])
        #expect(BlobReference.read(from: &reader)?.id == LogFormat.maxFileNumber)
    }
}
