import Dispatch
import Foundation
import Models
import Snapshot
import Testing

/// An actor of the app's own with its own context (the pattern SwiftData's `@ModelActor` writes).
actor PostWriter: ModelActor {
    nonisolated let modelExecutor: any SerialModelExecutor
    init(modelContainer: StoreContainer, label: String) {
        modelExecutor = DefaultSerialModelExecutor(modelContainer: modelContainer, label: label)
    }

    /// Whether this job runs on the actor's own executor queue.
    var runsOnItsOwnQueue: Bool { (modelExecutor as? DefaultSerialModelExecutor)?.isCurrentQueue == true }

    /// Saves a post titled `title`; returns its identifier and how many posts the context sees.
    func write(_ title: String) throws -> (PersistentIdentifier, Int) {
        let post = Post()
        post.title = title
        try modelContext.insert(post)
        try modelContext.save()
        return (post.persistentModelID, try modelContext.fetchCount(FetchDescriptor<Post>()))
    }

    func title(of id: PersistentIdentifier) throws -> String? { try modelContext.model(Post.self, for: id)?.title }

    /// Holds the actor's queue: signals `started`, then waits for `release` (at most a minute, so
    /// a regression fails instead of hanging). Returns whether `release` came.
    func hold(started: DispatchSemaphore, release: DispatchSemaphore) -> Bool {
        started.signal()
        return release.wait(timeout: .now() + 60) == .success
    }
}

/// Contexts where the code runs: the main actor's, a model actor's, `StoreActor`'s, each on a
/// serial queue of its own.
@Suite struct ModelActorTests {
    @Test func aModelActorsJobsRunOnItsOwnExecutorWithItsOwnContext() async throws {
        let home = try ModelsHome()
        let writer = PostWriter(modelContainer: try home.container(), label: "writer")
        #expect(await writer.runsOnItsOwnQueue)
        let (id, count) = try await writer.write("from the actor")
        #expect(!id.isTemporary)
        #expect(count == 1)
        #expect(try await writer.title(of: id) == "from the actor")
        #expect(writer.modelContainer.schema == ModelsHome.schema)
    }

    @MainActor @Test func theMainContextIsOneContextOnTheMainActor() throws {
        let home = try ModelsHome()
        let container = try home.container()
        let context = container.mainContext
        #expect(container.mainContext === context)
        let post = Post()
        post.title = "from the main actor"
        try context.insert(post)
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Post>()).map(\.title) == ["from the main actor"])
        #expect(try context.fetch(FetchDescriptor<Post>()).first === post)
    }

    @Test func contextsOnDifferentActorsMakeProgressWhileAnotherIsBlocked() async throws {
        let home = try ModelsHome()
        let container = try home.container()
        let held = PostWriter(modelContainer: container, label: "held")
        let writer = PostWriter(modelContainer: container, label: "writer")
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holding = Task { await held.hold(started: started, release: release) }
        started.wait()

        // While `held`'s queue is blocked, the other actor, the main actor and StoreActor save.
        let (id, _) = try await writer.write("while another actor is blocked")
        let mainTitle = try await MainActor.run {
            let post = Post()
            post.title = "on the main actor"
            try container.mainContext.insert(post)
            try container.mainContext.save()
            return post.title
        }
        let storeActorCount = try await StoreActor.run {
            let context = ModelContext(container)
            let post = Post()
            post.title = "on StoreActor"
            try context.insert(post)
            try context.save()
            return try context.fetchCount(FetchDescriptor<Post>())
        }
        release.signal()
        #expect(await holding.value, "the held actor was released by the others' progress, not by its guard")
        #expect(mainTitle == "on the main actor")
        #expect(storeActorCount == 3)
        #expect(try await held.title(of: id) == "while another actor is blocked", "the released actor reads what the others saved")
    }
}
