import Foundation
import Snapshot
import Testing

@Suite struct DefaultSnapshotTests {
    @Test func copyRewritesToOneAndToManyReferencesToInsertedObjects() throws {
        let post = PersistentIdentifier.temporary(entityName: "Post")
        let tag = PersistentIdentifier.temporary(entityName: "Tag")
        let existing = try PersistentIdentifier.identifier(for: "s", entityName: "Tag", primaryKey: UUID())
        let attachment = PersistentIdentifier.temporary(entityName: "Attachment")
        let permanentPost = try PersistentIdentifier.identifier(for: "s", entityName: "Post", primaryKey: UUID())
        let permanentTag = try PersistentIdentifier.identifier(for: "s", entityName: "Tag", primaryKey: UUID())
        let permanentAttachment = try PersistentIdentifier.identifier(for: "s", entityName: "Attachment", primaryKey: UUID())
        let remapped = [post: permanentPost, tag: permanentTag, attachment: permanentAttachment]

        let snapshot = DefaultSnapshot(
            persistentIdentifier: post,
            values: [
                "title": "Hello", "tags": .toMany([tag, existing]), "cover": .toOne(attachment), "none": .toOne(nil),
                "history": .array([.toOne(tag), .int(1)]),
            ])
        let copy = snapshot.copy(persistentIdentifier: permanentPost, remappedIdentifiers: remapped)
        #expect(copy.persistentIdentifier == permanentPost)
        #expect(copy["tags"] == .toMany([permanentTag, existing]))
        #expect(copy["cover"] == .toOne(permanentAttachment))
        #expect(copy["none"] == .toOne(nil))
        #expect(copy["history"] == .array([.toOne(permanentTag), .int(1)]))
        #expect(copy["title"] == "Hello")
        #expect(copy.values.count == snapshot.values.count)

        let unchanged = snapshot.copy(persistentIdentifier: permanentPost)
        #expect(unchanged.values == snapshot.values && unchanged.persistentIdentifier == permanentPost)
    }

    @Test func snapshotsRoundTripThroughCodable() throws {
        let snapshot = DefaultSnapshot(
            persistentIdentifier: try .identifier(for: "s", entityName: "Post", primaryKey: UUID()),
            values: ["title": "T", "date": .date(Date(timeIntervalSinceReferenceDate: 1.25)), "tags": .toMany([.temporary(entityName: "Tag")])])
        let decoded = try JSONDecoder().decode(DefaultSnapshot.self, from: JSONEncoder().encode(snapshot))
        #expect(decoded == snapshot)
    }

    @Test func keepingRestrictsProperties() throws {
        let snapshot = DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Post"), values: ["a": 1, "b": 2, "c": 3])
        #expect(snapshot.keeping(["a", "c", "zzz"]).values == ["a": 1, "c": 3])
        #expect(snapshot.keeping([]) == snapshot)
    }
}
