@testable import Engine
import EngineTestSupport
import Foundation
import Testing

/// Sorted tables (FORMAT.md, "Table files"): built and read back over random key sets, point
/// reads, range scans both ways with limits, the Bloom filter's false-positive rate, what the
/// builder refuses, and the block cache.
@Suite struct TableTests {
    static func reference(_ i: Int) -> BlobReference {
        BlobReference(id: UInt64(i + 1), length: 1 << 20, fileLength: (1 << 20) + 60, checksum: UInt64(i) &* 0x9E37, encoding: 0)
    }

    /// `count` distinct entries in key order: keys sharing long prefixes (and some not), empty,
    /// short and large values, tombstones and blob references.
    static func randomEntries(_ count: Int, seed: UInt64, largeValues: Bool = false) -> [TableEntry] {
        var random = SeededGenerator(seed: seed)
        var keys = Set<[UInt8]>()
        let prefixes = [bytes("users/0000/"), bytes("users/0001/profile/"), bytes("p"), [0xFF, 0xFF], [0x00]]
        while keys.count < count {
            let prefix = prefixes[Int.random(in: 0..<prefixes.count, using: &random)]
            keys.insert(prefix + random.bytes(Int.random(in: 0...12, using: &random)))
        }
        let sorted = keys.sorted { $0.lexicographicallyPrecedes($1) }.filter { !$0.isEmpty }
        return sorted.enumerated().map { i, key in
            let value: TableEntry.Value
            switch Int.random(in: 0..<10, using: &random) {
            case 0: value = .tombstone
            case 1: value = .blob(reference(i))
            case 2: value = .value([])
            case 3 where largeValues: value = .value(random.bytes(Int.random(in: 5_000...70_000, using: &random)))
            case 4: value = .value([UInt8](repeating: UInt8(i % 7), count: 500))  // compressible
            default: value = .value(random.bytes(Int.random(in: 1...60, using: &random)))
            }
            return TableEntry(key: key, sequence: UInt64(i * 3 + 1), value: value)
        }
    }

    static func reader(_ bytes: [UInt8], cache: TableBlockCache? = nil) throws -> TableReader {
        let source = MemoryTableSource(bytes: bytes, path: "/t.sst")
        guard let cache else { return try TableReader(source: source) }
        return try TableReader(source: source, id: 1, cache: cache)
    }

    static func options(blockSize: Int, level: Int = 1, partitionSize: Int = 4096) -> TableBuilder.Options {
        var options = TableBuilder.Options()
        options.blockSize = blockSize
        options.compressionLevel = level
        options.partitionSize = partitionSize
        return options
    }

    /// Tables of one partition and of many (the cursor crossing partitions both ways).
    @Test(arguments: [
        (0, 4096, 1, 4096), (1, 4096, 1, 4096), (7, 64, 1, 4096), (300, 256, 1, 4096), (1000, 4096, 0, 4096), (2000, 1024, 6, 4096),
        (7, 64, 1, 1), (300, 256, 1, 64), (2000, 1024, 0, 100),
    ])
    func everyEntryReadsBackByScanAndPointRead(count: Int, blockSize: Int, level: Int, partitionSize: Int) throws {
        let entries = Self.randomEntries(count, seed: UInt64(count + blockSize))
        let bytes = try TableBuilder.build(
            entries, options: Self.options(blockSize: blockSize, level: level, partitionSize: partitionSize))
        let table = try Self.reader(bytes)
        #expect(try table.entries() == entries)
        #expect(try table.entries(reverse: true) == entries.reversed())
        for entry in entries { #expect(try table.entry(forKey: entry.key) == entry) }
        if count >= 300 { #expect(try table.dataBlockCount > 10, "small blocks: many of them") }
        if partitionSize < 4096, count > 0 { #expect(try table.partitionCount > 3, "small partitions: many of them") }
    }

    @Test func largeValuesAndSharedPrefixesRoundTrip() throws {
        let entries = Self.randomEntries(150, seed: 9, largeValues: true)
        #expect(entries.contains { if case .value(let v) = $0.value { v.count > 5000 } else { false } })
        let bytes = try TableBuilder.build(entries)
        let table = try Self.reader(bytes)
        #expect(try table.entries() == entries)
        for entry in entries { #expect(try table.entry(forKey: entry.key) == entry) }
    }

    @Test func absentKeysAreNotFound() throws {
        let entries = Self.randomEntries(500, seed: 3)
        let table = try Self.reader(try TableBuilder.build(entries, options: Self.options(blockSize: 512)))
        let present = Set(entries.map(\.key))
        var random = SeededGenerator(seed: 5)
        var probes: [[UInt8]] = [[0x00], [0xFF, 0xFF, 0xFF, 0xFF], bytes("users/0000/"), bytes("zzz")]
        for entry in entries.prefix(100) {
            probes.append(entry.key + [0])  // between two keys
            probes.append(Array(entry.key.dropLast()))  // a prefix
        }
        for _ in 0..<300 { probes.append(random.bytes(Int.random(in: 1...20, using: &random))) }
        for key in probes where !present.contains(key) && !key.isEmpty {
            #expect(try table.entry(forKey: key) == nil, "\(key)")
        }
    }

    /// Range scans with every kind of bound, both directions and limits, against the sorted
    /// array.
    @Test(arguments: [4096, 40])
    func rangeScansAgreeWithTheSortedEntries(partitionSize: Int) throws {
        let entries = Self.randomEntries(400, seed: 12)
        let table = try Self.reader(try TableBuilder.build(entries, options: Self.options(blockSize: 300, partitionSize: partitionSize)))
        #expect(try table.partitionCount > (partitionSize < 4096 ? 5 : 0))
        var random = SeededGenerator(seed: 13)
        func bound() -> LogStore.KeyRange.Bound {
            let key: [UInt8] =
                Bool.random(using: &random)
                ? entries[Int.random(in: 0..<entries.count, using: &random)].key
                : random.bytes(Int.random(in: 1...6, using: &random))
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return .unbounded
            case 1: return .inclusive(key)
            default: return .exclusive(key)
            }
        }
        for _ in 0..<300 {
            let range = LogStore.KeyRange(lower: bound(), upper: bound())
            let limit = [1, 2, 5, 17, 1000][Int.random(in: 0..<5, using: &random)]
            let expected = entries.filter { range.contains($0.key) }
            #expect(try table.entries(in: range, limit: limit) == Array(expected.prefix(limit)), "\(range) limit \(limit)")
            #expect(
                try table.entries(in: range, reverse: true, limit: limit) == Array(expected.reversed().prefix(limit)),
                "\(range) reverse limit \(limit)")
        }
        let prefix = bytes("users/0001/profile/")
        #expect(try table.entries(in: .prefix(prefix)) == entries.filter { $0.key.starts(with: prefix) })
        #expect(try table.entries(limit: 0).isEmpty)
    }

    /// About 10 bits a key: the filter lets through few absent keys (a broken filter lets through
    /// all of them or, if it drops keys, fails the present ones).
    @Test func theFilterPassesFewAbsentKeys() throws {
        var entries: [TableEntry] = []
        for i in 0..<10_000 { entries.append(TableEntry(key: bytes("key/\(100_000 + i)"), sequence: 1, value: .value([1]))) }
        let table = try Self.reader(try TableBuilder.build(entries))
        #expect(try table.partitionCount > 1, "each partition's filter covers its own keys")
        for entry in entries { #expect(try table.mayContain(entry.key)) }
        var passed = 0
        // Absent keys inside the table's range, so that each reaches a partition's filter.
        for i in 0..<10_000 where try table.mayContain(bytes("key/\(100_000 + i)/absent")) { passed += 1 }
        #expect(passed < 300, "\(passed) of 10,000 absent keys pass the filter")
        #expect(passed > 0, "a filter this size has some false positives; none suggests it is not consulted")
    }

    @Test func theBuilderRefusesKeysOutOfOrderAndBadEntries() throws {
        var builder = TableBuilder()
        try builder.add(TableEntry(key: bytes("b"), sequence: 1, value: .value([])))
        for key in [bytes("a"), bytes("b"), []] {
            #expect(throws: EngineError.self) { try builder.add(TableEntry(key: key, sequence: 1, value: .tombstone)) }
        }
        do {
            try builder.add(TableEntry(key: bytes("a"), sequence: 1, value: .tombstone))
            Issue.record("an out-of-order key was taken")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("ascending"))
        }
        #expect(throws: EngineError.self) {
            try builder.add(TableEntry(key: [UInt8](repeating: 1, count: 65_536), sequence: 1, value: .tombstone))
        }
        #expect(throws: EngineError.self) { try builder.add(TableEntry(key: bytes("c"), sequence: 1 << 63, value: .tombstone)) }
        try builder.add(TableEntry(key: bytes("c"), sequence: 2, value: .value([3])))
        let table = try Self.reader(builder.takeBytes() + builder.finish())
        #expect(try table.entries().map(\.key) == [bytes("b"), bytes("c")])
    }

    /// A table entry's sequence is a commit's: below 2^62, as the log's frames and the manifest's
    /// last sequence. The builder refuses 2^62 and the decoder reads an entry that holds it as
    /// damaged; 2^62 − 1 is taken and read back.
    @Test func tableSequencesHaveTheCommitsLimit() throws {
        var builder = TableBuilder()
        #expect(throws: EngineError.self) { try builder.add(TableEntry(key: bytes("a"), sequence: LogFormat.maxSequence, value: .tombstone)) }
        try builder.add(TableEntry(key: bytes("a"), sequence: LogFormat.maxSequence - 1, value: .value([7])))
        let table = try Self.reader(builder.takeBytes() + builder.finish())
        #expect(try table.entries().map(\.sequence) == [LogFormat.maxSequence - 1])

        func encoded(_ sequence: UInt64) -> [UInt8] {
            var writer = ByteWriter()
            writer.append(TableFormat.kindValue)
            writer.appendVarint64(sequence)
            writer.append(contentsOf: [7])
            return writer.bytes
        }
        #expect(TableEntry.decode(key: bytes("a"), value: encoded(LogFormat.maxSequence - 1)[...])?.sequence == LogFormat.maxSequence - 1)
        #expect(TableEntry.decode(key: bytes("a"), value: encoded(LogFormat.maxSequence)[...]) == nil, "2^62 decodes")
    }

    @Test func separatorsAreShortAndBetweenTheBlocks() {
        #expect(TableBuilder.separator(after: bytes("abcdef"), before: bytes("abzz")) == bytes("abd"))
        #expect(TableBuilder.separator(after: bytes("abc"), before: bytes("abd")) == bytes("abc"))
        #expect(TableBuilder.separator(after: bytes("ab"), before: bytes("abc")) == bytes("ab"))
        #expect(TableBuilder.separator(after: [0x01, 0xFF, 0x05], before: [0x03]) == [0x02])
        #expect(TableBuilder.successor(of: bytes("user/9")) == bytes("v"))
        #expect(TableBuilder.successor(of: [0xFF, 0xFF, 0x10]) == [0xFF, 0xFF, 0x11])
        #expect(TableBuilder.successor(of: [0xFF]) == [0xFF])
        var random = SeededGenerator(seed: 21)
        for _ in 0..<2000 {
            var pair = [random.bytes(Int.random(in: 1...5, using: &random)), random.bytes(Int.random(in: 1...5, using: &random))]
            pair.sort { $0.lexicographicallyPrecedes($1) }
            guard pair[0] != pair[1] else { continue }
            let s = TableBuilder.separator(after: pair[0], before: pair[1])
            #expect(compareBytes(pair[0], s) <= 0 && compareBytes(s, pair[1]) < 0, "\(pair) → \(s)")
            #expect(s.count <= pair[0].count)
        }
    }

    /// Opening reads the footer alone; the first point read reads the top-level index, one filter
    /// partition, one index partition and one block, and a second read of the key reads nothing.
    @Test func openReadsTheFooterAloneAndAFirstPointReadTheFilterIndexAndOneBlock() throws {
        let fs = FaultInjectingFileSystem()
        let entries = Self.randomEntries(3000, seed: 30)
        let bytes = try TableBuilder.build(entries, options: Self.options(blockSize: 1024))
        _ = try fs.createDirectory("/t")
        let file = try fs.openFile("/t/1.sst", create: true)
        try file.write(bytes, at: 0)
        let cache = TableBlockCache(capacity: 1 << 20)
        let before = fs.readCount
        let table = try TableReader(source: FileTableSource(file: file), id: 1, cache: cache)
        #expect(fs.readCount - before == 1)
        #expect(fs.largestRead == TableFormat.footerSize, "open reads the footer alone")
        #expect(!table.isMetadataLoaded)
        let key = entries[1234].key
        let reads = fs.readCount
        #expect(try table.entry(forKey: key) == entries[1234])
        #expect(try table.partitionCount > 1)
        #expect(fs.readCount - reads == 4, "top-level index, filter partition, index partition, one block")
        #expect(table.isMetadataLoaded)
        #expect(try table.entry(forKey: key) == entries[1234])
        #expect(fs.readCount - reads == 4, "the second read is served by the cache")
        #expect(cache.figures.hits == 3, "the filter partition, the index partition and the block")
        // Without a cache, so that every block consulted is a read.
        let uncached = try TableReader(source: FileTableSource(file: file))
        let absent = fs.readCount
        var stopped = 0
        for i in 0..<100 where try uncached.entry(forKey: Array("nope/\(i)".utf8)) == nil { stopped += 1 }
        #expect(stopped == 100)
        #expect(fs.readCount - absent < 110, "the filter (one partition read) stops most absent keys before any index or block is read")
    }
    /// What open and a first point read of a table of `count` records in format `version` read:
    /// reads and bytes, the largest read, and the number of partitions.
    static func firstReadCost(count: Int, version: UInt16) throws -> (reads: Int, bytes: Int, largest: Int, partitions: Int) {
        var options = TableBuilder.Options()
        options.version = version
        var builder = TableBuilder(options: options)
        let fs = FaultInjectingFileSystem()
        _ = try fs.createDirectory("/t")
        let file = try fs.openFile("/t/1.sst", create: true)
        var written: UInt64 = 0
        func key(_ i: Int) -> [UInt8] { bytes("user/\(10_000_000 + i)/name") }
        for i in 0..<count {
            try builder.add(TableEntry(key: key(i), sequence: UInt64(i + 1), value: .value(bytes("record \(i) of the table"))))
            let chunk = builder.takeBytes()
            if chunk.count > 0 {
                try file.write(chunk, at: written)
                written += UInt64(chunk.count)
            }
        }
        try file.write(builder.finish(), at: written)
        let (reads, read) = (fs.readCount, fs.bytesRead)
        let table = try TableReader(source: FileTableSource(file: file), id: 1, cache: TableBlockCache(capacity: 8 << 20))
        let target = count * 2 / 3
        #expect(try table.entry(forKey: key(target))?.sequence == UInt64(target + 1))
        return (fs.readCount - reads, fs.bytesRead - read, fs.largestRead, try table.partitionCount)
    }

    /// Open and the first point read of a table read the footer, the top-level index (an entry
    /// per partition), one filter partition, one index partition and one data block: a few
    /// kilobytes, within the same bound for a table ten times larger, where an unpartitioned
    /// (version-4) table's first read loads its whole filter and index.
    @Test func openAndAFirstPointReadReadKilobytesWhateverTheTableHolds() throws {
        let small = try Self.firstReadCost(count: 100_000, version: TableFormat.version)
        let large = try Self.firstReadCost(count: 1_000_000, version: TableFormat.version)
        let whole = try Self.firstReadCost(count: 100_000, version: TableFormat.unpartitionedVersion)
        #expect(small.reads == 5 && large.reads == 5, "footer, top-level index, filter, index, block: \(small) \(large)")
        #expect(large.partitions >= 10 * small.partitions - 10, "\(small) \(large)")
        #expect(small.bytes < 24 << 10 && large.bytes < 24 << 10, "100,000 records: \(small); 1,000,000: \(large)")
        #expect(large.largest < 12 << 10, "no read of a whole-table structure: \(large)")
        #expect(whole.bytes > 10 * small.bytes, "version 4 reads its whole filter and index: \(whole) against \(small)")
        print("first read: v5 100,000 records \(small), 1,000,000 records \(large); v4 100,000 records \(whole)")
    }

    /// A scan walks the top-level index, then each index partition it passes, then the data
    /// blocks: with no cache, a whole scan reads the top-level index once, each partition's index
    /// once and each block once (no filter), and a short scan from the middle reads one index
    /// partition and the blocks it passes.
    @Test func aScanReadsEachIndexPartitionItPassesOnceAndNoFilter() throws {
        let fs = FaultInjectingFileSystem()
        let entries = Self.randomEntries(2000, seed: 31)
        _ = try fs.createDirectory("/t")
        let file = try fs.openFile("/t/1.sst", create: true)
        try file.write(try TableBuilder.build(entries, options: Self.options(blockSize: 512, partitionSize: 128)), at: 0)
        let table = try TableReader(source: FileTableSource(file: file))
        let (partitions, blocks) = (try table.partitionCount, try table.dataBlockHandles().count)
        #expect(partitions > 5 && blocks > 2 * partitions, "\(partitions) partitions, \(blocks) blocks")
        for reverse in [false, true] {
            let reads = fs.readCount
            #expect(try table.entries(reverse: reverse).count == entries.count)
            #expect(fs.readCount - reads == partitions + blocks, "reverse: \(reverse)")
        }
        let fresh = try TableReader(source: FileTableSource(file: file))
        let reads = fs.readCount
        let middle = entries[entries.count / 2].key
        #expect(try fresh.entries(in: .init(lower: .inclusive(middle)), limit: 2).first?.key == middle)
        #expect(fs.readCount - reads <= 4, "the top-level index, one index partition, one or two blocks")
    }
}
