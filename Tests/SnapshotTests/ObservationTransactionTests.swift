import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Transaction streams of a WALDataStore: every transaction once and as history has it, a
/// slow consumer caught up from history, a start from a token across reopens (a store saved
/// by someone else meanwhile) and across a migration, and expired tokens.
@Suite(.timeLimit(.minutes(10))) struct ObservationTransactionTests {
    @Test func eachSaveIsStreamedOnceAsHistoryRecordsIt() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration())
        var stream = try store.observeTransactions().makeAsyncIterator()
        let id = try store.insertPost("apple")
        try store.update(id, ["title": "avocado"])
        try store.deleteObject(id)
        let history = try store.allHistory()
        #expect(history.count == 3)
        for expected in history { #expect(try await stream.next() == expected) }
        try store.close()
        #expect(try await stream.next() == nil)
    }

    @Test func aSlowConsumerIsCaughtUpFromHistoryWithoutMissingOrRepeatingOne() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration())
        var stream = try store.observeTransactions(bufferingLimit: 2).makeAsyncIterator()
        for i in 0..<7 { try store.insertPost("p\(i)") }
        let history = try store.allHistory()
        var streamed: [DefaultHistoryTransaction] = []
        for _ in history { streamed.append(try #require(try await stream.next())) }
        #expect(streamed == history)
        try store.insertPost("later")
        #expect(try await stream.next()?.transactionIdentifier == 8)
        try store.close()
    }

    @Test func aSlowConsumerWhoseMissedTransactionsExpiredGetsHistoryTokenExpired() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration(.enabled(maximumCount: 2)))
        var stream = try store.observeTransactions(bufferingLimit: 1).makeAsyncIterator()
        // The second save finds the buffer full: both are dropped, to be read back from history,
        // where retention (the newest two) no longer holds them.
        for i in 0..<5 { try store.insertPost("p\(i)") }
        let error = await #expect(throws: DataStoreError.self) { _ = try await stream.next() }
        #expect(error?.code == .historyTokenExpired)
        try store.close()
    }

    /// Opening is exclusive: "another process" saves between our close and our reopen.
    @Test func anObservationFromATokenFirstReturnsWhatWasSavedWhileTheStoreWasClosed() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        var store = try WALDataStore(home.historyConfiguration())
        try store.insertPost("ours")
        let token = try #require(try store.lastToken())
        try store.close()
        // Someone else opens the store and saves twice.
        store = try WALDataStore(home.historyConfiguration())
        try store.insertPost("theirs 1")
        try store.insertPost("theirs 2")
        let theirs = try await store.fetchHistory(HistoryDescriptor(after: token))
        try store.close()
        // We reopen and observe from our token: their two transactions first, then new ones.
        store = try WALDataStore(home.historyConfiguration())
        var stream = try store.observeTransactions(after: token).makeAsyncIterator()
        try store.insertPost("ours again")
        #expect(try await stream.next() == theirs[0])
        #expect(try await stream.next() == theirs[1])
        #expect(try await stream.next()?.transactionIdentifier == token.value + 3)
        // A token whose transaction was deleted meanwhile: the stream says so at once.
        try await store.deleteHistory(HistoryDescriptor(before: theirs[1].token))
        var expired = try store.observeTransactions(after: token).makeAsyncIterator()
        let error = await #expect(throws: DataStoreError.self) { _ = try await expired.next() }
        #expect(error?.code == .historyTokenExpired)
        try store.close()
    }

    @Test func anEraseEndsTheStreamWithHistoryTokenExpired() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration())
        var stream = try store.observeTransactions().makeAsyncIterator()
        try store.insertPost("apple")
        #expect(try await stream.next()?.transactionIdentifier == 1)
        try await store.erase()
        let error = await #expect(throws: DataStoreError.self) { _ = try await stream.next() }
        #expect(error?.code == .historyTokenExpired)
        try store.close()
    }

    @Test func cancellingAStreamFreesItsRegistration() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration())
        let stream = try store.observeTransactions()
        let task = Task { for try await _ in stream {} }
        #expect(store.observerCount == 1)
        task.cancel()
        try await task.value
        #expect(store.observerCount == 0)
        // A stream dropped without being iterated ends too.
        do { _ = try store.observeTransactions() }
        #expect(store.observerCount == 0)
        let foreign = #expect(throws: DataStoreError.self) {
            try store.observeTransactions(after: DefaultHistoryToken(storeIdentifier: "other", value: 1))
        }
        #expect(foreign?.code == .foreignIdentifier)
        #expect(store.observerCount == 0)
        try store.close()
    }

    /// A migration records no transaction and keeps the history's tokens: a new observation
    /// answers from the migrated data, and one from a token of before the migration returns the
    /// transactions after it, with the entity and property names they were recorded with.
    @Test func observationsAcrossAMigration() async throws {
        let home = MigrationHome()
        var configuration = MigrationFixture.configuration(BlogModel.schema, path: home.path)
        configuration.history = .enabled()
        var store = try WALDataStore(configuration)
        let first = try store.insertPost("apple")
        let token = try #require(try store.lastToken())
        try store.update(first, ["title": "apricot"])
        try store.close()
        let renamed = try MigrationFixture.blog {
            let i = $0[named: "Post"].attributes.firstIndex { $0.name == "title" }!
            $0[named: "Post"].attributes[i] = .init("headline", .string, originalName: "title")
            $0[named: "Post"].indexes = $0[named: "Post"].indexes.map { .init($0.properties.map { $0 == "title" ? "headline" : $0 }) }
        }
        var migrated = MigrationFixture.configuration(renamed, path: home.path)
        migrated.history = .enabled()
        store = try WALDataStore(migrated)
        var values = try store.observe(FetchDescriptor(entityName: "Post", predicate: .attribute("headline").beginsWith("a"))).makeAsyncIterator()
        #expect(try await values.next()?.snapshots.map { $0["headline"] } == [.string("apricot")])
        var stream = try store.observeTransactions(after: token).makeAsyncIterator()
        let update = try #require(try await stream.next())
        #expect(update.transactionIdentifier == token.value + 1)
        #expect(update.changes.map { if case .update(let u) = $0 { u.updatedAttributes } else { [] } } == [["title"]])
        try store.update(first, ["headline": "avocado"])
        #expect(try await values.next()?.snapshots.map { $0["headline"] } == [.string("avocado")])
        #expect(try await stream.next()?.transactionIdentifier == token.value + 2)
        try store.close()
    }
}
