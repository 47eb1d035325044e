import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// The context's pending objects as SwiftData lists them: `insertedModelsArray`,
/// `changedModelsArray`, `deletedModelsArray`.
@StoreActor @Suite struct ModelContextPendingModelsTests {
    let home: ModelsHome
    let context: ModelContext

    init() throws {
        home = try ModelsHome()
        context = try home.context()
    }

    func titles(_ models: [any EntityModel]) -> [String] {
        models.map { model in
            if let post = model as? Post { return "post \(post.title)" }
            if let tag = model as? Tag { return "tag \(tag.name)" }
            return "\(type(of: model))"
        }
    }

    @Test func insertsChangesAndDeletesAreListedUntilTheSave() throws {
        let post = Post()
        post.title = "first"
        let tag = Tag()
        tag.name = "swift"
        post.tags = [tag]
        try context.insert(post)
        #expect(titles(context.insertedModelsArray) == ["post first", "tag swift"], "the tag the post reaches is inserted too")
        #expect(context.changedModelsArray.isEmpty && context.deletedModelsArray.isEmpty)
        try context.save()
        #expect(context.insertedModelsArray.isEmpty && context.changedModelsArray.isEmpty && context.deletedModelsArray.isEmpty)

        post.title = "renamed"
        #expect(titles(context.changedModelsArray) == ["post renamed"], "a property changed in place is found")
        #expect(context.insertedModelsArray.isEmpty)
        try context.delete(tag)
        #expect(titles(context.deletedModelsArray) == ["tag swift"])
        #expect(!titles(context.changedModelsArray).contains("tag swift"), "a deleted object is not listed as changed")
        try context.save()
        #expect(context.insertedModelsArray.isEmpty && context.changedModelsArray.isEmpty && context.deletedModelsArray.isEmpty)
    }

    @Test func aRollbackEmptiesEveryList() throws {
        let post = Post()
        post.title = "draft"
        try context.insert(post)
        try context.rollback()
        #expect(context.insertedModelsArray.isEmpty && context.changedModelsArray.isEmpty && context.deletedModelsArray.isEmpty)
    }
}
