@testable import Engine
import EngineTestSupport
import Foundation
import Testing

/// FORMAT.md's table example ("Table files", "Worked example") is what the builder writes, byte
/// for byte, and reads back as documented.
@Suite struct TableFormatExampleTests {
    static let entries = [
        TableEntry(key: bytes("user/1"), sequence: 1, value: .value(bytes("Ada"))),
        TableEntry(key: bytes("user/2"), sequence: 2, value: .tombstone),
        TableEntry(key: bytes("user/3"), sequence: 3, value: .value(bytes("Lin"))),
    ]

    /// The bytes of the hex dump between the table-example markers of FORMAT.md (offset, bytes,
    /// optional `#` comment per line; offsets must run on).
    static func documentedBytes(_ marker: String = "table-example") throws -> [UInt8] {
        let formatFile = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FORMAT.md")
        let text = try String(contentsOf: formatFile, encoding: .utf8)
        let begin = try #require(text.range(of: "<!-- \(marker):begin -->"))
        let end = try #require(text.range(of: "<!-- \(marker):end -->"))
        var result: [UInt8] = []
        for line in text[begin.upperBound..<end.lowerBound].split(separator: "\n") {
            let code = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
            let tokens = code.split(separator: " ")
            guard let first = tokens.first, let offset = Int(first, radix: 16), first.count == 4 else { continue }
            #expect(offset == result.count, "FORMAT.md table example line at offset \(first) does not run on")
            for token in tokens.dropFirst() {
                result.append(try #require(UInt8(token, radix: 16), "bad hex byte \(token)"))
            }
        }
        return result
    }

    /// The version-4 example: written only by tests now, read by every build.
    static var version4: TableBuilder.Options {
        var options = TableBuilder.Options()
        options.version = 4
        return options
    }

    @Test func theExampleTableIsTheBytesFormatMDShows() throws {
        let table = try TableBuilder.build(Self.entries, options: Self.version4)
        let documented = try Self.documentedBytes()
        #expect(documented.count == 135)
        #expect(
            documented == table,
            "FORMAT.md's table example differs from what the builder writes:\n\(table.map { String(format: "%02x", $0) }.joined(separator: " "))")
    }

    @Test func theExampleTableReadsAsDocumented() throws {
        let table = try TableReader(source: MemoryTableSource(bytes: try Self.documentedBytes()))
        #expect(
            table.footer
                == TableFooter(
                    version: 4, filter: BlockHandle(offset: 42, length: 14), index: BlockHandle(offset: 56, length: 19),
                    filterChecksum: 0x2c86f605, indexChecksum: 0x59e2c935))
        #expect(try table.dataBlockCount == 1)
        #expect(try table.filter(ofPartition: 0).probes == 6)
        #expect(try table.entry(forKey: bytes("user/2")) == Self.entries[1])
        #expect(try table.entries() == Self.entries)
        #expect(try table.entry(forKey: bytes("user/0")) == nil)
    }

    /// The version-5 example: the same entries in data blocks of one entry each and partitions
    /// of at most two blocks.
    static var version5: TableBuilder.Options {
        var options = TableBuilder.Options()
        options.blockSize = 16
        options.partitionSize = 32
        return options
    }

    @Test func theVersion5ExampleTableIsTheBytesFormatMDShows() throws {
        let table = try TableBuilder.build(Self.entries, options: Self.version5)
        let documented = try Self.documentedBytes("table-v5-example")
        #expect(
            documented == table,
            "FORMAT.md's version-5 table example differs from what the builder writes:\n\(table.map { String(format: "%02x", $0) }.joined(separator: " "))"
        )
    }

    @Test func theVersion5ExampleTableReadsAsDocumented() throws {
        let stored = try Self.documentedBytes("table-v5-example")
        let fs = FaultInjectingFileSystem()
        _ = try fs.createDirectory("/t")
        let file = try fs.openFile("/t/1.sst", create: true)
        try file.write(stored, at: 0)
        let table = try TableReader(source: FileTableSource(file: file), id: 1, cache: TableBlockCache(capacity: 1 << 20))
        #expect(table.footer.version == 5)
        #expect(table.footer.partitionCount == 2)
        let loaded = try table.metadataLoaded()
        #expect(loaded.partitions.map(\.dataStart) == [0, 51])
        #expect(try table.dataBlockCount == 3)
        let reads = fs.readCount
        #expect(try table.entry(forKey: bytes("user/3")) == Self.entries[2])
        #expect(fs.readCount - reads == 3, "partition 1's filter, its index, block 2")
        #expect(try table.filter(ofPartition: 1).probes == 6)
        #expect(try table.entries() == Self.entries)
        #expect(try table.entries(reverse: true) == Self.entries.reversed())
        #expect(try table.entry(forKey: bytes("user/0")) == nil)
        #expect(try table.entry(forKey: bytes("v")) == nil)
    }
}
