import Engine
import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// Every failure of opening a container is a `ContainerError` naming its configuration, with a
/// code for its cause and the error it wraps kept.
@Suite struct ContainerOpeningErrorTests {
    static func open(_ configurations: [StoreContainer.Configuration]) throws -> StoreContainer {
        try StoreContainer(schema: ContainerModel.schema, configurations: configurations)
    }

    @Test func noConfigurationsIsItsOwnCode() throws {
        let error = try #require(throws: ContainerError.self) { try Self.open([]) }
        #expect(error.code == .noConfigurations)
    }

    @Test func aConfigurationWhosePathIsAFileIsNotADirectoryNamingIt() throws {
        let temporary = TemporaryDirectory("walstore-open-file")
        defer { temporary.remove() }
        try FileManager.default.createDirectory(atPath: temporary.path, withIntermediateDirectories: true)
        let file = temporary.path + "/cloud"
        try Data("keep".utf8).write(to: URL(fileURLWithPath: file))
        let configurations = ContainerOpeningTests.configurations(temporary.path + "/new", cloud: file)
        let error = try #require(throws: ContainerError.self) { try Self.open(configurations) }
        #expect(error.code == .notADirectory)
        #expect(error.configurationNames == ["Cloud"])
        #expect(error.underlying is DataStoreError)
        #expect(error.description.contains("Cloud"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("keep".utf8))
        #expect(!FileManager.default.fileExists(atPath: temporary.path + "/new"), "nothing was made for Local")
    }

    @Test func aConfigurationUnderAFileIsNotADirectoryNamingIt() throws {
        let temporary = TemporaryDirectory("walstore-open-under-file")
        defer { temporary.remove() }
        try FileManager.default.createDirectory(atPath: temporary.path, withIntermediateDirectories: true)
        let file = temporary.path + "/file"
        try Data("keep".utf8).write(to: URL(fileURLWithPath: file))
        let configurations = ContainerOpeningTests.configurations(temporary.path, cloud: file + "/cloud/store")
        let error = try #require(throws: ContainerError.self) { try Self.open(configurations) }
        #expect(error.code == .notADirectory)
        #expect(error.configurationNames == ["Cloud"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path) == ["file"])
    }

    @Test func aTypeChangeWithoutAPlanIsASchemaMismatchNamingTheConfiguration() throws {
        let temporary = TemporaryDirectory("walstore-open-mismatch")
        defer { temporary.remove() }
        let configurations: [StoreContainer.Configuration] = [.init(name: "Settings", entityNames: nil, path: temporary.path + "/settings")]
        let before = try Schema([.init("Setting", attributes: [.init("key", .string), .init("value", .int)])])
        let after = try Schema([.init("Setting", attributes: [.init("key", .string), .init("value", .date)])])
        let container = try StoreContainer(schema: before, configurations: configurations)
        try container.save(
            DataStoreSaveChangesRequest(inserted: [
                DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Setting"), values: ["key": .string("k"), "value": .int(1)])
            ]))
        try container.close()
        let files = try directoryFiles(temporary.path)
        let error = try #require(throws: ContainerError.self) { try StoreContainer(schema: after, configurations: configurations) }
        #expect(error.code == .schemaMismatch)
        #expect(error.configurationNames == ["Settings"])
        #expect((error.underlying as? DataStoreError)?.code == .schemaMismatch)
        #expect(try directoryFiles(temporary.path) == files)
    }
}
