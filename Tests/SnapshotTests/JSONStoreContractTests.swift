import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

@Suite struct JSONStoreContractTests {
    static func makeStore() throws -> JSONStore {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("snapshot-json-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try JSONStore(JSONStoreConfiguration(name: "Blog", schema: BlogModel.schema, fileURL: directory.appendingPathComponent("blog.json")))
    }

    @Test(arguments: DataStoreContract<JSONStore>.checkNames) func jsonStorePassesTheContract(_ check: String) throws {
        try DataStoreContract(makeStore: Self.makeStore).run(check)
    }

    @Test func asyncVariantsAnswerAsTheSynchronousOnes() async throws {
        let store = try Self.makeStore()
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

    @Test func aStoreWithoutSchemaIsRefused() {
        #expect(throws: DataStoreError.self) {
            try JSONStore(JSONStoreConfiguration(name: "x", fileURL: URL(fileURLWithPath: "/nonexistent/x.json")))
        }
    }
}
