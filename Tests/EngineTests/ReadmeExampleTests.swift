import Engine
import EngineTestSupport
import Foundation
import Testing

/// The engine guide's usage example (docs/engine.md), compiled and run here; a test keeps the
/// guide's copy identical.
@Suite struct ReadmeExampleTests {
    static func readmeExample(directory: String) throws -> [UInt8]? {
        // README:begin
        let store = try LogStore.open(at: directory)  // creates the directory, takes its lock
        defer { try? store.close() }

        // One atomic, durable commit: when `write` returns, both puts and the delete are on disk.
        let sequence = try store.write { batch in
            batch.put(Array("user/1".utf8), Array(#"{"name":"Ada"}"#.utf8))
            batch.put(Array("user/2".utf8), Array(#"{"name":"Grace"}"#.utf8))
            batch.delete(Array("user/0".utf8))
        }
        print("committed as sequence \(sequence)")

        let ada = try store.value(forKey: Array("user/1".utf8))  // one pread + crc check, or cached
        var cursor = try store.scan(prefix: Array("user/".utf8))  // keys in byte order
        while let entry = try cursor.next() {  // throws, never ends early, if a table block is damaged
            print(String(decoding: entry.key, as: UTF8.self), String(decoding: try entry.value(), as: UTF8.self))
        }
        // README:end
        return ada
    }

    @Test func readmeExampleRunsAndReadsBackWhatItWrote() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        #expect(try Self.readmeExample(directory: directory.path + "/store") == Array(#"{"name":"Ada"}"#.utf8))
        let reopened = try LogStore.open(at: directory.path + "/store")
        #expect(try (reopened.scan(prefix: []).collect()).count == 2)
        try reopened.close()
    }

    @Test func readmeShowsExactlyTheCompiledExample() throws {
        let (compiled, shown) = try ReadmeSnippet.compiledAndShown(sourcePath: #filePath, marker: "readme-example", document: "docs/engine.md")
        #expect(!compiled.isEmpty)
        #expect(shown == compiled)
    }
}
