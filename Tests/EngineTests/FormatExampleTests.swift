import Engine
import EngineTestSupport
import Foundation
import Testing

/// FORMAT.md's worked example is produced by the engine and checked byte for byte, so the
/// document cannot drift from the code.
@Suite struct FormatExampleTests {
    /// The segment file of a new store after one commit: put "user/1" = "Ada", delete "user/0",
    /// blocks stored raw (compression level 0).
    static func exampleSegment() throws -> [UInt8] {
        let fs = FaultInjectingFileSystem()
        var options = LogStore.Options()
        options.compressionLevel = 0
        let store = try LogStore.open(at: "/example", options: options, fileSystem: fs)
        let sequence = try store.write { batch in
            batch.put(bytes("user/1"), bytes("Ada"))
            batch.delete(bytes("user/0"))
        }
        #expect(sequence == 1)
        try store.close()
        return try #require(fs.contents(of: "/example/0000000000000001.wal"))
    }

    /// The manifest of the same store after `compact()`: one table holding `user/1` (the delete
    /// dropped, no older table being left for it to hide), the log resuming at segment 2.
    static func exampleManifest() throws -> [UInt8] {
        let fs = FaultInjectingFileSystem()
        var options = LogStore.Options()
        options.compressionLevel = 0
        let store = try LogStore.open(at: "/example", options: options, fileSystem: fs)
        try store.write { batch in
            batch.put(bytes("user/1"), bytes("Ada"))
            batch.delete(bytes("user/0"))
        }
        try store.compact()
        try store.close()
        return try #require(fs.contents(of: "/example/MANIFEST"))
    }

    /// The bytes of the hex dump between the worked-example markers of FORMAT.md. Each line is an
    /// offset, then bytes in hex, then an optional `#` comment; offsets must run on.
    static func documentedBytes(_ marker: String = "worked-example") throws -> [UInt8] {
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
            #expect(offset == result.count, "FORMAT.md example line at offset \(first) does not run on")
            for token in tokens.dropFirst() {
                result.append(try #require(UInt8(token, radix: 16), "bad hex byte \(token)"))
            }
        }
        return result
    }

    @Test func formatDocumentWorkedExampleMatchesTheEngine() throws {
        let produced = try Self.exampleSegment()
        let documented = try Self.documentedBytes()
        #expect(
            documented == produced,
            "FORMAT.md's worked example differs from what the engine writes:\n\(produced.map { String(format: "%02x", $0) }.joined(separator: " "))")
    }

    @Test func formatDocumentManifestExampleMatchesTheEngine() throws {
        let produced = try Self.exampleManifest()
        let documented = try Self.documentedBytes("manifest-example")
        #expect(
            documented == produced,
            "FORMAT.md's manifest example differs from what the engine writes:\n\(produced.map { String(format: "%02x", $0) }.joined(separator: " "))"
        )
    }
}
