import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

@Suite struct WALDataStoreContractTests {
    @Test(arguments: DataStoreContract<WALDataStore>.checkNames) func walDataStorePassesTheContract(_ check: String) throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        try DataStoreContract(makeStore: home.open).run(check)
    }

    @Test func asyncVariantsAnswerAsTheSynchronousOnes() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
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
