#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Engine
import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// Opening a container: all of its stores or none, nothing left created behind a refusal,
/// missing parents made, foreign data refused, each refusal its own code naming the
/// configuration; in-memory and read-only configurations.
@Suite struct ContainerOpeningTests {
    /// `Local` (settings) and `Cloud` (the blog) under `directory`.
    static func configurations(_ directory: String, cloud: String? = nil, cloudAllowsSave: Bool = true) -> [StoreContainer.Configuration] {
        [
            .init(name: "Local", entityNames: ["Setting"], path: directory + "/local"),
            .init(
                name: "Cloud", entityNames: ["Post", "Tag", "Attachment", "Item"], path: cloud ?? directory + "/cloud", allowsSave: cloudAllowsSave),
        ]
    }

    static func open(_ configurations: [StoreContainer.Configuration]) throws -> StoreContainer {
        try StoreContainer(schema: ContainerModel.schema, configurations: configurations)
    }

    /// The container's error for `body`, or `nil` when it throws something else or nothing.
    func containerError(_ body: () throws -> Void) -> ContainerError? {
        do { try body() } catch let error as ContainerError { return error } catch { return nil }
        return nil
    }

    @Test func aLockedSecondStoreLeavesTheFirstClosed() throws {
        let temporary = TemporaryDirectory("walstore-open")
        defer { temporary.remove() }
        let configurations = Self.configurations(temporary.path)
        do {
            let container = try Self.open(configurations)
            try container.save(DataStoreSaveChangesRequest(inserted: [ContainerModel.setting("theme", "dark")]))
            try container.close()
        }
        let holder = try LogStore.open(at: configurations[1].path)  // holds Cloud's lock
        defer { try? holder.close() }
        let localFiles = try directoryFiles(configurations[0].path)
        let error = try #require(containerError { _ = try Self.open(configurations) })
        #expect(try directoryFiles(configurations[0].path) == localFiles, "Local, opened and closed again, is byte-identical")
        switch error.code {
        case .locked: break
        default: Issue.record("expected locked, got \(error)")
        }
        #expect(error.configurationNames == ["Cloud"])
        #expect((error.underlying as? DataStoreError)?.code == .locked)
        // Local was closed again: it opens now.
        let local = try WALDataStore(
            WALStoreConfiguration(
                name: "Local", schema: try Schema([ContainerModel.schema.entities.first { $0.name == "Setting" }!]), path: configurations[0].path))
        try local.close()
    }

    @Test func aDirectoryOfOtherFilesIsRefusedBeforeAnyStoreIsCreated() throws {
        let temporary = TemporaryDirectory("walstore-open")
        defer { temporary.remove() }
        let configurations = Self.configurations(temporary.path + "/new/parents")
        try FileManager.default.createDirectory(atPath: configurations[1].path, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: configurations[1].path + "/readme.txt"))
        let error = try #require(containerError { _ = try Self.open(configurations) })
        #expect(error.code == .notAStore)
        #expect(error.configurationNames == ["Cloud"])
        #expect(!FileManager.default.fileExists(atPath: configurations[0].path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: configurations[1].path) == ["readme.txt"])
    }

    @Test func anEngineStoreNoWALDataStoreWroteIsRefusedAndLeftByteIdentical() throws {
        let temporary = TemporaryDirectory("walstore-open")
        defer { temporary.remove() }
        let configurations = Self.configurations(temporary.path)
        let engine = try LogStore.open(at: configurations[1].path)
        try engine.write { $0.put(Array("user:1".utf8), Array("Ada".utf8)) }
        try engine.close()
        let before = try directoryFiles(configurations[1].path)
        let error = try #require(containerError { _ = try Self.open(configurations) })
        #expect(error.code == .notAStore, "\(error)")
        #expect(try directoryFiles(configurations[1].path) == before)
        #expect(!FileManager.default.fileExists(atPath: configurations[0].path))
    }

    @Test(.enabled(if: DeniedDirectory.isAvailable, "as root, only sysfs refuses a mkdir; this system has none"))
    func aRefusedNewStoreRemovesTheStoreAndParentsMadeBeforeIt() throws {
        let temporary = TemporaryDirectory("walstore-open")
        defer {
            chmod(temporary.path + "/no-access", 0o700)
            temporary.remove()
        }
        let denied = try #require(DeniedDirectory.storePath(in: temporary))
        let configurations = Self.configurations(temporary.path + "/made/for/local", cloud: denied + "/cloud")
        let error = try #require(containerError { _ = try Self.open(configurations) })
        #expect(error.code == .permissionDenied, "\(error)")
        #expect(error.configurationNames == ["Cloud"])
        #expect(!FileManager.default.fileExists(atPath: temporary.path + "/made"), "Local's store and the parents made for it are removed")
    }

    @Test func missingParentDirectoriesAreMade() throws {
        let temporary = TemporaryDirectory("walstore-open")
        defer { temporary.remove() }
        let configurations = Self.configurations(temporary.path + "/a/b/c")
        let container = try Self.open(configurations)
        try container.save(DataStoreSaveChangesRequest(inserted: [ContainerModel.setting("theme", "dark")]))
        try container.close()
        let reopened = try Self.open(configurations)
        defer { try? reopened.close() }
        #expect(try reopened.fetchCount(Snapshot.FetchDescriptor(entityName: "Setting")) == 1)
    }

    @Test func aClosedContainerRefusesEveryCallAsClosed() throws {
        let temporary = TemporaryDirectory("walstore-open")
        defer { temporary.remove() }
        let container = try Self.open(Self.configurations(temporary.path))
        try container.close()
        try container.close()
        let fetch = try #require(containerError { _ = try container.fetch(Snapshot.FetchDescriptor(entityName: "Setting")) })
        #expect(fetch.code == .closed)
        let save = try #require(containerError { try container.save(DataStoreSaveChangesRequest(inserted: [ContainerModel.setting("a", "b")])) })
        #expect(save.code == .closed)
    }

    @Test func aFlippedBitInAStoreIsCorruptedNamingItsConfiguration() throws {
        let temporary = TemporaryDirectory("walstore-open")
        defer { temporary.remove() }
        let configurations = Self.configurations(temporary.path)
        do {
            let container = try Self.open(configurations)
            for key in ["a", "b", "c"] { try container.save(DataStoreSaveChangesRequest(inserted: [ContainerModel.setting(key, "1")])) }
            try container.close()
        }
        // The first frame (the store's header record) begins after the 32-byte segment header.
        let segment = configurations[0].path + "/0000000000000001.wal"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
        bytes[32 + 32 + 16 + 8] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: segment))
        let error = try #require(containerError { _ = try Self.open(configurations) })
        #expect(error.code == .corrupted, "\(error)")
        #expect(error.configurationNames == ["Local"])
        #expect((error.underlying as? DataStoreError)?.code == .corrupted)
    }

    @Test func aContainerErrorPrintsItsCausesOnce() throws {
        let temporary = TemporaryDirectory("walstore-open")
        defer { temporary.remove() }
        let configurations = Self.configurations(temporary.path)
        let first = try Self.open(configurations)
        defer { try? first.close() }
        let error = try #require(containerError { _ = try Self.open(configurations) })
        let store = try #require(error.underlying as? DataStoreError)
        let engine = try #require(store.underlying as? EngineError)
        let text = "\(error)"
        for part in [store.message, engine.message] {
            #expect(text.components(separatedBy: part).count == 2, "\(text)")
        }
    }

    @Test func inMemoryStoresStartEmptyAndLeaveNothingBehind() throws {
        let configurations: [StoreContainer.Configuration] = [
            .init(name: "Local", entityNames: ["Setting"], isStoredInMemoryOnly: true),
            .init(name: "Cloud", entityNames: nil, isStoredInMemoryOnly: true),
        ]
        let container = try Self.open(configurations)
        try container.save(DataStoreSaveChangesRequest(inserted: [ContainerModel.setting("theme", "dark"), BlogModel.tag(name: "news")]))
        #expect(try container.fetchCount(Snapshot.FetchDescriptor(entityName: "Setting")) == 1)
        #expect(try container.fetchCount(Snapshot.FetchDescriptor(entityName: "Tag")) == 1)
        let paths = container.stores.map(\.configuration.path)
        #expect(paths.allSatisfy { FileManager.default.fileExists(atPath: $0) })
        let second = try Self.open(configurations)
        #expect(try second.fetchCount(Snapshot.FetchDescriptor(entityName: "Setting")) == 0)
        try second.close()
        try container.close()
        #expect(paths.allSatisfy { !FileManager.default.fileExists(atPath: $0) })
    }

    @Test func aReadOnlyConfigurationRefusesSavesWritingNothingAndStillFetches() throws {
        let temporary = TemporaryDirectory("walstore-open")
        defer { temporary.remove() }
        do {
            let container = try Self.open(Self.configurations(temporary.path))
            try container.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "news")]))
            try container.close()
        }
        let container = try Self.open(Self.configurations(temporary.path, cloudAllowsSave: false))
        defer { try? container.close() }
        let before = try directoryFiles(temporary.path)
        let error = try #require(
            containerError {
                try container.save(DataStoreSaveChangesRequest(inserted: [ContainerModel.setting("theme", "dark"), BlogModel.tag(name: "sport")]))
            })
        #expect(error.code == .saveNotAllowed)
        #expect(error.configurationNames == ["Cloud"])
        #expect(try directoryFiles(temporary.path) == before)
        #expect(try container.fetchCount(Snapshot.FetchDescriptor(entityName: "Tag")) == 1)
        #expect(try container.fetchCount(Snapshot.FetchDescriptor(entityName: "Setting")) == 0)
        try container.save(DataStoreSaveChangesRequest(inserted: [ContainerModel.setting("theme", "dark")]))
        #expect(try container.fetchCount(Snapshot.FetchDescriptor(entityName: "Setting")) == 1)
    }

    @Test func aContextOfAClosedContainerThrowsTheContainersClosed() throws {
        let temporary = TemporaryDirectory("walstore-open")
        defer { temporary.remove() }
        let container = try Self.open(Self.configurations(temporary.path))
        let context = StoreContext(container)
        try container.close()
        let error = try #require(containerError { _ = try context.fetch(Snapshot.FetchDescriptor(entityName: "Setting")) })
        #expect(error.code == .closed)
    }

    @Test func aModelContextSavingIntoAReadOnlyConfigurationGetsSaveNotAllowed() async throws {
        let temporary = TemporaryDirectory("walstore-open")
        defer { temporary.remove() }
        let code = try await StoreActor.run { () throws -> String? in
            let container = try StoreContainer(
                schema: Schema(models: Post.self, Attachment.self, Tag.self, Draft.self),
                configurations: [
                    .init(name: "Local", entityNames: ["Draft"], path: temporary.path + "/Local", allowsSave: false),
                    .init(name: "Cloud", entityNames: ["Post", "Attachment", "Tag"], path: temporary.path + "/Cloud"),
                ])
            defer { try? container.close() }
            let context = ModelContext(container)
            let draft = Draft()
            draft.text = "not saved"
            try context.insert(draft)
            do {
                try context.save()
                return nil
            } catch let error as ContainerError {
                return "\(error.code) \(error.configurationNames)"
            }
        }
        #expect(code == #"saveNotAllowed ["Local"]"#)
    }
}
