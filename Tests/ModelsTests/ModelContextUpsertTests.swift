import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// An inserted object that a save upserts into a stored one, through `ModelContext`: afterwards
/// the context holds one instance per identifier, and both sides of every relationship hold it.
@StoreActor @Suite struct ModelContextUpsertTests {
    let home: ModelsHome
    let context: ModelContext

    init() throws {
        home = try ModelsHome()
        context = try home.context()
    }

    /// A saved post tagged with a saved tag `name`.
    func savedPost(_ title: String, tag name: String) throws -> (Post, Tag) {
        let post = Post()
        post.title = title
        let tag = Tag()
        tag.name = name
        post.tags = [tag]
        try context.insert(post)
        try context.save()
        return (post, tag)
    }

    /// Every tag's posts list the tag back, by instance, and the reverse.
    func expectBothSidesAgree(_ posts: [Post], _ tags: [Tag]) {
        for post in posts { for tag in post.tags { #expect(tag.posts.contains { $0 === post }, "\(tag.name) lists \(post.title)") } }
        for tag in tags { for post in tag.posts { #expect(post.tags.contains { $0 === tag }, "\(post.title) lists \(tag.name)") } }
    }

    @Test func anInsertedObjectUpsertedIntoARegisteredOneLeavesTheRegisteredInstanceAsTheOneObject() throws {
        let (first, _) = try savedPost("first", tag: "objc")
        let stored = Tag()
        stored.name = "swift"
        try context.insert(stored)
        try context.save()
        let second = Post()
        second.title = "second"
        let duplicate = Tag()
        duplicate.name = "swift"
        second.tags = [duplicate]
        try context.insert(second)
        let remapped = try context.save()

        let temporary = try #require(remapped.first { $0.value == stored.persistentModelID }?.key)
        #expect(temporary.entityName == "Tag")
        // The registered instance stands for the object; the inserted one is retired under its identifier.
        #expect(duplicate.persistentModelID == stored.persistentModelID)
        #expect(second.tags.count == 1 && second.tags[0] === stored, "the post refers to the registered instance")
        #expect(stored.posts.contains { $0 === second })
        #expect(try context.model(Tag.self, for: duplicate.persistentModelID) === stored)
        #expect(try context.model(Tag.self, for: temporary) === stored)
        let fetched = try context.fetch(FetchDescriptor<Tag>(predicate: #Predicate { $0.name == "swift" }))
        #expect(fetched.count == 1 && fetched[0] === stored, "a later fetch returns the one instance")
        #expect(try context.fetchCount(FetchDescriptor<Tag>()) == 2, "objc and swift")
        expectBothSidesAgree([first, second], [stored] + first.tags)
        #expect(stored.posts.count == 1 && stored.posts[0] === second)

        // In memory as in the store.
        let fresh = ModelContext(context.container)
        let saved = try #require(try fresh.fetch(FetchDescriptor<Tag>(predicate: #Predicate { $0.name == "swift" })).first)
        #expect(Set(saved.posts.map(\.persistentModelID)) == Set(stored.posts.map(\.persistentModelID)))
        let savedSecond = try #require(try fresh.model(Post.self, for: second.persistentModelID))
        #expect(savedSecond.tags.map(\.persistentModelID) == [stored.persistentModelID])
        #expect(!context.hasChanges)
    }

    @Test func aRetiredInstanceIsNoLongerTrackedAndIsRefusedWhereATrackedOneIsExpected() throws {
        let (_, stored) = try savedPost("first", tag: "swift")
        let duplicate = Tag()
        duplicate.name = "swift"
        try context.insert(duplicate)
        try context.save()
        #expect(duplicate.persistentModelID == stored.persistentModelID)

        duplicate.name = "changed on the retired instance"
        #expect(!context.hasChanges, "changing a retired instance stages nothing")
        let refusal = #expect(throws: DataStoreError.self) { try context.update(duplicate) }
        #expect(refusal?.code == .invalidRequest)
        #expect(refusal?.identifier == stored.persistentModelID)
        #expect(try #require(refusal).message.contains("upsert"))
        #expect(throws: DataStoreError.self) { try context.insert(duplicate) }
        try context.save()
        #expect(try ModelContext(context.container).fetch(FetchDescriptor<Tag>()).map(\.name) == ["swift"])

        // Placed in a relationship, the retired instance stands for its object and is replaced
        // there by the registered instance at the save.
        let post = Post()
        post.title = "third"
        post.tags = [duplicate]
        try context.insert(post)
        try context.save()
        #expect(post.tags.count == 1 && post.tags[0] === stored)
        #expect(stored.posts.contains { $0 === post })
    }

    @Test func anUpsertIntoAnObjectTheContextDoesNotHoldMakesTheInsertedInstanceTheOneObject() throws {
        let (_, stored) = try savedPost("first", tag: "swift")
        let other = ModelContext(context.container)
        let tag = Tag()
        tag.name = "swift"
        try other.insert(tag)
        try other.save()
        #expect(tag.persistentModelID == stored.persistentModelID)
        let fetched = try other.fetch(FetchDescriptor<Tag>())
        #expect(fetched.count == 1 && fetched[0] === tag)
        #expect(
            Set(tag.posts.map(\.persistentModelID))
                == Set(try ModelContext(context.container).fetch(FetchDescriptor<Tag>())[0].posts.map(\.persistentModelID)))
    }

    @Test func twoNewObjectsWithOneUniqueValueAreRefusedWithNothingWrittenAndTheContextStaysSaveable() throws {
        _ = try savedPost("first", tag: "swift")
        let a = Tag()
        a.name = "dup"
        let b = Tag()
        b.name = "dup"
        try context.insert(a)
        try context.insert(b)
        let (ta, tb) = (a.persistentModelID, b.persistentModelID)
        let before = try directoryFiles(home.temporary.path)

        let refusal = #expect(throws: DataStoreError.self) { try context.save() }
        let error = try #require(refusal)
        #expect(error.code == .uniqueness)
        #expect(error.entityName == "Tag")
        #expect(error.propertyName == "name")
        #expect(error.constraint == ["name"])
        #expect(Set([error.identifier].compactMap { $0 } + error.relatedIdentifiers) == [ta, tb])
        #expect(try directoryFiles(home.temporary.path) == before, "nothing was written")
        #expect(context.hasChanges)
        #expect(Set(context.storeContext.insertedIdentifiers) == [ta, tb], "both inserts stay pending")
        #expect(a.persistentModelID.isTemporary && b.persistentModelID.isTemporary)

        b.name = "dup 2"
        try context.save()
        #expect(!a.persistentModelID.isTemporary && !b.persistentModelID.isTemporary && a.persistentModelID != b.persistentModelID)
        let names = try ModelContext(context.container).fetch(FetchDescriptor<Tag>(sortBy: [SortDescriptor(\.name)])).map(\.name)
        #expect(names == ["dup", "dup 2", "swift"])
    }
}
