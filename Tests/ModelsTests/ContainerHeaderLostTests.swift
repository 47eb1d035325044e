import Engine
import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// A configuration's store that lost its `WALDataStore` header (salvage dropped the commit that
/// held it) is refused by the container, which opens no store and writes nothing; the
/// configuration's `missingHeader` starts a new store there on purpose.
@Suite struct ContainerHeaderLostTests {
    /// The container's error for `body`, or `nil` when it throws something else or nothing.
    func containerError(_ body: () throws -> Void) -> ContainerError? {
        do { try body() } catch let error as ContainerError { return error } catch { return nil }
        return nil
    }

    /// Both configurations' stores, made and closed; then Cloud's first commit (its header's) is
    /// damaged and Cloud is salvaged, keeping no commit.
    static func salvagedCloud(_ directory: String) throws -> [StoreContainer.Configuration] {
        let configurations = ContainerOpeningTests.configurations(directory)
        let container = try ContainerOpeningTests.open(configurations)
        try container.save(DataStoreSaveChangesRequest(inserted: [ContainerModel.setting("theme", "dark")]))
        try container.close()
        let cloud = configurations[1].path
        let segment = try #require(try FileManager.default.contentsOfDirectory(atPath: cloud).filter { $0.hasSuffix(".wal") }.sorted().first)
        let file = URL(fileURLWithPath: cloud + "/" + segment)
        var bytes = try Data(contentsOf: file)
        bytes[FormatTesting.segmentHeaderSize + FormatTesting.frameHeaderSize + 4] ^= 0x5A
        try bytes.write(to: file)
        let report = try LogStore.salvage(at: cloud)
        #expect(report.lastKeptSequence == 0 && !report.quarantined.isEmpty, "\(report)")
        return configurations
    }

    @Test func aSalvagedStoreThatLostItsHeaderIsRefusedAndNoStoreIsOpened() throws {
        let temporary = TemporaryDirectory("walstore-header-lost")
        defer { temporary.remove() }
        let configurations = try Self.salvagedCloud(temporary.path)
        let local = try directoryFiles(configurations[0].path)
        let cloud = try directoryFiles(configurations[1].path)
        let error = try #require(containerError { _ = try ContainerOpeningTests.open(configurations) })
        #expect(error.code == .headerLost, "\(error)")
        #expect(error.configurationNames == ["Cloud"])
        #expect((error.underlying as? DataStoreError)?.code == .headerLost)
        #expect(error.message.contains("walstore verify") && error.message.contains("missingHeader"), "\(error.message)")
        #expect(try directoryFiles(configurations[1].path) == cloud, "the salvaged store is byte-identical")
        #expect(try directoryFiles(configurations[0].path) == local, "the other store is byte-identical")
    }

    @Test func theConfigurationsMissingHeaderOptionStartsANewStoreThere() throws {
        let temporary = TemporaryDirectory("walstore-header-lost")
        defer { temporary.remove() }
        var configurations = try Self.salvagedCloud(temporary.path)
        configurations[1].missingHeader = .createStore
        let container = try ContainerOpeningTests.open(configurations)
        defer { try? container.close() }
        let settings = try container.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Setting")))
        #expect(settings.fetchedSnapshots.count == 1, "Local kept its setting")
    }
}
