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
    static func documentedBytes() throws -> [UInt8] {
        let formatFile = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FORMAT.md")
        let text = try String(contentsOf: formatFile, encoding: .utf8)
        let begin = try #require(text.range(of: "<!-- table-example:begin -->"))
        let end = try #require(text.range(of: "<!-- table-example:end -->"))
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
        #expect(documented == table, "FORMAT.md's table example differs from what the builder writes:\n\(table.map { String(format: "%02x", $0) }.joined(separator: " "))")
    }

    @Test func theExampleTableReadsAsDocumented() throws {
        let table = try TableReader(source: MemoryTableSource(bytes: try Self.documentedBytes()))
        #expect(table.footer == TableFooter(
            version: 4, filter: BlockHandle(offset: 42, length: 14), index: BlockHandle(offset: 56, length: 19),
            filterChecksum: 0x2c86f605, indexChecksum: 0x59e2c935))
        #expect(try table.dataBlockCount == 1)
        #expect(try table.filter(ofPartition: 0).probes == 6)
        #expect(try table.entry(forKey: bytes("user/2")) == Self.entries[1])
        #expect(try table.entries() == Self.entries)
        #expect(try table.entry(forKey: bytes("user/0")) == nil)
    }
}
