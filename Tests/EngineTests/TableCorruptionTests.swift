@testable import Engine
import EngineTestSupport
import Foundation
import Testing

/// A damaged table is found out: every truncation, every bit flip of a small table, and crafted
/// tables whose checksums were rewritten to match, either throw a typed error naming the file
/// or give the same answers as the table intact; none traps.
@Suite struct TableCorruptionTests {
    /// A small table of several blocks (some compressed) holding every kind of entry.
    /// 24 entries in small data blocks; in version 5, small partitions (two or three data blocks
    /// each), so that the table has several.
    static func smallTable(version: UInt16 = TableFormat.version) throws -> (bytes: [UInt8], entries: [TableEntry]) {
        var entries: [TableEntry] = []
        for i in 0..<24 {
            let key = bytes("k/\(100 + i)")
            let value: TableEntry.Value =
                switch i % 4 {
                case 0: .tombstone
                case 1: .blob(TableTests.reference(i))
                case 2: .value([UInt8](repeating: UInt8(i), count: 90))
                default: .value(bytes("v\(i)"))
                }
            entries.append(TableEntry(key: key, sequence: UInt64(i + 1), value: value))
        }
        var options = TableTests.options(blockSize: 200)
        options.partitionSize = 30
        options.version = version
        let bytes = try TableBuilder.build(entries, options: options)
        return (bytes, entries)
    }

    /// Everything a reader can be asked, or the error it threw.
    static func answers(_ bytes: [UInt8], probes: [[UInt8]]) -> Result<[[TableEntry?]], EngineError> {
        Result { () throws(EngineError) -> [[TableEntry?]] in
            let table = try TableReader(source: MemoryTableSource(bytes: bytes, path: "/t.sst"))
            var answers: [[TableEntry?]] = [try table.entries(), try table.entries(reverse: true)]
            answers.append(try table.entries(in: .init(lower: .exclusive(probes[3])), limit: 5))
            answers.append(try probes.map { key throws(EngineError) in try table.entry(forKey: key) })
            // The batched lookup, over the same keys in ascending order.
            let sorted = Array(Set(probes)).sorted { compareBytes($0, $1) < 0 }
            answers.append(try table.entriesAfterFilter(forSortedKeys: sorted))
            return answers
        }
    }

    static func probes(_ entries: [TableEntry]) -> [[UInt8]] {
        entries.map(\.key) + [bytes("k/0"), bytes("k/1005"), bytes("z")]
    }

    @Test(arguments: [TableFormat.unpartitionedVersion, TableFormat.version])
    func everyTruncationIsReportedAsCorruption(version: UInt16) throws {
        let (table, entries) = try Self.smallTable(version: version)
        #expect(try TableReader(source: MemoryTableSource(bytes: table)).dataBlockCount >= 5)
        for length in 0..<table.count {
            switch Self.answers(Array(table.prefix(length)), probes: Self.probes(entries)) {
            case .success: Issue.record("a table cut to \(length) of \(table.count) bytes was read")
            case .failure(let error):
                #expect(error.code == .corruption || error.code == .unsupportedFormat, "cut at \(length): \(error)")
                #expect(error.path == "/t.sst" && error.offset != nil, "cut at \(length): \(error)")
            }
        }
    }

    @Test(arguments: [TableFormat.unpartitionedVersion, TableFormat.version])
    func everyBitFlipIsDetectedOrHarmless(version: UInt16) throws {
        let (table, entries) = try Self.smallTable(version: version)
        let probes = Self.probes(entries)
        let intact = try Self.answers(table, probes: probes).get()
        #expect(intact[0] == entries)
        var detected = 0
        for index in table.indices {
            for bit in 0..<8 {
                var damaged = table
                damaged[index] ^= 1 << bit
                switch Self.answers(damaged, probes: probes) {
                case .success(let answers):
                    #expect(answers == intact, "flip of bit \(bit) of byte \(index) changed an answer")
                case .failure(let error):
                    detected += 1
                    #expect(error.code == .corruption || error.code == .unsupportedFormat, "byte \(index) bit \(bit): \(error)")
                    #expect(error.path == "/t.sst", "byte \(index) bit \(bit)")
                    if let offset = error.offset { #expect(offset < UInt64(table.count), "byte \(index) bit \(bit)") }
                }
            }
        }
        #expect(detected == table.count * 8, "every byte is under a checksum")
    }

    /// Damage behind rewritten checksums (what a crafted file can do): typed errors or answers,
    /// never a trap, and no read past the file.
    @Test(arguments: [TableFormat.unpartitionedVersion, TableFormat.version])
    func craftedTablesWithRepairedChecksumsNeverTrap(version: UInt16) throws {
        let (table, _) = try Self.smallTable(version: version)
        var random = SeededGenerator(seed: 77)
        var rejected = 0
        for index in table.indices {
            for _ in 0..<3 {
                var crafted = table
                crafted[index] = UInt8.random(in: 0...255, using: &random)
                DecoderHooks.repairTable(&crafted)
                do {
                    try DecoderHooks.readTable(crafted)
                } catch {
                    rejected += 1
                    #expect(error.code == .corruption || error.code == .unsupportedFormat, "\(error)")
                }
            }
        }
        #expect(rejected > 0)
    }

    @Test func aBlockDeclaringMoreRestartsThanItHoldsIsCorruption() throws {
        var raw = [UInt8](repeating: 0, count: 8)
        raw[4] = 200  // 200 restart points in 8 bytes
        #expect(throws: EngineError.self) { try Block(raw: raw, path: "/t.sst", offset: 9) }
        do {
            _ = try Block(raw: raw, path: "/t.sst", offset: 9)
        } catch {
            #expect(error.code == .corruption && error.offset == 9 && error.path == "/t.sst")
        }
        // A compressed block claiming a raw length past zlib's ratio is refused before inflating.
        var stored: [UInt8] = [0xFF, 0xFF, 0xFF, 0x7F, 0x78, 0x9C]
        stored.append(TableFormat.blockTypeZlib)
        stored += withUnsafeBytes(of: checksum(stored[...]).littleEndian) { Array($0) }
        #expect(throws: EngineError.self) { try StoredBlock.decode(stored[...], path: "/t.sst", offset: 0) }
    }

    /// A version-5 table whose top-level index disagrees with its partitions, checksums rewritten
    /// to match (what a crafted file can do), is corruption at the first read that meets it,
    /// never a wrong answer: a last separator that is not the partition's, a run that starts
    /// elsewhere, partitions that do not tile, a partition count the entries do not match.
    @Test func aTopLevelIndexThatDisagreesWithItsPartitionsIsCorruption() throws {
        let example = try TableBuilder.build(TableFormatExampleTests.entries, options: TableFormatExampleTests.version5)
        #expect(example == (try TableFormatExampleTests.documentedBytes("table-v5-example")))
        // Offsets in FORMAT.md's version-5 worked example.
        let crafted: [(what: String, at: Int, byte: UInt8)] = [
            ("partition 0's last separator user/3, not user/2", 0xac, 0x33),
            ("partition 0's data starts at 1", 0xb1, 0x01),
            ("partition 1's data starts at block 1", 0xbc, 0x1b),
            ("partition 0's filter one byte late", 0xad, 0x4f),
            ("partition 0's index one byte longer", 0xb0, 0x28),
            ("the footer counts one partition", 0xfe, 0x01),
        ]
        for (what, at, byte) in crafted {
            var bytes = example
            bytes[at] = byte
            DecoderHooks.repairTable(&bytes)
            let answers = Self.answers(bytes, probes: Self.probes(TableFormatExampleTests.entries))
            guard case .failure(let error) = answers else {
                Issue.record("\(what): read as \(answers)")
                continue
            }
            #expect(error.code == .corruption && error.path == "/t.sst" && error.offset != nil, "\(what): \(error)")
        }
    }
}
