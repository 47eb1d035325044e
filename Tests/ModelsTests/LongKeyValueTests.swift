import Engine
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

    @Test func aUniqueStringOfAnyLengthIsSavedAndUpserted() throws {
        let long = String(repeating: "x", count: 70_000)
        let tag = Tag()
        tag.name = long
        try context.insert(tag)
        try context.save()
        // The same long value again: an upsert into the stored object.
        let again = Tag()
        again.name = long
        try context.insert(again)
        let temporary = again.persistentModelID
        #expect(try context.save()[temporary] == tag.persistentModelID)
        #expect(try context.fetchCount(FetchDescriptor<Tag>()) == 1)
        // A value that differs only after the first 65,535 bytes is another value.
        let other = Tag()
        other.name = String(repeating: "x", count: 69_999) + "y"
        try context.insert(other)
        try context.save()
        #expect(other.persistentModelID != tag.persistentModelID)
        let fresh = ModelContext(context.container)
        #expect(Set(try fresh.fetch(FetchDescriptor<Tag>()).map(\.name)) == [long, other.name])
    }

    @Test func aLongUniqueValueCollidesOnUpdateAsAShortOneDoes() throws {
        let long = String(repeating: "é", count: 40_000)  // 80,000 bytes of UTF-8
        let first = Tag()
        first.name = long
        let second = Tag()
        second.name = "short"
        try context.insert(first)
        try context.insert(second)
        try context.save()
        second.name = long
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .uniqueness)
        #expect(error.identifier == second.persistentModelID)
        #expect(error.relatedIdentifiers == [first.persistentModelID])
        second.name = long + "!"
        try context.save()
        // The store's own check of its entries finds them consistent.
        let report = try StoreInspector(engine: context.container.stores[0].engine).checkRecords()
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.entries > 0)
    }

    @Test func aLongUniqueEntryNamingAnObjectOfAnotherValueIsRefusedNotUpserted() throws {
        // Two long values whose entries hold digests; their entries' owners swapped stand for a
        // digest collision: the entry of the second value names the first object.
        let first = Tag()
        first.name = String(repeating: "a", count: 70_000)
        let second = Tag()
        second.name = String(repeating: "b", count: 70_000)
        try context.insert(first)
        try context.insert(second)
        try context.save()
        let engine = context.container.stores[0].engine
        let prefix: [UInt8] = [0x55] + Array("Tag".utf8) + [0] + Array("name".utf8) + [0]
        let entries = try engine.scan(prefix: prefix).collect()
        try #require(entries.count == 2)
        let values = try entries.map { try $0.value() }
        _ = try engine.write { batch in
            batch.put(entries[0].key, values[1])
            batch.put(entries[1].key, values[0])
        }
        let third = Tag()
        third.name = second.name
        try context.insert(third)
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .valueTooLongForKey)
        #expect(error.identifier == third.persistentModelID)
        #expect(error.propertyName == "name")
        #expect(error.relatedIdentifiers.count == 1)
        #expect(try ModelContext(context.container).fetchCount(FetchDescriptor<Tag>()) == 2)
    }

    @Test func aUniqueDataValueOfAnyLengthIsSaved() throws {
        let paper = Paper()
        paper.digest = Data(repeating: 0, count: 66_000)  // each 0x00 escaped: 132,000 bytes
        try context.insert(paper)
        try context.save()
        let twin = Paper()
        twin.digest = Data(repeating: 0, count: 66_000)
        try context.insert(twin)
        let temporary = twin.persistentModelID
        #expect(try context.save()[temporary] == paper.persistentModelID)
        #expect(try context.fetchCount(FetchDescriptor<Paper>()) == 1)
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
