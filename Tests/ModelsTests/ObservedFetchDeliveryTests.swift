import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// Observed typed fetches against saves made while a value is on its way to the consumer.
@Suite(.timeLimit(.minutes(10))) struct ObservedFetchDeliveryTests {
    static let all = Models.FetchDescriptor<Article>(sortBy: [SortDescriptor(\.title)])

    /// Two saves land while the consumer waits: the answer it gets is the newest saved one, so
    /// the context's instance never goes back to the values of the first save.
    @MainActor @Test func aValueTakenAfterTwoSavesNeverTakesTheContextsObjectsBackToTheFirst() async throws {
        let directory = TemporaryDirectory("walstore-observe-review")
        defer { directory.remove() }
        let container = try ObservationModelsTests.container(in: directory)
        let context = container.mainContext
        let article = Article(title: "a", date: .distantPast)
        try context.insert(article)
        try context.save()
        // The consumer waits for the next value on the main actor...
        let waiting = Task { @MainActor in
            var values = try container.mainContext.observe(Self.all).makeAsyncIterator()
            guard try await values.next(isolation: #isolation)?.models.map(\.title) == ["a"] else { return nil as [String]? }
            return try await values.next(isolation: #isolation)?.models.map(\.title)
        }
        for _ in 0..<20 { await Task.yield() }
        // ...and two saves return before it runs again.
        article.title = "b"
        try context.save()
        article.title = "c"
        try context.save()

        #expect(try await waiting.value == ["c"])
        #expect(article.title == "c", "the instance keeps the newest saved value")
        #expect(!context.hasChanges)
        try container.close()
    }

    /// A slow consumer's dropped transactions of one store, gone from its history, are an
    /// expired token, not a silent gap before the next store's transactions.
    @Test func transactionsDroppedForASlowConsumerAndThenDeletedFromHistoryAreReportedExpired() async throws {
        let directory = TemporaryDirectory("walstore-observe-review")
        defer { directory.remove() }
        let container = try ObservationModelsTests.container(in: directory)
        var stream = try container.observeTransactions(bufferingLimit: 1).makeAsyncIterator()
        let context = ModelContext(container)
        // Two saves to one store: the second finds the buffer full, so both are to be read back.
        for title in ["a", "b"] {
            try context.insert(Article(title: title, date: .distantPast))
            try context.save()
        }
        try container.deleteHistory(HistoryDescriptor())
        // A save to the other store after them.
        try context.insert(ObservationModelsTests.Reminder())
        try context.save()
        let error = await #expect(throws: DataStoreError.self) { _ = try await stream.next() }
        #expect(error?.code == .historyTokenExpired)
        try container.close()
    }
}
