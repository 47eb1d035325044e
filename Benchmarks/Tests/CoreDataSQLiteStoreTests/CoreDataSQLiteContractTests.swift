import CoreDataSQLiteStore
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// A fresh store directory under the temporary directory, removed by the test.
struct StoreHome {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-sqlite-\(UUID().uuidString)").path

    func open(_ synchronous: CoreDataSQLiteConfiguration.Synchronous = .full, threshold: Int = 1_000_000) throws -> CoreDataSQLiteStore {
        try CoreDataSQLiteStore(CoreDataSQLiteConfiguration(
            name: "Blog", schema: BlogModel.schema, directory: directory, synchronous: synchronous, externalDataThreshold: threshold))
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

@Suite struct CoreDataSQLiteContractTests {
    @Test(arguments: DataStoreContract<CoreDataSQLiteStore>.checkNames) func coreDataShapedStorePassesTheContract(_ check: String) throws {
        let home = StoreHome()
        defer { home.remove() }
        try DataStoreContract(makeStore: { try home.open() }).run(check)
    }

    @Test(arguments: DataStoreContract<CoreDataSQLiteStore>.checkNames) func itPassesItWithSynchronousNormalToo(_ check: String) throws {
        let home = StoreHome()
        defer { home.remove() }
        try DataStoreContract(makeStore: { try home.open(.normal) }).run(check)
    }

    @Test func asyncVariantsAnswerAsTheSynchronousOnes() async throws {
        let home = StoreHome()
        defer { home.remove() }
        let store = try home.open()
        let tag = BlogModel.tag(name: "news")
        let result = try await store.save(DataStoreSaveChangesRequest(inserted: [tag]))
        let permanent = try #require(result.remappedIdentifiers[tag.persistentIdentifier])
        let request = DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Tag", predicate: .attribute("name") == "news"))
        #expect(try await store.fetch(request).fetchedSnapshots.map(\.persistentIdentifier) == [permanent])
        #expect(try await store.fetchCount(request) == 1)
        #expect(try await store.fetchIdentifiers(request) == [permanent])
        try await store.delete(DataStoreBatchDeleteRequest(entityName: "Tag"))
        #expect(try await store.fetchCount(request) == 0)
        try await store.erase()
    }
}
