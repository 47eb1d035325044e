#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Each failure a user meets opening or using a store has its own code, produced here by the
/// real condition, with the engine's error as its cause and each fact printed once.
@Suite struct WALOpenErrorTests {
    /// The store's error for `body`, or `nil` when it throws something else or nothing.
    func storeError(_ body: () throws -> Void) -> DataStoreError? {
        do { try body() } catch let error as DataStoreError { return error } catch { return nil }
        return nil
    }

    @Test func aSecondOpenOfAnOpenStoreIsLocked() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        defer { try? store.close() }
        let error = try #require(storeError { _ = try home.open() })
        switch error.code {
        case .locked: break
        default: Issue.record("expected locked, got \(error)")
        }
        #expect((error.underlying as? EngineError)?.code == .locked)
    }

    @Test func aDirectoryOfOtherFilesIsNotAStoreAndIsLeftAsItWas() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        try FileManager.default.createDirectory(atPath: home.path, withIntermediateDirectories: true)
        try Data("my notes".utf8).write(to: URL(fileURLWithPath: home.path + "/notes.txt"))
        let error = try #require(storeError { _ = try home.open() })
        #expect(error.code == .notAStore)
        #expect(try home.files() == ["notes.txt": Data("my notes".utf8)])
    }

    @Test func anEngineStoreWithKeysButNoHeaderIsNotAStoreAndIsLeftByteIdentical() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let engine = try LogStore.open(at: home.path)
        try engine.write { $0.put(Array("user:1".utf8), Array("Ada".utf8)) }
        try engine.close()
        let before = try home.files()
        let error = try #require(storeError { _ = try home.open() })
        #expect(error.code == .notAStore, "\(error)")
        #expect(try home.files() == before)
        let reopened = try LogStore.open(at: home.path)
        defer { try? reopened.close() }
        #expect(try reopened.value(forKey: [0x00] + Array("store".utf8)) == nil)
    }

    @Test(.enabled(if: DeniedDirectory.isAvailable, "as root, only sysfs refuses a mkdir; this system has none"))
    func aDirectoryTheSystemRefusesIsPermissionDenied() throws {
        let home = WALHome()
        defer {
            chmod(home.temporary.path + "/no-access", 0o700)
            home.temporary.remove()
        }
        let path = try #require(DeniedDirectory.storePath(in: home.temporary))
        let configuration = WALStoreConfiguration(name: "Blog", schema: BlogModel.schema, path: path)
        let error = try #require(storeError { _ = try WALDataStore(configuration) })
        #expect(error.code == .permissionDenied, "\(error)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aClosedStoreRefusesFetchesAsClosed() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "news")]))
        try store.close()
        let error = try #require(storeError { _ = try store.all("Tag") })
        #expect(error.code == .closed, "\(error)")
    }

    @Test func aFlippedBitInAnAssetIsCorrupted() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        do {
            let store = try home.open()
            let image = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 3) })
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.attachment(imageData: image, post: nil)]))
            try store.close()
        }
        let blobs = try FileManager.default.contentsOfDirectory(atPath: home.path + "/blobs").filter { $0.hasSuffix(".blob") }
        let blob = try #require(blobs.first)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: home.path + "/blobs/" + blob))
        bytes[bytes.count / 2] ^= 0x10
        try bytes.write(to: URL(fileURLWithPath: home.path + "/blobs/" + blob))
        let store = try home.open()
        defer { try? store.close() }
        let error = try #require(storeError { _ = try store.all("Attachment") })
        #expect(error.code == .corrupted, "\(error)")
        #expect((error.underlying as? EngineError)?.code == .corruption)
    }

    @Test func aWrappedEngineErrorIsPrintedOnce() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        defer { try? store.close() }
        let error = try #require(storeError { _ = try home.open() })
        let engine = try #require(error.underlying as? EngineError)
        let text = "\(error)"
        #expect(text.components(separatedBy: "\(engine)").count == 2, "\(text)")
        #expect(text.components(separatedBy: engine.message).count == 2, "\(text)")
    }

    @Test func aRefusedLightweightMigrationNamesTheStoredAndTheConfiguredSchema() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let old = try Schema([.init("Counter", attributes: [.init("count", .string)])])
        let new = try Schema([.init("Counter", attributes: [.init("count", .int)])])
        try WALDataStore(WALStoreConfiguration(name: "C", schema: old, path: home.path)).close()
        let error = try #require(storeError { _ = try WALDataStore(WALStoreConfiguration(name: "C", schema: new, path: home.path)) })
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("lightweight stage the stored schema → the configured schema"), "\(error.message)")
    }
}
