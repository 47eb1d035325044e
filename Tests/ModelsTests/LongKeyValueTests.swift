import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

final class Paper: ModelObject, PersistentModel {
    var title = ""
    var body = ""
    var digest = Data()
    static let properties: [ModelProperty<Paper>] = [.attribute(\.title), .attribute(\.body), .attribute(\.digest, options: .unique)]
    static var indexes: [[String]] { [["title"]] }
}

/// A value too long for its unique or index entry is refused before anything is written, with a
/// typed error naming the entity and the property.
@StoreActor @Suite struct LongKeyValueTests {
    let temporary = TemporaryDirectory("walstore-long-keys")
    let context: ModelContext

    init() throws {
        let container = try StoreContainer(
            schema: Schema(models: Paper.self, Tag.self, Post.self, Attachment.self),
            configurations: [.init(name: "Docs", entityNames: nil, path: temporary.path + "/docs")])
        context = ModelContext(container)
    }

    func storeFiles() throws -> [String: Data] { try directoryFiles(temporary.path) }

    @Test func aUniqueStringOverTheKeyLimitIsRefusedNamingEntityAndProperty() throws {
        let tag = Tag()
        tag.name = String(repeating: "x", count: 70_000)
        try context.insert(tag)
        let before = try storeFiles()
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .valueTooLongForKey)
        #expect(error.entityName == "Tag")
        #expect(error.propertyName == "name")
        #expect(error.constraint == ["name"])
        #expect(error.identifier == tag.persistentModelID)
        #expect(try storeFiles() == before, "nothing was written")
        // Shortened, it saves.
        tag.name = String(repeating: "x", count: 60_000)
        try context.save()
        #expect(try ModelContext(context.container).fetch(FetchDescriptor<Tag>()).map(\.name.count) == [60_000])
    }

    @Test func aUniqueDataValueOverTheKeyLimitIsRefused() throws {
        let paper = Paper()
        paper.digest = Data(repeating: 7, count: 66_000)
        try context.insert(paper)
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .valueTooLongForKey)
        #expect(error.entityName == "Paper")
        #expect(error.propertyName == "digest")
    }

    @Test func anIndexedStringOverTheKeyLimitIsRefusedAlsoOnUpdate() throws {
        let paper = Paper()
        paper.title = "short"
        paper.digest = Data([1])
        paper.body = String(repeating: "b", count: 100_000)  // not indexed: any length
        try context.insert(paper)
        try context.save()
        paper.title = String(repeating: "t", count: 65_600)
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .valueTooLongForKey)
        #expect(error.entityName == "Paper")
        #expect(error.propertyName == "title")
        #expect(error.identifier == paper.persistentModelID)
        #expect(try ModelContext(context.container).fetch(FetchDescriptor<Paper>()).map(\.title) == ["short"])
    }
}

@Suite struct LongKeyValueMigrationTests {
    @Test func aMigrationIndexingAValueOverTheKeyLimitIsRefusedAndTheStoreKept() throws {
        let temporary = TemporaryDirectory("walstore-long-key-migration")
        defer { temporary.remove() }
        let configurations: [StoreContainer.Configuration] = [.init(name: "Notes", entityNames: nil, path: temporary.path + "/notes")]
        let plain = try Schema([.init("Note", attributes: [.init("text", .string)])])
        let indexed = try Schema([.init("Note", attributes: [.init("text", .string)], indexes: [["text"]])])
        let container = try StoreContainer(schema: plain, configurations: configurations)
        try container.save(
            DataStoreSaveChangesRequest(inserted: [
                DefaultSnapshot(
                    persistentIdentifier: .temporary(entityName: "Note"), values: ["text": .string(String(repeating: "n", count: 70_000))])
            ]))
        try container.close()
        let error = try #require(throws: ContainerError.self) { try StoreContainer(schema: indexed, configurations: configurations) }
        #expect(error.code == .migrationFailed)
        let cause = try #require(error.underlying as? DataStoreError)
        #expect(cause.code == .valueTooLongForKey)
        #expect(cause.entityName == "Note")
        #expect(cause.propertyName == "text")
        let reopened = try StoreContainer(schema: plain, configurations: configurations)
        #expect(try reopened.fetch(Snapshot.FetchDescriptor(entityName: "Note")).fetchedSnapshots.count == 1)
        try reopened.close()
    }
}
