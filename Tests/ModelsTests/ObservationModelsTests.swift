import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// Observation through the Models layer: a typed fetch on a `ModelContext` that follows saves of
/// other contexts, the container's transaction stream across its stores, a catch-up across a
/// reopen of the container, and the end of an observation.
@Suite(.timeLimit(.minutes(10))) struct ObservationModelsTests {
    /// Kept in a store of its own.
    final class Reminder: ModelObject, PersistentModel {
        var text = ""
        static let properties: [ModelProperty<Reminder>] = [.attribute(\.text)]
    }

    static let schema: Schema = {
        do { return try Schema(models: Article.self, Figure.self, Label.self, Reminder.self) } catch { preconditionFailure("\(error)") }
    }()

    static func container(in directory: TemporaryDirectory, history: WALStoreConfiguration.History = .enabled()) throws -> StoreContainer {
        try StoreContainer(
            schema: schema,
            configurations: [
                .init(name: "Cloud", entityNames: ["Article", "Figure", "Label"], path: directory.path + "/cloud"),
                .init(name: "Local", entityNames: ["Reminder"], path: directory.path + "/local"),
            ],
            history: history)
    }

    static let pinned = Models.FetchDescriptor<Article>(predicate: #Predicate { $0.isPinned }, sortBy: [SortDescriptor(\.title)])

    @Test func aTypedObservationFollowsSavesOfAnotherContext() async throws {
        let directory = TemporaryDirectory("walstore-observe")
        defer { directory.remove() }
        let container = try Self.container(in: directory)
        let viewer = ModelContext(container)
        let writer = ModelContext(container)
        let first = Article(title: "b", date: .distantPast, isPinned: true)
        try writer.insert(first)
        try writer.save()
        var values = try viewer.observe(Self.pinned).makeAsyncIterator()
        let initial = try #require(try await values.next())
        #expect(initial.models.map(\.title) == ["b"])
        let shown = initial.models[0]

        // Another context inserts one and renames the first: the viewer's instance takes the
        // saved values, and stays the one instance of its identifier.
        try writer.insert(Article(title: "a", date: .distantPast, isPinned: true))
        try writer.insert(Article(title: "not pinned", date: .distantPast))
        first.title = "c"
        try writer.save()
        let next = try #require(try await values.next())
        #expect(next.models.map(\.title) == ["a", "c"])
        #expect(next.models[1] === shown && shown.title == "c")
        #expect(next.inserted.count == 1 && next.updated == [shown.persistentModelID] && next.deleted.isEmpty)
        #expect(!viewer.hasChanges, "a refreshed object is not a pending change")

        // An object with a change pending in the viewer keeps its own value.
        shown.content = "mine"
        first.title = "d"
        try writer.save()
        #expect(try await values.next()?.models.map(\.title) == ["a", "c"])
        #expect(viewer.hasChanges)
        try container.close()
        #expect(try await values.next() == nil)
    }

    @Test func theContainersTransactionStreamHasEveryStoresTransactionsOnce() async throws {
        let directory = TemporaryDirectory("walstore-observe")
        defer { directory.remove() }
        let container = try Self.container(in: directory)
        var stream = try container.observeTransactions().makeAsyncIterator()
        let one = ModelContext(container, editingState: EditingState(author: "one"))
        let two = ModelContext(container, editingState: EditingState(author: "two"))
        let article = Article(title: "a", date: .distantPast)
        try one.insert(article)
        try one.save()
        // A save across both stores is one transaction in each.
        let theirs = try #require(try two.fetch(Models.FetchDescriptor<Article>()).first)
        theirs.title = "b"
        let reminder = Reminder()
        reminder.text = "publish"
        try two.insert(reminder)
        try two.save()
        var seen: [String: [UInt64]] = [:]
        var authors: [String?] = []
        for _ in 0..<3 {
            let t = try #require(try await stream.next())
            seen[t.storeIdentifier, default: []].append(t.transactionIdentifier)
            authors.append(t.author)
        }
        let cloud = container.store(named: "Cloud")!.identifier, local = container.store(named: "Local")!.identifier
        #expect(seen == [cloud: [1, 2], local: [1]])
        #expect(authors.sorted { ($0 ?? "") < ($1 ?? "") } == ["one", "two", "two"])
        #expect(container.stores.allSatisfy { $0.observerCount == 1 })
        try container.close()
        #expect(try await stream.next() == nil)
        #expect(container.stores.allSatisfy { $0.observerCount == 0 })
    }

    @Test func aContainerObservationFromTokensCatchesUpAfterAReopen() async throws {
        let directory = TemporaryDirectory("walstore-observe")
        defer { directory.remove() }
        var container = try Self.container(in: directory)
        let context = ModelContext(container)
        try context.insert(Article(title: "a", date: .distantPast))
        try context.save()
        let token = try #require(try container.fetchHistory(HistoryDescriptor()).last?.token)
        try container.close()
        container = try Self.container(in: directory)
        let later = ModelContext(container)
        try later.insert(Article(title: "b", date: .distantPast))
        try later.save()
        let missed = try container.fetchHistory(HistoryDescriptor(after: token))
        try container.close()
        container = try Self.container(in: directory)
        var stream = try container.observeTransactions(after: [token]).makeAsyncIterator()
        #expect(try await stream.next() == missed[0])
        let refused = #expect(throws: DataStoreError.self) { try container.observeTransactions(after: [token, token]) }
        #expect(refused?.code == .invalidRequest)
        try container.close()
    }

    @Test func cancellingATypedObservationFreesItsRegistration() async throws {
        let directory = TemporaryDirectory("walstore-observe")
        defer { directory.remove() }
        let container = try Self.container(in: directory, history: .disabled)
        let store = try container.store(forEntity: "Article")
        let observation = try ModelContext(container).storeContext.observe(try Self.pinned.storeDescriptor())
        let task = Task { for try await _ in observation {} }
        #expect(store.observerCount == 1)
        task.cancel()
        try await task.value
        #expect(store.observerCount == 0)
        let refused = #expect(throws: DataStoreError.self) { try container.observeTransactions() }
        #expect(refused?.code == .invalidRequest)
        try container.close()
    }
}
