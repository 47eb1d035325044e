import CoreDataSQLiteStore
import Foundation
import Snapshot
import SQLiteSupport
import Testing

/// Sub-entities in the Core Data-shaped SQLite store: rows of their root's table, told apart by
/// `Z_ENT`, numbered from the root's `Z_PRIMARYKEY` row.
@Suite struct CoreDataSQLiteSubentityTests {
    static func comment(_ entity: String, _ text: String, _ extra: [String: PropertyValue] = [:]) -> DefaultSnapshot {
        var values: [String: PropertyValue] = ["uid": .int(0), "text": .string(text), "votes": .int(1)]
        for (name, value) in extra { values[name] = value }
        return DefaultSnapshot(persistentIdentifier: .temporary(entityName: entity), values: values)
    }

    @Test func aSubEntitysObjectsAreRowsOfItsRootsTableAndComeBackWithTheirOwnProperties() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("walstore-diff-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try CoreDataSQLiteStore(CoreDataSQLiteConfiguration(name: "Diff", schema: DiffSchema.schema, directory: directory))
        let author = DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Author"), values: ["uid": .int(0), "handle": "ann", "age": .int(1)])
        let plain = Self.comment("Comment", "plain")
        let review = Self.comment("Review", "review", ["stars": .int(4), "reviewer": .toOne(author.persistentIdentifier), "replyTo": .toOne(plain.persistentIdentifier)])
        let reply = Self.comment("Comment", "reply", ["replyTo": .toOne(review.persistentIdentifier)])
        let saved = try store.save(DataStoreSaveChangesRequest(inserted: [author, plain, review, reply]))
        let (plainID, reviewID, replyID) = (
            saved.remappedIdentifiers[plain.persistentIdentifier]!, saved.remappedIdentifiers[review.persistentIdentifier]!,
            saved.remappedIdentifiers[reply.persistentIdentifier]!
        )
        #expect(reviewID.entityName == "Review")
        #expect(Set([plainID.primaryKey, reviewID.primaryKey, replyID.primaryKey]) == [.integer(1), .integer(2), .integer(3)])

        func fetch(_ entity: String, subentities: Bool = true) throws -> [PersistentIdentifier: DefaultSnapshot] {
            let descriptor = FetchDescriptor(entityName: entity, includesSubentities: subentities)
            return Dictionary(uniqueKeysWithValues: try store.fetch(DataStoreFetchRequest(descriptor: descriptor)).fetchedSnapshots.map { ($0.persistentIdentifier, $0) })
        }
        let comments = try fetch("Comment")
        #expect(Set(comments.keys) == [plainID, reviewID, replyID])
        #expect(comments[reviewID]?.values["stars"] == .int(4))
        #expect(comments[plainID]?.values["stars"] == nil)
        // A reference whose destination is the root names the target's own entity.
        #expect(comments[replyID]?.values["replyTo"] == .toOne(reviewID))
        #expect(Set(try fetch("Comment", subentities: false).keys) == [plainID, replyID])
        #expect(Set(try fetch("Review").keys) == [reviewID])
        #expect(try store.fetchIdentifiers(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Comment", predicate: .attribute("text") == "review"))) == [reviewID])
        #expect(try store.fetchCount(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Review", predicate: .attribute("stars") > 3))) == 1)

        // Deleting the review clears the references to it (replyTo has no inverse).
        _ = try store.save(DataStoreSaveChangesRequest(deleted: [comments[reviewID]!]))
        #expect(try fetch("Comment")[replyID]?.values["replyTo"] == .toOne(nil))
        store.close()

        let database = try SQLiteDatabase(path: directory + "/Diff.sqlite", create: false)
        defer { database.close() }
        #expect(try database.text("SELECT count(*) FROM sqlite_master WHERE name = 'ZREVIEW'") == "0")
        #expect(try database.text("SELECT group_concat(Z_ENT, ',') FROM (SELECT Z_ENT FROM ZCOMMENT ORDER BY Z_PK)") == "3,3")
        #expect(try database.text("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Comment'") == "3")
    }
}
