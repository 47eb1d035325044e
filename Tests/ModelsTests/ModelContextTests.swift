import Foundation
import Models
import Snapshot
import Testing

@StoreActor @Suite struct ModelContextTests {
    let home: ModelsHome
    let context: ModelContext

    init() throws {
        home = try ModelsHome()
        context = try home.context()
    }

    /// A post with one tag and one attachment, inserted and saved.
    func savedPost(_ title: String = "Swift", date: Date = Date(timeIntervalSinceReferenceDate: 1)) throws -> Post {
        let post = Post()
        post.title = title
        post.date = date
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

    @Test func insertingAModelInsertsTheNewObjectsItReachesAndSaveGivesThemPermanentIdentifiers() throws {
        let post = try savedPost()
        #expect(!post.persistentModelID.isTemporary)
        #expect(!post.tags[0].persistentModelID.isTemporary)
        #expect(!post.attachments[0].persistentModelID.isTemporary)
        let fresh = ModelContext(context.container)
        let fetched = try fresh.fetch(FetchDescriptor<Post>())
        #expect(fetched.map(\.persistentModelID) == [post.persistentModelID])
        #expect(fetched[0].tags.map(\.name) == ["tag of Swift"])
        #expect(fetched[0].attachments[0].imageData == Data([1, 2, 3]))
        #expect(fetched[0].attachments[0].post === fetched[0])
        #expect(fetched[0].tags[0].posts[0] === fetched[0])
    }

    @Test func aFetchReturnsTheRegisteredInstance() throws {
        let post = try savedPost()
        let fetched = try context.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.title == "Swift" }))
        #expect(fetched.count == 1)
        #expect(fetched[0] === post)
    }

    @Test func aChangedPropertyIsFoundStagedAloneAndSaved() throws {
        let post = try savedPost()
        post.title = "Swift 6"
        #expect(context.hasChanges)
        try context.processPendingChanges()
        #expect(context.storeContext.changedProperties(of: post.persistentModelID) == ["title"])
        try context.save()
        #expect(!context.hasChanges)
        let fresh = ModelContext(context.container)
        #expect(try fresh.fetch(FetchDescriptor<Post>()).map(\.title) == ["Swift 6"])
    }

    @Test func fetchesSeeChangesNotYetSaved() throws {
        let post = try savedPost()
        post.title = "Renamed"
        let renamed = try context.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.title == "Renamed" }))
        #expect(renamed.first === post)
        #expect(try context.fetchCount(FetchDescriptor<Post>(predicate: #Predicate { $0.title == "Swift" })) == 0)
        var storedOnly = FetchDescriptor<Post>(predicate: #Predicate { $0.title == "Swift" })
        storedOnly.includePendingChanges = false
        #expect(try context.fetchIdentifiers(storedOnly) == [post.persistentModelID])
    }

    @Test func anObjectAddedToARelationshipIsInsertedByTheSave() throws {
        let post = try savedPost()
        let extra = Tag()
        extra.name = "extra"
        post.tags.append(extra)
        try context.save()
        #expect(!extra.persistentModelID.isTemporary)
        #expect(extra.posts.first === post)  // the inverse, as the store set it
        let fresh = ModelContext(context.container)
        #expect(Set(try fresh.fetch(FetchDescriptor<Post>())[0].tags.map(\.name)) == ["tag of Swift", "extra"])
    }

    @Test func savingAToOneSetsTheInverseOnTheRegisteredObjects() throws {
        let post = try savedPost()
        let attachment = Attachment()
        attachment.imageData = Data([9])
        attachment.post = post
        try context.insert(attachment)
        try context.save()
        #expect(post.attachments.contains { $0 === attachment })
    }

    @Test func settingAToOneUpdatesTheInverseInMemoryBeforeTheSave() throws {
        let first = try savedPost("first")
        let second = try savedPost("second")
        let attachment = first.attachments[0]
        attachment.post = second
        try context.processPendingChanges()
        #expect(first.attachments.isEmpty)
        #expect(second.attachments.contains { $0 === attachment })
        try context.save()
        let fresh = ModelContext(context.container)
        let posts = try fresh.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.title)]))
        #expect(posts.map { $0.attachments.count } == [0, 2])
    }

    @Test func appendingToAManyToManyUpdatesTheOtherSide() throws {
        let first = try savedPost("first")
        let second = try savedPost("second")
        let tag = first.tags[0]
        second.tags.append(tag)
        try context.processPendingChanges()
        #expect(tag.posts.contains { $0 === second })
        try context.save()
        #expect(!context.hasChanges)
        let fresh = ModelContext(context.container)
        #expect(try fresh.fetch(FetchDescriptor<Tag>(predicate: #Predicate { $0.name == "tag of first" }))[0].posts.count == 2)
    }

    @Test func deletingCascadesAndTheRegisteredObjectsShowIt() throws {
        let post = try savedPost()
        let tag = post.tags[0]
        try context.delete(post)
        #expect(tag.posts.isEmpty)  // nullified at once
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Attachment>()) == 0)
        #expect(try context.fetch(FetchDescriptor<Tag>()).first === tag)
        #expect(try context.model(Post.self, for: post.persistentModelID) == nil)
    }

    @Test func rollbackRestoresTheSavedValues() throws {
        let post = try savedPost()
        post.title = "Changed"
        try context.processPendingChanges()
        try context.rollback()
        #expect(post.title == "Swift")
        #expect(!context.hasChanges)
    }

    @Test func aPredicateTheStoreCannotRunFailsTheFetch() throws {
        _ = try savedPost()
        #expect(throws: PredicateTranslationError.self) {
            try context.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.title.count > 1 }))
        }
    }

    @Test func sortLimitAndOffsetApply() throws {
        for (i, title) in ["a", "b", "c", "d"].enumerated() {
            _ = try savedPost(title, date: Date(timeIntervalSinceReferenceDate: Double(i)))
        }
        var descriptor = FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date, order: .reverse)])
        descriptor.fetchOffset = 1
        descriptor.fetchLimit = 2
        #expect(try context.fetch(descriptor).map(\.title) == ["c", "b"])
    }

    @Test func insertingASavedObjectAgainIsRefused() throws {
        let post = try savedPost()
        #expect(throws: DataStoreError.self) { try context.insert(post) }
    }
}

/// A struct model written back by `update`.
@StoreActor @Suite struct StructModelContextTests {
    struct Memo: PersistentModel {
        var persistentModelID = PersistentIdentifier.temporary(entityName: "Memo")
        var text = ""
        init() {}
        static let properties: [ModelProperty<Memo>] = [.attribute(\.text, "text")]
    }

    @Test func aStructModelsChangesAreStagedByUpdateOnly() throws {
        let home = try ModelsHome()
        let container = try StoreContainer(
            schema: Schema(models: Memo.self), configurations: [.init(name: "Local", entityNames: nil, path: home.temporary.path + "/memos")])
        let context = ModelContext(container)
        var memo = Memo()
        memo.text = "first"
        try context.insert(memo)
        memo.persistentModelID = try #require(try context.save()[memo.persistentModelID])
        memo.text = "second"
        #expect(!context.hasChanges)  // a copy: the context cannot see it
        try context.update(memo)
        #expect(context.storeContext.changedProperties(of: memo.persistentModelID) == ["text"])
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Memo>()).map(\.text) == ["second"])
    }
}
