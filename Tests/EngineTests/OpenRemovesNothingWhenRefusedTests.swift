@testable import Engine
import EngineTestSupport
import Testing

/// Open removes leftovers (segments below the manifest's log start, tables it does not list)
/// only once it knows it will succeed: a manifest open refuses must not cost the files it
/// disowns.
@Suite struct OpenRemovesNothingWhenRefusedTests {
    static let dir = VersionRuleTests.dir

    /// The manifest at `path` with its log start (bytes 16..<24) raised by one, resealed.
    static func raisingLogStart(_ fs: FaultInjectingFileSystem, path: String) throws -> UInt64 {
        var bytes = try #require(fs.contents(of: path))
        let start = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[16 + $1]) << (8 * UInt64($1)) }
        for i in 0..<8 { bytes[16 + i] = UInt8(truncatingIfNeeded: (start + 1) >> (8 * UInt64(i))) }
        fs.setContents(VersionRuleTests.resealed(bytes, checksumAt: nil), of: path)
        return start
    }

    /// Every key of the store at `dir` and its value.
    static func everyEntry(_ fs: FaultInjectingFileSystem) throws -> [[UInt8]: [UInt8]] {
        let store = try LogStore.open(at: dir, options: LogStore.Options(), fileSystem: fs)
        defer { try? store.close() }
        var entries: [[UInt8]: [UInt8]] = [:]
        var cursor = try store.scan()
        while let entry = try cursor.next() { entries[entry.key] = try entry.value() }
        return entries
    }

    /// A store of a table and, after the manifest's log start, a tail of several segments (the
    /// values do not compress).
    static func store() throws -> FaultInjectingFileSystem {
        let fs = FaultInjectingFileSystem()
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.compaction = .manual
        let store = try LogStore.open(at: dir, options: options, fileSystem: fs)
        var random = SystemRandomNumberGenerator()
        let value = { (0..<1000).map { _ in UInt8.random(in: 0...255, using: &random) } }
        for i in 0..<50 { try store.write { $0.put(bytes("a\(i)"), value()) } }
        try store.compact()
        for i in 0..<200 { try store.write { $0.put(bytes("b\(i)"), value()) } }
        try store.close()
        return fs
    }

    @Test func aLogStartRaisedPastTheLogIsRefusedAndTheSegmentBelowItStays() throws {
        let fs = try Self.store()
        let expected = try Self.everyEntry(fs)
        #expect(expected.count == 250)
        let path = Self.dir + "/MANIFEST"
        let original = try #require(fs.contents(of: path))
        let start = try Self.raisingLogStart(fs, path: path)
        let segment = Self.dir + "/" + SegmentFile.name(start)
        #expect(fs.contents(of: segment) != nil, "segment \(start) is there")
        #expect(fs.contents(of: Self.dir + "/" + SegmentFile.name(start + 1)) != nil, "and the one after it")
        let before = VersionRuleTests.snapshot(fs)
        let error = VersionRuleTests.openAndRead(fs)
        #expect(error?.code == .corruption, "\(String(describing: error))")
        #expect(VersionRuleTests.snapshot(fs) == before, "a refused open removes and changes nothing")
        // With its manifest as it was, the store opens with every commit.
        fs.setContents(original, of: path)
        #expect(try Self.everyEntry(fs) == expected)
    }
}
