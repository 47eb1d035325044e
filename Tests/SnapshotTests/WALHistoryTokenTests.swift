import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Synchronization
import Testing

/// Every way a history token can be stale is refused with a typed error, never answered in
/// part; transactions saved without an author can be asked for; refused history calls write
/// nothing.
@Suite struct WALHistoryTokenTests {
    static let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)

    /// A store with history on and `count` transactions, authored `a`, `nil`, `b`, `nil`, …
    static func filled(_ home: WALHome, _ history: WALStoreConfiguration.History = .enabled(), count: Int = 8) throws -> WALDataStore {
        let store = try WALDataStore(home.historyConfiguration(history))
        for i in 0..<count {
            let author: String? = i % 2 == 1 ? nil : (i % 4 == 0 ? "a" : "b")
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "t\(i)")], editingState: EditingState(author: author)))
        }
        return store
    }

    static func token(_ store: WALDataStore, _ value: UInt64) -> DefaultHistoryToken {
        DefaultHistoryToken(storeIdentifier: store.identifier, value: value)
    }

    static func tokens(_ store: WALDataStore, _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws -> [UInt64] {
        try store.fetchHistory(descriptor).map(\.token.value)
    }

    @Test func theTokenOfATransactionADeleteHistoryCutRemovedHasExpired() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try Self.filled(home)
        try store.deleteHistory(HistoryDescriptor(before: Self.token(store, 5)))
        // 4 is just below the cut: its transaction is gone, so the token has expired.
        #expect(errorCode { try store.fetchHistory(HistoryDescriptor(after: Self.token(store, 4))) } == .historyTokenExpired)
        #expect(errorCode { try store.fetchHistory(HistoryDescriptor(after: Self.token(store, 1), authors: ["a"])) } == .historyTokenExpired)
        // The cut's own token is kept, and answers completely.
        #expect(try Self.tokens(store, HistoryDescriptor(after: Self.token(store, 5))) == [6, 7, 8])
        try store.close()
        let reopened = try WALDataStore(home.historyConfiguration())
        #expect(errorCode { try reopened.fetchHistory(HistoryDescriptor(after: Self.token(reopened, 4))) } == .historyTokenExpired)
        #expect(try Self.tokens(reopened, HistoryDescriptor(after: Self.token(reopened, 5))) == [6, 7, 8])
    }

    @Test func retentionByCountExpiresTheTokensOfTheTransactionsItDrops() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try Self.filled(home, .enabled(maximumCount: 3))
        #expect(try Self.tokens(store, HistoryDescriptor()) == [6, 7, 8])
        #expect(errorCode { try store.fetchHistory(HistoryDescriptor(after: Self.token(store, 5))) } == .historyTokenExpired)
        #expect(try Self.tokens(store, HistoryDescriptor(after: Self.token(store, 6))) == [7, 8])
    }

    @Test func retentionByAgeExpiresTheTokensOfTheTransactionsItDrops() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration(.enabled(maximumAge: 60)))
        let now = Mutex(Self.epoch)
        store.setHistoryClock { now.withLock { $0 } }
        for i in 0..<4 {
            now.withLock { $0 = Self.epoch.addingTimeInterval(Double(i) * 50) }
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "t\(i)")]))
        }
        // At 150 s, what is older than 90 s (tokens 1 and 2, at 0 s and 50 s) has gone.
        #expect(try Self.tokens(store, HistoryDescriptor()) == [3, 4])
        #expect(errorCode { try store.fetchHistory(HistoryDescriptor(after: Self.token(store, 2))) } == .historyTokenExpired)
        #expect(try Self.tokens(store, HistoryDescriptor(after: Self.token(store, 3))) == [4])
    }

    @Test func aTokenNewerThanTheNewestTransactionIsRefusedInEveryPlaceATokenGoes() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try Self.filled(home)
        let future = Self.token(store, 9)
        #expect(errorCode { try store.fetchHistory(HistoryDescriptor(after: future)) } == .historyTokenExpired)
        #expect(errorCode { try store.fetchHistory(HistoryDescriptor(before: future)) } == .historyTokenExpired)
        #expect(errorCode { try store.deleteHistory(HistoryDescriptor(before: future)) } == .historyTokenExpired)
        #expect(try Self.tokens(store, HistoryDescriptor(before: Self.token(store, 8))) == Array(1...7))
    }

    @Test func aTokenOfAnotherStoreIsRefusedInEveryPlaceATokenGoes() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try Self.filled(home)
        let foreign = DefaultHistoryToken(storeIdentifier: "another store", value: 3)
        #expect(errorCode { try store.fetchHistory(HistoryDescriptor(after: foreign)) } == .foreignIdentifier)
        #expect(errorCode { try store.fetchHistory(HistoryDescriptor(before: foreign)) } == .foreignIdentifier)
        #expect(errorCode { try store.deleteHistory(HistoryDescriptor(before: foreign)) } == .foreignIdentifier)
        #expect(try Self.tokens(store, HistoryDescriptor()) == Array(1...8))
    }

    @Test func transactionsSavedWithoutAnAuthorCanBeAskedFor() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try Self.filled(home)
        #expect(try store.fetchHistory(HistoryDescriptor()).map(\.author) == ["a", nil, "b", nil, "a", nil, "b", nil])
        #expect(try Self.tokens(store, HistoryDescriptor(withoutAuthor: true)) == [2, 4, 6, 8])
        #expect(try Self.tokens(store, HistoryDescriptor(authors: ["b"], withoutAuthor: true)) == [2, 3, 4, 6, 7, 8])
        #expect(try Self.tokens(store, HistoryDescriptor(authors: ["b"])) == [3, 7])
        #expect(try Self.tokens(store, HistoryDescriptor(after: Self.token(store, 4), fetchLimit: 1, withoutAuthor: true)) == [6])
        #expect(try Self.tokens(store, HistoryDescriptor(fetchLimit: 2, sortOrder: .newestFirst, withoutAuthor: true)) == [8, 6])
        #expect(try Self.tokens(store, HistoryDescriptor(authors: [], withoutAuthor: false)).isEmpty)
    }

    @Test func refusedHistoryCallsLeaveTheFilesByteIdentical() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try Self.filled(home)
        try store.deleteHistory(HistoryDescriptor(before: Self.token(store, 3)))
        let files = try home.files()
        let refused: [(DataStoreError.Code, () throws -> Void)] = [
            (.invalidRequest, { try store.deleteHistory(HistoryDescriptor(before: Self.token(store, 6), withoutAuthor: true)) }),
            (.invalidRequest, { try store.deleteHistory(HistoryDescriptor(before: Self.token(store, 6), authors: ["a"])) }),
            (.invalidRequest, { try store.deleteHistory(HistoryDescriptor(fetchLimit: 1)) }),
            (.historyTokenExpired, { try store.deleteHistory(HistoryDescriptor(before: Self.token(store, 20))) }),
            (.foreignIdentifier, { try store.deleteHistory(HistoryDescriptor(before: DefaultHistoryToken(storeIdentifier: "x", value: 5))) }),
            (.historyTokenExpired, { _ = try store.fetchHistory(HistoryDescriptor(after: Self.token(store, 2))) }),
            (.invalidRequest, { _ = try store.fetchHistory(HistoryDescriptor(fetchLimit: -1)) }),
        ]
        for (code, call) in refused {
            #expect(errorCode { try call() } == code)
            #expect(try home.files() == files, "a refused \(code) call wrote nothing")
        }
        #expect(try Self.tokens(store, HistoryDescriptor()) == Array(3...8))
    }
}
