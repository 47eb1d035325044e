@testable import Engine
import EngineTestSupport
import Foundation
import Testing

/// Damage that checksums cannot see — a file whose checksums were rewritten to match — is found
/// where it would change an answer, at the cost of a check per table or per block read: an
/// all-zero filter, an index separator below its block's last key, a manifest key range that
/// disagrees with its table. Each is `corruption` naming the table, never a key read as absent.
@Suite struct CrossCheckTests {
    /// FORMAT.md's version-5 worked example (three data blocks, two partitions), as a reader
    /// with a block cache sees it.
    static func example() throws -> [UInt8] {
        try TableBuilder.build(TableFormatExampleTests.entries, options: TableFormatExampleTests.version5)
    }

    static func reader(_ bytes: [UInt8]) throws(EngineError) -> TableReader {
        try TableReader(source: MemoryTableSource(bytes: bytes, path: "/t.sst"), id: 1, cache: TableBlockCache(capacity: 1 << 20))
    }

    static func expectCorruption(_ what: String, _ body: () throws(EngineError) -> Void) {
        do {
            try body()
            Issue.record("\(what): read without an error")
        } catch {
            #expect(error.code == .corruption && error.path == "/t.sst" && error.offset != nil, "\(what): \(error)")
        }
    }

    @Test func anAllZeroFilterPartitionIsCorruptionNotAbsence() throws {
        var table = try Self.example()
        #expect(try Self.reader(table).entry(forKey: bytes("user/1")) != nil)
        // Filter partition 0's 8 bytes of bits at 0x4e, zeroed; its trailer rewritten.
        for offset in 0x4e..<0x56 { table[offset] = 0 }
        DecoderHooks.repairTable(&table)
        Self.expectCorruption("user/1 behind a zero filter") { () throws(EngineError) in
            _ = try Self.reader(table).entry(forKey: bytes("user/1"))
        }
        // The other partition's filter is intact: its key reads as before.
        #expect(try Self.reader(table).entry(forKey: bytes("user/3"))?.value == .value(bytes("Lin")))
    }

    @Test func aFilterWithOneKeysProbesSetIsAccepted() throws {
        var builder = BloomFilterBuilder()
        builder.add(bytes("only"))
        let raw = builder.finish()
        let filter = try BloomFilter(raw: raw, path: "/t.sst", offset: 0)
        #expect(filter.mayContain(bytes("only")))
        #expect(raw.dropLast().reduce(0) { $0 + $1.nonzeroBitCount } == BloomFilter.minimumSetBits(probes: filter.probes))
        // A table of no entries (version 4) has a filter of no keys: all zero, and accepted.
        #expect(throws: Never.self) { try BloomFilter(raw: BloomFilterBuilder().finish(), path: "/t.sst", offset: 0, coversKeys: false) }
    }

    @Test func aSeparatorBelowItsBlocksLastKeyIsCorruptionNotAbsence() throws {
        var table = try Self.example()
        // Index partition 0's first separator "user/1" (block 0's last key) at 0x5f, made
        // "user/0": a point read of user/1 would go to block 1 and miss.
        #expect(table[0x64] == UInt8(ascii: "1"))
        table[0x64] = UInt8(ascii: "0")
        DecoderHooks.repairTable(&table)
        Self.expectCorruption("user/1 past a lowered separator") { () throws(EngineError) in
            _ = try Self.reader(table).entry(forKey: bytes("user/1"))
        }
        // A read that reaches block 0 another way (a scan) finds it out as well.
        Self.expectCorruption("a scan from user/0") { () throws(EngineError) in
            _ = try Self.reader(table).entries(in: .init(lower: .inclusive(bytes("user/0"))))
        }
        // The blocks the damaged separator does not lead to read as before.
        #expect(try Self.reader(table).entry(forKey: bytes("user/3"))?.value == .value(bytes("Lin")))
    }

    /// Salvage treats a separator that disagrees with its block as a damaged index (no entry
    /// lost: the rewrite builds a new index) and an all-zero filter as a damaged filter, so
    /// the table is rewritten, and reads of the rewritten table are right.
    @Test func salvageRebuildsATableWhoseSeparatorOrFilterLiesBehindValidChecksums() throws {
        let example = try Self.example()
        var separator = example
        separator[0x64] = UInt8(ascii: "0")
        DecoderHooks.repairTable(&separator)
        var filter = example
        for offset in 0x4e..<0x56 { filter[offset] = 0 }
        DecoderHooks.repairTable(&filter)
        for (what, table, reason) in [
            ("lowered separator", separator, TableSalvage.Reason.indexUnreadable), ("zero filter", filter, .filterUnreadable),
        ] {
            let salvage = try TableSalvage(source: MemoryTableSource(bytes: table, path: "/t.sst"))
            #expect(salvage.losses.map(\.reason) == [reason], "\(what): \(salvage.losses)")
            #expect(salvage.entries == TableFormatExampleTests.entries, "\(what): every entry kept")
            let rebuilt = try TableBuilder.build(salvage.entries, options: TableFormatExampleTests.version5)
            #expect(try Self.reader(rebuilt).entry(forKey: bytes("user/1"))?.value == .value(bytes("Ada")), "\(what)")
        }
        #expect(try TableSalvage(source: MemoryTableSource(bytes: example, path: "/t.sst")).isClean)
    }

    // MARK: The manifest's key ranges

    static let dir = "/crosscheck"

    static func options() -> LogStore.Options {
        var options = LogStore.Options()
        options.compaction = .manual
        options.writesSegmentHints = false
        return options
    }

    /// A store of keys `k/10` … `k/59` compacted into one table, closed.
    static func compactedStore() throws -> FaultInjectingFileSystem {
        let fs = FaultInjectingFileSystem()
        let store = try LogStore.open(at: dir, options: options(), fileSystem: fs)
        try store.write { batch in
            for i in 10..<60 { batch.put(bytes("k/\(i)"), bytes("v\(i)")) }
        }
        try store.compact()
        try store.close()
        return fs
    }

    /// Rewrites the manifest (checksum recomputed) with `change` applied to its one table.
    static func forgeManifest(_ fs: FaultInjectingFileSystem, _ change: (inout Manifest.Table) -> Void) throws -> String {
        let path = dir + "/" + LogFormat.manifestName
        var manifest = try Manifest(decoding: try #require(fs.contents(of: path)), path: path)
        try #require(manifest.tables.count == 1)
        change(&manifest.tables[0])
        fs.setContents(manifest.encoded(), of: path)
        return dir + "/" + TableFormat.name(manifest.tables[0].number)
    }

    @Test(arguments: ["largest narrowed", "smallest narrowed", "largest widened"])
    func aManifestKeyRangeThatDisagreesWithItsTableIsCorruptionAtFirstUse(change: String) throws {
        let fs = try Self.compactedStore()
        let tablePath = try Self.forgeManifest(fs) { record in
            switch change {
            case "largest narrowed": record.largestKey = bytes("k/50")
            case "smallest narrowed": record.smallestKey = bytes("k/20")
            default: record.largestKey = bytes("k/99")
            }
        }
        // Each first read, whether the recorded range brackets its key or not, finds it out.
        for (what, read) in [
            ("a key outside the recorded range", { (s: LogStore) throws -> Void in _ = try s.value(forKey: bytes("k/55")) }),
            ("a key inside it", { (s: LogStore) throws -> Void in _ = try s.value(forKey: bytes("k/30")) }),
            ("a scan above the recorded range", { (s: LogStore) throws -> Void in _ = try s.scan(prefix: bytes("k/55")).collect() }),
            ("a scan below it", { (s: LogStore) throws -> Void in _ = try s.scan(prefix: bytes("k/1")).collect() }),
        ] {
            let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
            defer { try? store.close() }
            do {
                try read(store)
                Issue.record("\(change), \(what): read without an error")
            } catch let error as EngineError {
                #expect(error.code == .corruption && error.path == tablePath, "\(change), \(what): \(error)")
            }
        }
    }

    /// Salvage compares each table's manifest record with the entries it keeps: a key range or
    /// blob list that disagrees makes it rewrite the table (its true record in the manifest)
    /// and report it, and the store then reads right, its blob file kept.
    @Test(arguments: ["key range", "blob list"])
    func salvageRewritesATableWhoseManifestRecordDisagreesWithIt(field: String) throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.options()
        options.blobThreshold = 100
        let blobValue = [UInt8](repeating: 9, count: 500)
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        try store.write { batch in
            for i in 10..<60 { batch.put(bytes("k/\(i)"), bytes("v\(i)")) }
            batch.put(bytes("k/big"), blobValue)
        }
        try store.compact()
        try store.close()
        let table = try Self.forgeManifest(fs) { record in
            if field == "key range" { record.largestKey = bytes("k/50") } else { record.blobIDs = [] }
        }
        let report = try LogStore.salvage(at: Self.dir, options: options, fileSystem: fs)
        #expect(report.quarantined.map(\.file) == [String(table.dropFirst(Self.dir.count + 1))], "\(report.quarantined)")
        let repaired = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        defer { try? repaired.close() }
        repaired.collectBlobsFoundAtOpen()
        #expect(try repaired.value(forKey: bytes("k/55")) == bytes("v55"))
        #expect(try repaired.value(forKey: bytes("k/big")) == blobValue)
    }

    @Test func aManifestKeyRangeThatAgreesIsReadAsBefore() throws {
        let fs = try Self.compactedStore()
        let store = try LogStore.open(at: Self.dir, options: Self.options(), fileSystem: fs)
        defer { try? store.close() }
        #expect(try store.value(forKey: bytes("k/5")) == nil)
        #expect(try store.value(forKey: bytes("k/59")) == bytes("v59"))
        #expect(try store.scan(prefix: bytes("k/")).collect().count == 50)
    }

    // MARK: The manifest's blob lists

    /// A merge reads every entry of its inputs, so it checks each blob reference against its
    /// table's manifest list: a list that omits a referenced blob (checksum recomputed) stops
    /// `compact()` as corruption naming the table, before its blob collection could remove the
    /// blob file, which is still there and still read.
    @Test func aManifestBlobListOmittingAReferencedBlobStopsTheMergeBeforeCollection() throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.options()
        options.blobThreshold = 100
        let blobValue = [UInt8](repeating: 7, count: 500)
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        try store.write { $0.put(bytes("big"), blobValue) }
        try store.compact()
        try store.close()
        let blobs = fs.names(in: Self.dir + "/" + LogFormat.blobDirectoryName).filter { $0.hasSuffix(".blob") }
        try #require(blobs.count == 1)
        let table = try Self.forgeManifest(fs) { record in
            #expect(record.blobIDs.count == 1)
            record.blobIDs = []
        }
        // (Open's own background collection is left out: it trusts the lists; see FORMAT.md.)
        let reopened = try LogStore.open(at: Self.dir, options: options, fileSystem: fs, collectingBlobs: false)
        defer { try? reopened.close() }
        try reopened.write { $0.put(bytes("small"), bytes("x")) }
        do {
            try reopened.compact()
            Issue.record("compact() merged a table whose manifest blob list omits its blob")
        } catch {
            #expect(error.code == .corruption && error.path == table, "\(error)")
        }
        #expect(fs.names(in: Self.dir + "/" + LogFormat.blobDirectoryName).filter { $0.hasSuffix(".blob") } == blobs)
        #expect(try reopened.value(forKey: bytes("big")) == blobValue)
    }

    @Test func aMergeOfTablesWhoseBlobListsAgreeKeepsEveryBlob() throws {
        let fs = FaultInjectingFileSystem()
        var options = Self.options()
        options.blobThreshold = 100
        let store = try LogStore.open(at: Self.dir, options: options, fileSystem: fs)
        defer { try? store.close() }
        try store.write { $0.put(bytes("big/1"), [UInt8](repeating: 1, count: 500)) }
        try store.compact()
        try store.write { $0.put(bytes("big/2"), [UInt8](repeating: 2, count: 500)) }
        try store.compact()
        #expect(store.statistics.tables.count == 1)
        #expect(try store.value(forKey: bytes("big/1")) == [UInt8](repeating: 1, count: 500))
        #expect(try store.value(forKey: bytes("big/2")) == [UInt8](repeating: 2, count: 500))
    }
}
