import CAllocationCounter
import Engine
import Foundation
@testable import Snapshot
import SnapshotTestSupport
import Testing

/// A save planned by slot: what it returns for re-registration, the order of the keys it hands
/// the engine, how its refusals name the property, and what planning allocates per object.
@Suite(.serialized) struct SavePlanTests {
    static let date = Date(timeIntervalSinceReferenceDate: 1_000)

    /// A store holding the tags `swift` and `news`, and their identifiers.
    static func storeWithTags(_ configure: (inout WALStoreConfiguration) -> Void = { _ in }) throws -> (WALHome, WALDataStore, [PersistentIdentifier])
    {
        let home = WALHome()
        var configuration = home.configuration
        configure(&configuration)
        let store = try WALDataStore(configuration)
        let tags = [BlogModel.tag(name: "swift"), BlogModel.tag(name: "news")]
        let result = try store.save(DataStoreSaveChangesRequest(inserted: tags))
        return (home, store, try tags.map { try #require(result.remappedIdentifiers[$0.persistentIdentifier]) })
    }

    /// `count` new posts stating every property, each linking both stored tags.
    static func posts(_ count: Int, tags: [PersistentIdentifier]) -> [DefaultSnapshot] {
        (0..<count).map { i in
            BlogModel.post(title: "post \(i)", content: "text", date: date.addingTimeInterval(Double(i)), tags: [tags[1], tags[0]])
        }
    }

    // MARK: Snapshots to re-register

    @Test func aSaveTheStoreDoesNotAlterReturnsNoSnapshotToReregister() throws {
        let (home, store, tags) = try Self.storeWithTags()
        defer { home.temporary.remove() }
        defer { try? store.close() }
        let posts = Self.posts(5, tags: tags)
        let planner = SavePlanner(mapper: store.mapper)
        _ = try planner.plan(DataStoreSaveChangesRequest(inserted: posts))
        #expect(try planner.snapshotsToReregister().isEmpty, "every post is stored as the request states it; the tags only gain links")
        #expect(planner.snapshotsBuilt == 0, "no snapshot by name is built for an object the request holds as it is")

        let saved = try store.save(DataStoreSaveChangesRequest(inserted: posts))
        #expect(saved.snapshotsToReregister.isEmpty)
        // An update stating every property is stored as it says: nothing to re-register.
        let id = try #require(saved.remappedIdentifiers[posts[0].persistentIdentifier])
        var changed = try #require(try store.snapshot(id))
        changed["title"] = "renamed"
        #expect(try store.save(DataStoreSaveChangesRequest(updated: [changed])).snapshotsToReregister.isEmpty)
        #expect(try store.snapshot(id) == changed)
    }

    @Test func aSaveReturnsExactlyTheObjectsTheStoreAltered() throws {
        let (home, store, tags) = try Self.storeWithTags()
        defer { home.temporary.remove() }
        defer { try? store.close() }
        let whole = BlogModel.post(title: "whole", date: Self.date, tags: [tags[0]])
        // Leaves `content` out: its default (null) is filled in.
        let partial = DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Post"),
            values: ["title": "partial", "date": .date(Self.date), "tags": .toMany([]), "attachments": .toMany([])])
        // The stored tag's unique name: merged into it (an upsert), with a colour.
        let upsert = BlogModel.tag(name: "swift", colour: "orange")
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [whole, partial, upsert]))
        let partialID = try #require(result.remappedIdentifiers[partial.persistentIdentifier])
        #expect(result.remappedIdentifiers[upsert.persistentIdentifier] == tags[0])
        #expect(Set(result.snapshotsToReregister.keys) == [partialID, tags[0]], "the defaulted insert and the upserted tag, nothing else")
        #expect(result.snapshotsToReregister[partialID] == (try store.snapshot(partialID)))
        #expect(result.snapshotsToReregister[partialID]?["content"] == .null)
        #expect(result.snapshotsToReregister[tags[0]] == (try store.snapshot(tags[0])))
        #expect(result.snapshotsToReregister[tags[0]]?["colour"] == "orange")
    }

    @Test func anUpdateThatStatesSomePropertiesReturnsTheObjectWhole() throws {
        let (home, store, tags) = try Self.storeWithTags()
        defer { home.temporary.remove() }
        defer { try? store.close() }
        let result = try store.save(DataStoreSaveChangesRequest(updated: [DefaultSnapshot(persistentIdentifier: tags[1], values: ["colour": "red"])]))
        #expect(Array(result.snapshotsToReregister.keys) == [tags[1]])
        #expect(result.snapshotsToReregister[tags[1]] == (try store.snapshot(tags[1])))
    }

    // MARK: Key order

    @Test(arguments: [false, true]) func aSaveHandsTheEngineItsKeysInOrder(history: Bool) throws {
        let (home, store, tags) = try Self.storeWithTags { if history { $0.history = .enabled() } }
        defer { home.temporary.remove() }
        defer { try? store.close() }
        let first = try store.save(DataStoreSaveChangesRequest(inserted: Self.posts(3, tags: tags)))
        let stored = try #require(first.remappedIdentifiers.values.first)
        // Inserts, an update and a delete: records, links, back references, index, uniqueness
        // and count entries, the history transaction, deletes among puts.
        var inserted = Self.posts(20, tags: tags)
        let attachment = BlogModel.attachment(imageData: Data([1, 2, 3]), post: inserted[0].persistentIdentifier)
        inserted[0]["attachments"] = .toMany([attachment.persistentIdentifier])
        let request = DataStoreSaveChangesRequest(
            inserted: inserted + [attachment, BlogModel.tag(name: "new")],
            updated: [DefaultSnapshot(persistentIdentifier: tags[1], values: ["colour": "blue"])],
            deleted: [DefaultSnapshot(persistentIdentifier: stored)])
        let planned = try store.exclusively { try store.planWithoutWriting(request) }
        let entries = try #require(planned.batch.entries)
        let keys = entries.map { entry in
            switch entry {
            case .put(let key, _), .putExternal(let key, _), .delete(let key): key
            }
        }
        #expect(keys.count > 100)
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) }, "strictly ascending: in order, each key once")
        #expect(keys.contains(RecordKeys.count(entity: "Post")), "the counts are merged in")
        #expect(keys.contains { $0.first == RecordKeys.historyTag } == history, "so is the history transaction")
        #expect(entries.contains { if case .delete = $0 { true } else { false } })
        // Saved, it reads back.
        let result = try store.save(request)
        #expect(try store.all("Post").count == 22)
        #expect(try store.snapshot(tags[1])?["colour"] == "blue")
        let post = try #require(result.remappedIdentifiers[inserted[0].persistentIdentifier])
        #expect(try store.snapshot(post)?["attachments"]?.referencedIdentifiers.count == 1)
    }

    @Test func aSaveOfAMigratedGenerationHandsTheEngineItsKeysInOrder() throws {
        typealias F = MigrationFixture
        let home = MigrationHome()
        defer { home.temporary.remove() }
        func open(_ schema: Schema) throws -> WALDataStore {
            var configuration = F.configuration(schema, path: home.path)
            configuration.history = .enabled()
            return try WALDataStore(configuration)
        }
        do {
            let store = try open(BlogModel.schema)
            try F.fill(store)
            try store.close()
        }
        // An index added: every record rewritten into generation 1, whose record keys carry its
        // prefix while the history's keys do not.
        let store = try open(try F.blog { $0[named: "Post"].indexes.append(.init(["title"])) })
        defer { try? store.close() }
        #expect(try F.keyKinds(store)[RecordSpace.generationTag] != nil)
        let tags = try store.all("Tag").map(\.persistentIdentifier)
        let request = DataStoreSaveChangesRequest(inserted: Self.posts(10, tags: tags))
        let planned = try store.exclusively { try store.planWithoutWriting(request) }
        let keys = try #require(planned.batch.entries).map { entry in
            switch entry {
            case .put(let key, _), .putExternal(let key, _), .delete(let key): key
            }
        }
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) }, "strictly ascending engine keys")
        #expect(keys.contains { $0.first == RecordKeys.historyTag } && keys.contains { $0.first == RecordSpace.generationTag })
        _ = try store.save(request)
        #expect(try store.all("Post").count == 13)
    }

    // MARK: Refusals

    @Test func aRefusedStatementNamesItsFirstInvalidPropertyInNameOrder() throws {
        let (home, store, tags) = try Self.storeWithTags()
        defer { home.temporary.remove() }
        defer { try? store.close() }
        let stored = try #require(try store.snapshot(tags[0]))
        let before = try home.files()
        let missingTag = PersistentIdentifier.temporary(entityName: "Tag")
        let cases: [(values: [String: PropertyValue], code: DataStoreError.Code, property: String)] = [
            (["title": 1, "date": .null, "tags": .toMany([]), "attachments": .toMany([])], .missingValue, "date"),
            (["title": 1, "date": .date(Self.date), "zzz": 1], .typeMismatch, "title"),
            (["aaa": 1, "title": 1, "date": .date(Self.date)], .unknownProperty, "aaa"),
            (["title": "t", "date": .date(Self.date), "tags": .toOne(nil)], .typeMismatch, "tags"),
            (["title": "t", "date": .date(Self.date), "tags": .toMany([tags[0], missingTag])], .danglingReference, "tags"),
            (["title": "t", "content": .int(2), "date": .date(Self.date), "tags": .toMany([missingTag])], .typeMismatch, "content"),
        ]
        for c in cases {
            let insert = DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Post"), values: c.values)
            let error = #expect(throws: DataStoreError.self) { try store.save(DataStoreSaveChangesRequest(inserted: [insert])) }
            #expect(error?.code == c.code && error?.propertyName == c.property, "\(c.values): \(String(describing: error))")
            #expect(error?.entityName == "Post" && error?.identifier == insert.persistentIdentifier)
            #expect(error?.message.contains(c.property) == true)
        }
        // An update: the same rules, naming the stored object.
        let update = DefaultSnapshot(persistentIdentifier: tags[0], values: ["name": 3, "colour": 4, "posts": .toOne(nil)])
        let error = #expect(throws: DataStoreError.self) { try store.save(DataStoreSaveChangesRequest(updated: [update])) }
        #expect(error?.code == .typeMismatch && error?.propertyName == "colour" && error?.identifier == tags[0])
        #expect(try home.files() == before, "a refused save writes nothing")
        #expect(try store.snapshot(tags[0]) == stored)
    }

    // MARK: Allocations

    /// The allocations planning `count` new posts (every property stated, two stored tags
    /// each) makes, with the outputs for the caller, on a warm store.
    static func planningAllocations(_ count: Int, _ store: WALDataStore, tags: [PersistentIdentifier]) throws -> Int {
        let request = DataStoreSaveChangesRequest(inserted: posts(count, tags: tags))
        _ = try SavePlanner(mapper: store.mapper).plan(request)
        return try FetchAllocationTests.allocations {
            let planner = SavePlanner(mapper: store.mapper)
            _ = try planner.plan(request).batch
            _ = try planner.snapshotsToReregister()
        }
    }

    @Test func planningAllocatesABoundedNumberPerInsertedObject() throws {
        try #require(walstore_allocations_available() == 1, "this build has the allocation counter")
        let (home, store, tags) = try Self.storeWithTags()
        defer { home.temporary.remove() }
        defer { try? store.close() }
        let counts = try [200, 400, 800].map { try Self.planningAllocations($0, store, tags: tags) }
        let perPost = [Double(counts[1] - counts[0]) / 200, Double(counts[2] - counts[1]) / 400]
        // A post's own: its identifier, its slots, the bytes of its record and of its keys
        // (record, two index entries, two links and their mirrors), its entries in the sorted
        // lists and the batch — and, in a debug build, what the standard library's
        // unspecialized generic code allocates. No more for more posts: no list is searched,
        // copied or re-sorted per post.
        #expect(perPost.allSatisfy { $0 <= 200 }, "\(counts) allocations for 200, 400 and 800 posts: \(perPost) a post")
        #expect(perPost[1] <= perPost[0] + 2, "\(perPost) a post: as many for 800 posts as for 400")
    }
}
