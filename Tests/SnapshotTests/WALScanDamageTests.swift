@testable import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// A fetch whose engine scan meets a damaged table block in a later batch throws `corrupted`:
/// it never returns the records before the damage as if they were all.
@Suite struct WALScanDamageTests {
    static let path = "/scan-damage-store"

    static var configuration: WALStoreConfiguration {
        var options = LogStore.Options()
        options.compressionLevel = 0
        options.compaction = LogStore.CompactionPolicy(isAutomatic: false, flushBytes: 0, mergeFanIn: 8)
        options.writesSegmentHints = false
        return WALStoreConfiguration(name: "Blog", schema: BlogModel.schema, path: path, options: options)
    }

    @Test func aFetchOverADamagedLaterTableBlockThrowsCorrupted() throws {
        let fs = FaultInjectingFileSystem()
        let count = 1500
        do {
            let store = try WALDataStore(Self.configuration, fileSystem: fs)
            let epoch = Date(timeIntervalSinceReferenceDate: 600_000_000)
            let posts = (0..<count).map { BlogModel.post(title: "post \($0)", date: epoch.addingTimeInterval(Double($0))) }
            _ = try store.save(DataStoreSaveChangesRequest(inserted: posts))
            #expect(try store.all("Post").count == count)
            _ = try store.engine.compact()
            try store.close()
        }
        // Damage the block holding the last record (key "R…"), which only a later scan batch reaches.
        var damaged = false
        for name in fs.names(in: Self.path) where name.hasSuffix(".sst") {
            let file = Self.path + "/" + name
            let contents = try #require(fs.contents(of: file))
            let intact = try TableSalvage(bytes: contents, path: file)
            guard let last = intact.entries.last(where: { $0.key.first == UInt8(ascii: "R") })?.key else { continue }
            for handle in intact.keptBlocks where !damaged {
                var copy = contents
                copy[Int(handle.offset + handle.length / 2)] ^= 1
                guard !(try TableSalvage(bytes: copy, path: file).entries.contains { $0.key == last }) else { continue }
                fs.flipBit(in: file, atByte: Int(handle.offset + handle.length / 2))
                damaged = true
            }
        }
        #expect(damaged)
        let store = try WALDataStore(Self.configuration, fileSystem: fs)
        defer { try? store.close() }
        let error = #expect(throws: DataStoreError.self) { _ = try store.all("Post").count }
        #expect(error?.code == .corrupted, "\(String(describing: error))")
    }
}
