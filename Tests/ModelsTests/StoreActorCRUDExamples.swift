import Foundation
import Models
import Snapshot
import Testing

/// Create, read, update and delete from code isolated to `StoreActor`: every call is
/// synchronous, and model objects are used directly.
@StoreActor enum OnTheStoreActor {
    static func create(title: String, in context: ModelContext) throws -> Post {
        let post = Post()
        post.title = title
        post.date = .now
        try context.insert(post)
        try context.save()
        return post
    }

    static func read(title: String, in context: ModelContext) throws -> Post? {
        try context.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.title == title })).first
    }

    static func update(_ post: Post, title: String, in context: ModelContext) throws {
        post.title = title
        try context.save()
    }

    static func delete(_ post: Post, in context: ModelContext) throws {
        try context.delete(post)
        try context.save()
    }
}

/// A context that lives on `StoreActor` (an isolated class is `Sendable`, so other actors can
/// hold it and reach its context through `StoreActor.run`).
@StoreActor final class StoreActorContext {
    let context: ModelContext
    init(_ container: StoreContainer) { context = ModelContext(container) }
}

/// The same from another actor: every call awaits, the work on model objects runs on
/// `StoreActor` (`StoreActor.run`), and only `Sendable` values — identifiers, titles — come
/// back. Returning a `Post` from `StoreActor.run` does not compile: it is not `Sendable`.
actor Editor {
    let onTheStoreActor: StoreActorContext
    init(container: StoreContainer) async { onTheStoreActor = await StoreActorContext(container) }

    func create(title: String) async throws -> PersistentIdentifier {
        try await StoreActor.run { [onTheStoreActor] in try OnTheStoreActor.create(title: title, in: onTheStoreActor.context).persistentModelID }
    }

    func title(of id: PersistentIdentifier) async throws -> String? {
        try await StoreActor.run { [onTheStoreActor] in try onTheStoreActor.context.model(Post.self, for: id)?.title }
    }

    func rename(_ id: PersistentIdentifier, to title: String) async throws {
        try await StoreActor.run { [onTheStoreActor] in
            let context = onTheStoreActor.context
            guard let post = try context.model(Post.self, for: id) else { return }
            try OnTheStoreActor.update(post, title: title, in: context)
        }
    }

    func delete(_ id: PersistentIdentifier) async throws {
        try await StoreActor.run { [onTheStoreActor] in
            let context = onTheStoreActor.context
            guard let post = try context.model(Post.self, for: id) else { return }
            try OnTheStoreActor.delete(post, in: context)
        }
    }
}

@Suite struct StoreActorCRUDExampleTests {
    @StoreActor @Test func createReadUpdateDeleteOnTheActor() throws {
        let home = try ModelsHome()
        let context = try home.context()
        let post = try OnTheStoreActor.create(title: "first", in: context)
        #expect(try OnTheStoreActor.read(title: "first", in: context) === post)
        try OnTheStoreActor.update(post, title: "second", in: context)
        #expect(try OnTheStoreActor.read(title: "first", in: context) == nil)
        #expect(try ModelContext(context.container).fetch(FetchDescriptor<Post>()).map(\.title) == ["second"])
        try OnTheStoreActor.delete(post, in: context)
        #expect(try ModelContext(context.container).fetchCount(FetchDescriptor<Post>()) == 0)
    }

    @Test func createReadUpdateDeleteFromAnotherActor() async throws {
        let home = try ModelsHome()
        let editor = await Editor(container: try home.container())
        let id = try await editor.create(title: "first")
        #expect(!id.isTemporary)
        #expect(try await editor.title(of: id) == "first")
        try await editor.rename(id, to: "second")
        #expect(try await editor.title(of: id) == "second")
        try await editor.delete(id)
        #expect(try await editor.title(of: id) == nil)
    }
}
