import Engine
import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// Routing by entity: each object is stored in its configuration's store and nowhere else;
/// configurations that do not partition the schema, or that split a relationship, are
/// refused; identifiers resolve to their store across reopening.
@Suite struct ContainerRoutingTests {
    static let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)

    /// The root entity names of every record (`R` key) in a store's engine, read from the raw
    /// keys (FORMAT.md: `52` root `00` pk).
    static func recordRoots(_ store: WALDataStore) throws -> [String: Int] {
        var roots: [String: Int] = [:]
        var cursor = try store.engine.scan(prefix: [0x52])
        while let entry = try cursor.next() {
            let name = entry.key.dropFirst().prefix { $0 != 0 }
            roots[String(decoding: name, as: UTF8.self), default: 0] += 1
        }
        return roots
    }

    @Test func everyEntitysObjectsLandInItsStoresDirectoryAndNowhereElse() throws {
        let home = TemporaryDirectory("walstore-models")
        defer { home.remove() }
        let container = try StoreContainer(schema: ContainerModel.schema, configurations: ContainerModel.configurations(in: home.path))
        let tag = BlogModel.tag(name: "news")
        let post = BlogModel.post(title: "hello", date: Self.epoch, tags: [tag.persistentIdentifier])
        let result = try container.save(
            DataStoreSaveChangesRequest(inserted: [
                post, tag, BlogModel.attachment(imageData: Data([1, 2, 3]), post: post.persistentIdentifier),
                ContainerModel.setting("theme", "dark"), ContainerModel.note("groceries"), ContainerModel.note("ideas"),
            ]))
        #expect(Set(result.storeResults.keys) == ["Local", "Cloud", "Shared"])
        #expect(try Self.recordRoots(try #require(container.store(named: "Local"))) == ["Setting": 1])
        #expect(try Self.recordRoots(try #require(container.store(named: "Cloud"))) == ["Post": 1, "Tag": 1, "Attachment": 1])
        // A sub-entity is stored under its root, in its root's store.
        #expect(try Self.recordRoots(try #require(container.store(named: "Shared"))) == ["Item": 2])
        for (name, store) in zip(["Local", "Cloud", "Shared"], container.stores) {
            #expect(store.configuration.path == home.path + "/" + name.lowercased())
            for (temporary, permanent) in result.remappedIdentifiers where try container.store(forEntity: temporary.entityName) === store {
                #expect(permanent.storeIdentifier == store.identifier)
            }
        }
        // No stray transaction records after a save across stores.
        for store in container.stores { #expect(try (store.engine.scan(prefix: [0x58]).collect()).isEmpty) }
    }

    @Test func aRelationshipBetweenConfigurationsIsRefusedNamingBothEnds() throws {
        let home = TemporaryDirectory("walstore-models")
        defer { home.remove() }
        let configurations: [StoreContainer.Configuration] = [
            .init(name: "Local", entityNames: ["Tag", "Setting", "Note"], path: home.path + "/local"),
            .init(name: "Cloud", entityNames: ["Post", "Attachment"], path: home.path + "/cloud"),
        ]
        let error = try #require(throws: ContainerError.self) { try StoreContainer(schema: ContainerModel.schema, configurations: configurations) }
        #expect(error.code == .crossStoreRelationship)
        #expect(Set(error.relationshipEnds.map(\.description)) == ["Post.tags (in Cloud)", "Tag.posts (in Local)"])
        #expect(Set(error.configurationNames) == ["Local", "Cloud"])
        // Nothing was opened.
        #expect(!FileManager.default.fileExists(atPath: home.path + "/local"))
    }

    @Test func anEntityInNoConfigurationOrInTwoIsRefused() throws {
        let home = TemporaryDirectory("walstore-models")
        defer { home.remove() }
        let missing = try #require(throws: ContainerError.self) {
            try StoreContainer(
                schema: ContainerModel.schema,
                configurations: [
                    .init(name: "Cloud", entityNames: ["Post", "Tag", "Attachment", "Setting"], path: home.path + "/cloud")
                ])
        }
        #expect(missing.code == .entityInNoConfiguration)
        #expect(missing.entityName == "Item")
        // Naming a sub-entity names its root's tree: Note and Item cannot go apart.
        let twice = try #require(throws: ContainerError.self) {
            try StoreContainer(
                schema: ContainerModel.schema,
                configurations: [
                    .init(name: "Cloud", entityNames: ["Post", "Tag", "Attachment", "Item"], path: home.path + "/cloud"),
                    .init(name: "Local", entityNames: ["Setting", "Note"], path: home.path + "/local"),
                ])
        }
        #expect(twice.code == .entityInSeveralConfigurations)
        #expect(twice.configurationNames == ["Cloud", "Local"])
        let unknown = try #require(throws: ContainerError.self) {
            try StoreContainer(schema: ContainerModel.schema, configurations: [.init(name: "A", entityNames: ["Nope"], path: home.path + "/a")])
        }
        #expect(unknown.code == .unknownEntity)
        let samePath = try #require(throws: ContainerError.self) {
            try StoreContainer(
                schema: ContainerModel.schema,
                configurations: [
                    .init(name: "A", entityNames: ["Setting"], path: home.path + "/a"), .init(name: "B", entityNames: nil, path: home.path + "/a/"),
                ])
        }
        #expect(samePath.code == .duplicateConfiguration)
        // A configuration without a list takes every entity no other one names.
        let rest = try StoreContainer(
            schema: ContainerModel.schema,
            configurations: [
                .init(name: "Local", entityNames: ["Setting"], path: home.path + "/l"), .init(name: "Rest", entityNames: nil, path: home.path + "/r"),
            ])
        #expect(try rest.store(forEntity: "Note") === rest.store(named: "Rest"))
        #expect(try rest.store(forEntity: "Setting") === rest.store(named: "Local"))
    }

    @Test func identifiersResolveToTheirStoresAcrossReopening() throws {
        let home = TemporaryDirectory("walstore-models")
        defer { home.remove() }
        var ids: [PersistentIdentifier] = []
        do {
            let container = try StoreContainer(schema: ContainerModel.schema, configurations: ContainerModel.configurations(in: home.path))
            let inserted = [ContainerModel.setting("a", "1"), ContainerModel.note("n"), BlogModel.post(title: "p", date: Self.epoch)]
            let result = try container.save(DataStoreSaveChangesRequest(inserted: inserted))
            ids = inserted.map { result.remappedIdentifiers[$0.persistentIdentifier]! }
            try container.close()
        }
        let container = try StoreContainer(schema: ContainerModel.schema, configurations: ContainerModel.configurations(in: home.path))
        let found = try container.snapshots(for: ids)
        #expect(Set(found.keys) == Set(ids))
        #expect(found[ids[0]]?["key"] == .string("a"))
        #expect(found[ids[1]]?["title"] == .string("n"))
        #expect(try container.store(for: ids[0]) === container.store(named: "Local"))
        #expect(try container.store(for: ids[2]) === container.store(named: "Cloud"))
        // An identifier set spanning stores is split: each store is asked about its own.
        let posts = try container.fetch(Snapshot.FetchDescriptor(entityName: "Post", predicate: .identifier(in: ids))).fetchedSnapshots
        #expect(posts.map(\.persistentIdentifier) == [ids[2]])
        let items = try container.fetch(Snapshot.FetchDescriptor(entityName: "Item", predicate: .identifier(in: ids) && .attribute("title") == "n"))
        #expect(items.fetchedSnapshots.map(\.persistentIdentifier) == [ids[1]])
        // A foreign identifier, and an update routed to the wrong store, are refused.
        let foreign = try PersistentIdentifier.identifier(for: "elsewhere", entityName: "Post", primaryKey: UUID())
        #expect(throws: ContainerError.self) { try container.snapshots(for: [foreign]) }
        let misrouted = try PersistentIdentifier.identifier(for: ids[0].storeIdentifier!, entityName: "Post", primaryKey: UUID())
        let error = try #require(throws: ContainerError.self) {
            try container.save(DataStoreSaveChangesRequest(updated: [DefaultSnapshot(persistentIdentifier: misrouted, values: ["title": "x"])]))
        }
        #expect(error.code == .foreignIdentifier)
    }
}
