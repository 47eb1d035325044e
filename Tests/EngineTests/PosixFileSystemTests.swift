import Engine
import EngineTestSupport
import Foundation
import Testing

/// The engine on the real file system: the same behaviour as on the fault-injecting one, and the
/// directory lock across processes.
@Suite struct PosixFileSystemTests {
    /// Runs the lock probe (a sibling executable of the test bundle) on `directory`.
    static func probe(_ directory: String) throws -> Int32 {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("walstore-lock-probe")
        let process = Process()
        process.executableURL = binary
        process.arguments = [directory]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func secondOpenFromAChildProcessIsLocked() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try LogStore.open(at: directory.path)
        try store.write { $0.put(bytes("a"), bytes("1")) }
        #expect(try Self.probe(directory.path) == 3, "a child process must get .locked")
        try store.close()
        #expect(try Self.probe(directory.path) == 0, "after close the child opens it")
    }

    @Test func secondOpenInThisProcessIsLockedOnTheRealFileSystem() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try LogStore.open(at: directory.path)
        let error = #expect(throws: EngineError.self) { try LogStore.open(at: directory.path) }
        #expect(error?.code == .locked)
        #expect(error?.path == directory.path + "/LOCK")
        try store.close()
        try LogStore.open(at: directory.path).close()
    }

    @Test func commitsSurviveReopenOnDisk() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.compressionLevel = 0
        let store = try LogStore.open(at: directory.path, options: options)
        var expected: [[UInt8]: [UInt8]] = [:]
        for i in 0..<300 {
            let value = bytes(String(repeating: "record \(i) ", count: 1 + i % 40))
            try store.write { $0.put(bytes("key/\(i % 100)"), value) }
            expected[bytes("key/\(i % 100)")] = value
        }
        try store.write { $0.delete(bytes("key/7")) }
        expected[bytes("key/7")] = nil
        #expect(store.statistics.segments.count > 1)
        try store.close()
        let reopened = try LogStore.open(at: directory.path, options: options)
        #expect(try reopened.contents() == expected)
        #expect(reopened.statistics.lastSequence == 301)
        try reopened.close()
    }

    @Test func tornTailOnDiskIsTruncatedOnOpen() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try LogStore.open(at: directory.path)
        try store.write { $0.put(bytes("kept"), bytes("yes")) }
        try store.close()
        let segment = directory.path + "/0000000000000001.wal"
        let handle = try #require(FileHandle(forUpdatingAtPath: segment))
        let goodSize = try handle.seekToEnd()
        try handle.write(contentsOf: Data([0x01, 0x02, 0x03, 0x04, 0x05]))
        try handle.close()
        let reopened = try LogStore.open(at: directory.path)
        #expect(try reopened.value(forKey: bytes("kept")) == bytes("yes"))
        #expect(reopened.statistics.recovery.truncatedBytes == 5)
        try reopened.close()
        let size = try FileManager.default.attributesOfItem(atPath: segment)[.size] as? UInt64
        #expect(size == goodSize)
    }

    @Test func openingAFileAsAStoreDirectoryFailsWithAnIOError() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path + "/plain-file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data([1])))
        let error = #expect(throws: EngineError.self) { try LogStore.open(at: file) }
        #expect(error?.code == .io)
        #expect(error?.errno != nil)
        #expect(error?.systemCall != nil)
    }
}
