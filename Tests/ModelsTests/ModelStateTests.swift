import Foundation
import Models
import Snapshot
import Testing

/// `modelContext`, `isDeleted` and `hasChanges` on models, and what a context does with deleted
/// objects, as SwiftData's models and context behave.
@StoreActor @Suite struct ModelStateTests {
    let home: ModelsHome
    let context: ModelContext

    init() throws {
        home = try ModelsHome()
        context = try home.context()
    }

    /// A saved post with one tag and one attachment (a cascade from the post).
    func savedPost(_ title: String = "Swift") throws -> Post {
        let post = Post()
        post.title = title
        let tag = Tag()
        tag.name = "tag of \(title)"
        post.tags = [tag]
        let attachment = Attachment()
        attachment.imageData = Data([1, 2, 3])
        attachment.post = post
        post.attachments = [attachment]
        try context.insert(post)
        try context.save()
        return post
    }

    @Test func aModelKnowsItsContextFromInsertAndFetch() throws {
        let post = Post()
        #expect(post.modelContext == nil)
        #expect(!post.hasChanges)
        try context.insert(post)
        #expect(post.modelContext === context)
        #expect(post.hasChanges)  // inserted, not saved
        try context.save()
        #expect(!post.hasChanges)
        let other = ModelContext(context.container)
        let fetched = try other.fetch(FetchDescriptor<Post>())
        #expect(fetched.count == 1)
        #expect(fetched[0].modelContext === other)
        #expect(post.modelContext === context)
    }

    @Test func hasChangesFollowsAPropertyUntilTheSave() throws {
        let post = try savedPost()
        let tag = post.tags[0]
        #expect(!post.hasChanges && !tag.hasChanges)
        post.title = "Swift 6"
        #expect(post.hasChanges)
        #expect(!tag.hasChanges)
        #expect(context.hasChanges(post))
        try context.save()
        #expect(!post.hasChanges)
        post.title = "again"
        try context.rollback()
        #expect(post.title == "Swift 6")
        #expect(!post.hasChanges)
    }

    @Test func aDeletedObjectIsDeletedBeforeAndAfterTheSave() throws {
        let post = try savedPost()
        try context.delete(post)
        #expect(post.isDeleted)
        #expect(post.hasChanges)
        #expect(post.modelContext === context)
        #expect(context.isDeleted(post))
        try context.save()
        #expect(post.isDeleted)
        #expect(post.modelContext == nil)
        #expect(!post.hasChanges)
        #expect(try ModelContext(context.container).fetchCount(FetchDescriptor<Post>()) == 0)
    }

    @Test func aCascadedChildAndItsReferenceToTheDeletedParentReadAsDeleted() throws {
        let post = try savedPost()
        let attachment = post.attachments[0]
        let tag = post.tags[0]
        try context.delete(post)
        #expect(attachment.isDeleted)
        #expect(attachment.post === post)
        #expect(attachment.post?.isDeleted == true)
        #expect(!tag.isDeleted)  // nullified, not deleted
        #expect(tag.posts.isEmpty)
    }

    @Test func aChangeToADeletedObjectIsRefusedAtSaveNamingIt() throws {
        let post = try savedPost()
        let attachment = post.attachments[0]
        let id = attachment.persistentModelID
        try context.delete(post)
        attachment.imageData = Data([9])
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .conflictingChanges)
        #expect(error.identifier == id)
        #expect(error.entityName == "Attachment")
        #expect(error.propertyName == "imageData")
        #expect(error.relatedIdentifiers.isEmpty)
        // Nothing was saved: the post is still stored.
        #expect(try ModelContext(context.container).fetchCount(FetchDescriptor<Post>()) == 1)
        // Set back, the save goes through.
        attachment.imageData = Data([1, 2, 3])
        try context.save()
        #expect(try ModelContext(context.container).fetchCount(FetchDescriptor<Attachment>()) == 0)
    }

    @Test func everyChangedDeletedObjectIsNamed() throws {
        let post = try savedPost()
        let attachment = post.attachments[0]
        try context.delete(post)
        post.title = "changed"
        attachment.imageData = Data([9])
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .conflictingChanges)
        let named = Set([error.identifier].compactMap { $0 } + error.relatedIdentifiers)
        #expect(named == [post.persistentModelID, attachment.persistentModelID])
    }

    @Test func rollingBackADeleteTracksTheObjectAgain() throws {
        let post = try savedPost()
        let attachment = post.attachments[0]
        try context.delete(post)
        post.title = "changed"
        try context.rollback()
        #expect(!post.isDeleted && !attachment.isDeleted)
        #expect(post.modelContext === context)
        #expect(post.title == "Swift")
        #expect(try context.fetch(FetchDescriptor<Post>()).first === post)
        post.title = "kept"
        try context.save()
        #expect(try ModelContext(context.container).fetch(FetchDescriptor<Post>()).map(\.title) == ["kept"])
    }

    @Test func deletingAnObjectNeverInsertedDoesNothing() throws {
        let post = try savedPost()
        let stray = Post()
        try context.delete(stray)
        #expect(!stray.isDeleted)
        #expect(stray.modelContext == nil)
        #expect(!context.hasChanges)
        #expect(post.modelContext === context)
    }

    @Test func deletingAnObjectTwiceOrAfterItsDeletionWasSavedDoesNothing() throws {
        let post = try savedPost()
        let attachment = post.attachments[0]
        try context.delete(post)
        try context.delete(attachment)  // already deleted by the cascade
        try context.save()
        try context.delete(post)
        #expect(!context.hasChanges)
    }

    @Test func aDeletedInsertBelongsToNoContextAfterTheSave() throws {
        let draft = Draft()
        try context.insert(draft)
        try context.delete(draft)
        #expect(draft.isDeleted)
        draft.text = "late"
        #expect(throws: DataStoreError.self) { try context.save() }
        try context.rollback()
        #expect(!draft.isDeleted)
        #expect(draft.modelContext == nil)
        #expect(!context.hasChanges)
    }

    @Test func aStructModelAsksItsContext() throws {
        let typed = ModelContext(
            try StoreContainer(
                schema: TypedBlogStore.schema,
                configurations: [
                    .init(name: "Blog", entityNames: nil, isStoredInMemoryOnly: true)
                ]))
        var note = Note()
        note.text = "one"
        try typed.insert(note)
        #expect(typed.hasChanges(note))
        try typed.save()
        note = try #require(try typed.fetch(FetchDescriptor<Note>()).first)
        #expect(!typed.hasChanges(note))
        note.text = "two"
        #expect(typed.hasChanges(note))
        try typed.delete(note)
        #expect(typed.isDeleted(note))
        try typed.save()
        #expect(try typed.fetchCount(FetchDescriptor<Note>()) == 0)
    }
}
