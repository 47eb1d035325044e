import CoreDataSQLiteStore
import Foundation
import Snapshot
import Testing

/// The Core Data-shaped SQLite store's rules for a save that names an object more than once:
/// inserts matched against the objects as the save leaves them, upserts that merge, and
/// references to objects the save deletes.
@Suite struct CoreDataSQLiteSaveRulesTests {
    final class Home {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("walstore-diff-\(UUID().uuidString)").path
        let store: CoreDataSQLiteStore
        init() throws { store = try CoreDataSQLiteStore(CoreDataSQLiteConfiguration(name: "Diff", schema: DiffSchema.schema, directory: directory)) }
        deinit {
            store.close()
            try? FileManager.default.removeItem(atPath: directory)
        }

        func all(_ entity: String) throws -> [PersistentIdentifier: DefaultSnapshot] {
            let snapshots = try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: entity))).fetchedSnapshots
            return Dictionary(uniqueKeysWithValues: snapshots.map { ($0.persistentIdentifier, DataStoreContractless.sorted($0)) })
        }
    }

    static func tag(_ name: String, colour: String? = nil, posts: [PersistentIdentifier] = []) -> DefaultSnapshot {
        DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Tag"), values: [
            "uid": .int(0), "name": .string(name), "colour": colour.map(PropertyValue.string) ?? .null, "posts": .toMany(posts),
        ])
    }

    static func post(_ slug: String, author: PersistentIdentifier? = nil) -> DefaultSnapshot {
        DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Post"), values: [
            "uid": .int(0), "title": "t", "score": .int(0), "published": .bool(false), "date": .date(DiffGenerator.dates[0]),
            "slug": .string(slug), "year": .int(2020), "author": .toOne(author),
        ])
    }

    @Test func anUpsertKeepsTheStoredToOneWhenItHasNoneAndUnitesTheToManys() throws {
        let home = try Home()
        let author = DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Author"), values: ["uid": .int(0), "handle": "ann", "age": .int(1)])
        let (first, second) = (Self.post("a", author: author.persistentIdentifier), Self.post("b"))
        let blue = Self.tag("blue", colour: "red", posts: [first.persistentIdentifier])
        let saved = try home.store.save(DataStoreSaveChangesRequest(inserted: [author, first, second, blue]))
        let ids = saved.remappedIdentifiers
        let tagID = ids[blue.persistentIdentifier]!, firstID = ids[first.persistentIdentifier]!, secondID = ids[second.persistentIdentifier]!

        let again = Self.tag("blue", colour: "green", posts: [secondID])
        var samePost = Self.post("a")  // no author: keeps the stored one
        samePost["score"] = .int(7)
        let upserted = try home.store.save(DataStoreSaveChangesRequest(inserted: [again, samePost]))
        #expect(upserted.remappedIdentifiers[again.persistentIdentifier] == tagID)
        #expect(upserted.remappedIdentifiers[samePost.persistentIdentifier] == firstID)
        let tag = try #require(try home.all("Tag")[tagID])
        #expect(tag["colour"] == "green")
        #expect(tag["posts"] == .toMany([firstID, secondID].sorted()))
        let post = try #require(try home.all("Post")[firstID])
        #expect(post["score"] == .int(7))
        #expect(post["author"] == .toOne(ids[author.persistentIdentifier]!))
    }

    @Test func twoInsertsWithOneUniqueValueAreRefusedNamingBoth() throws {
        let home = try Home()
        let (a, b) = (Self.tag("blue"), Self.tag("blue"))
        do {
            _ = try home.store.save(DataStoreSaveChangesRequest(inserted: [a, b]))
            Issue.record("two tags named blue were saved")
        } catch let error as DataStoreError {
            #expect(error.code == .uniqueness)
            #expect(error.entityName == "Tag" && error.propertyName == "name" && error.constraint == ["name"])
            #expect(error.identifier == b.persistentIdentifier)
            #expect(error.relatedIdentifiers == [a.persistentIdentifier])
        }
        #expect(try home.all("Tag").isEmpty)
    }

    @Test func anInsertWithTheUniqueValueOfAnObjectTheSaveDeletesOrRenamesIsANewObject() throws {
        let home = try Home()
        let (blue, red) = (Self.tag("blue"), Self.tag("red"))
        let saved = try home.store.save(DataStoreSaveChangesRequest(inserted: [blue, red]))
        let blueID = saved.remappedIdentifiers[blue.persistentIdentifier]!, redID = saved.remappedIdentifiers[red.persistentIdentifier]!
        var renamed = try #require(try home.all("Tag")[redID])
        renamed["name"] = "green"
        let (newBlue, newRed) = (Self.tag("blue"), Self.tag("red"))
        let result = try home.store.save(DataStoreSaveChangesRequest(
            inserted: [newBlue, newRed], updated: [renamed], deleted: [try #require(try home.all("Tag")[blueID])]))
        let newBlueID = try #require(result.remappedIdentifiers[newBlue.persistentIdentifier])
        let newRedID = try #require(result.remappedIdentifiers[newRed.persistentIdentifier])
        #expect(newBlueID != blueID && newRedID != redID)
        let names = try home.all("Tag").mapValues { $0["name"] }
        #expect(names == [newBlueID: "blue", newRedID: "red", redID: "green"])
    }

    @Test func anUpdateOfADeletedObjectIsRefusedAsDanglingBeforeAnInsertsUniqueness() throws {
        let home = try Home()
        let (blue, red) = (Self.tag("blue"), Self.tag("red"))
        let saved = try home.store.save(DataStoreSaveChangesRequest(inserted: [blue, red]))
        let blueID = saved.remappedIdentifiers[blue.persistentIdentifier]!
        let stale = try #require(try home.all("Tag")[blueID])
        _ = try home.store.save(DataStoreSaveChangesRequest(deleted: [stale]))
        do {
            // A category named like a stored tag is refused (uniqueness across the tree).
            var category = Self.tag("red")
            category.persistentIdentifier = .temporary(entityName: "Category")
            category["rank"] = .int(1)
            _ = try home.store.save(DataStoreSaveChangesRequest(inserted: [category], updated: [stale]))
            Issue.record("an update of a deleted tag was saved")
        } catch let error as DataStoreError {
            // WALDataStore checks the request before it plans the upserts; so does this store.
            #expect(error.code == .danglingReference)
            #expect(error.identifier == blueID)
        }
        #expect(try home.all("Tag").count == 1)
    }

    @Test func aToManyOverItsMaximumCountIsRefusedFromEitherSide() throws {
        let home = try Home()
        let tags = (0..<3).map { Self.tag("t\($0)") }
        var post = Self.post("a")
        post["tags"] = .toMany(tags.map(\.persistentIdentifier))
        do {
            _ = try home.store.save(DataStoreSaveChangesRequest(inserted: tags + [post]))
            Issue.record("a post with three tags was saved (at most two)")
        } catch let error as DataStoreError {
            #expect(error.code == .cardinality)
            #expect(error.entityName == "Post" && error.propertyName == "tags")
        }
        #expect(try home.all("Tag").isEmpty && home.all("Post").isEmpty)

        // Two tags on the post, then a third tag that lists the post: the post's side overflows.
        post["tags"] = .toMany(Array(tags.prefix(2)).map(\.persistentIdentifier))
        let saved = try home.store.save(DataStoreSaveChangesRequest(inserted: Array(tags.prefix(2)) + [post]))
        let postID = saved.remappedIdentifiers[post.persistentIdentifier]!
        let third = Self.tag("t2", posts: [postID])
        do {
            _ = try home.store.save(DataStoreSaveChangesRequest(inserted: [third]))
            Issue.record("a third tag of the post was saved")
        } catch let error as DataStoreError {
            #expect(error.code == .cardinality)
            #expect(error.identifier == postID && error.propertyName == "tags")
        }
        #expect(try home.all("Tag").count == 2)
        #expect(try home.all("Post")[postID]?["tags"]?.referencedIdentifiers.count == 2)
    }

    @Test func aReferenceToAnObjectTheSaveDeletesIsRefusedAndNothingIsWritten() throws {
        let home = try Home()
        let blue = Self.tag("blue")
        let saved = try home.store.save(DataStoreSaveChangesRequest(inserted: [blue]))
        let blueID = saved.remappedIdentifiers[blue.persistentIdentifier]!
        let stored = try #require(try home.all("Tag")[blueID])
        var post = Self.post("a")
        post["tags"] = .toMany([blueID])
        do {
            _ = try home.store.save(DataStoreSaveChangesRequest(inserted: [post], deleted: [stored]))
            Issue.record("a post tagged with a tag deleted in the same save was saved")
        } catch let error as DataStoreError {
            #expect(error.code == .danglingReference)
            #expect(error.identifier == post.persistentIdentifier && error.propertyName == "tags")
            #expect(error.relatedIdentifiers == [blueID])
        }
        #expect(try home.all("Tag").keys.sorted() == [blueID])
        #expect(try home.all("Post").isEmpty)
    }
}

/// Snapshot helpers that need no contract.
enum DataStoreContractless {
    /// `snapshot` with its to-many lists sorted.
    static func sorted(_ snapshot: DefaultSnapshot) -> DefaultSnapshot {
        DefaultSnapshot(persistentIdentifier: snapshot.persistentIdentifier, values: snapshot.values.mapValues { value in
            if case .toMany(let ids) = value { return .toMany(ids.sorted()) }
            return value
        })
    }
}
