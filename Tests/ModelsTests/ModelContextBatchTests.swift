import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// `delete(model:where:)` and `transaction(block:)`, as SwiftData's.
@StoreActor @Suite struct ModelContextBatchTests {
    let home: ModelsHome
    let context: ModelContext

    init() throws {
        home = try ModelsHome()
        context = try home.context()
    }

    func savePosts(_ titles: [String]) throws -> [Post] {
        let posts = titles.map { title in
            let post = Post()
            post.title = title
            let attachment = Attachment()
            attachment.imageData = Data(title.utf8)
            post.attachments = [attachment]
            return post
        }
        for post in posts { try context.insert(post) }
        try context.save()
        return posts
    }

    @Test func deleteWhereStagesTheSelectedObjectsForTheNextSave() throws {
        let posts = try savePosts(["swift 1", "rust", "swift 2"])
        try context.delete(model: Post.self, where: #Predicate { $0.title.contains("swift") })
        #expect(posts.map { $0.isDeleted } == [true, false, true], "the registered objects read as deleted")
        #expect(try ModelContext(context.container).fetchCount(FetchDescriptor<Post>()) == 3, "nothing is removed before the save")
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Post>()).map(\.title) == ["rust"])
        #expect(try context.fetchCount(FetchDescriptor<Attachment>()) == 1, "the cascade removed the deleted posts' attachments")
    }

    @Test func deleteWithoutAPredicateStagesEveryObjectOfTheModel() throws {
        _ = try savePosts(["a", "b"])
        try context.delete(model: Attachment.self)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Attachment>()) == 0)
        #expect(try context.fetchCount(FetchDescriptor<Post>()) == 2)
    }

    @Test func aTransactionSavesWhatItsBlockDid() throws {
        try context.transaction {
            let post = Post()
            post.title = "in a transaction"
            try context.insert(post)
        }
        #expect(!context.hasChanges)
        #expect(try context.fetch(FetchDescriptor<Post>()).map(\.title) == ["in a transaction"])
    }

    struct Stop: Error {}

    @Test func aTransactionWhoseBlockThrowsSavesNothingAndLeavesNothingPending() throws {
        let before = try directoryFiles(home.temporary.path)
        #expect(throws: Stop.self) {
            try context.transaction {
                let post = Post()
                post.title = "never saved"
                try context.insert(post)
                throw Stop()
            }
        }
        #expect(!context.hasChanges && context.insertedModelsArray.isEmpty)
        #expect(try context.fetchCount(FetchDescriptor<Post>()) == 0)
        #expect(try directoryFiles(home.temporary.path) == before, "nothing was written")
    }
}
