import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Synchronization
import Testing

/// Retention by count and age, and deleteHistory, under compaction: exactly the retained
/// transactions remain, and the bytes of the others leave the files.
@Suite struct WALHistoryRetentionTests {
    /// Saves `count` tags, each by the author `marker-<n>`, numbered from `first`.
    static func save(_ store: WALDataStore, _ range: ClosedRange<Int>) throws {
        for n in range {
            _ = try store.save(
                DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "tag \(n)")], editingState: EditingState(author: "marker-\(n)-end")))
        }
    }

    /// Which of the markers `range` appear in any file of the store.
    static func markersInFiles(_ home: WALHome, _ range: ClosedRange<Int>) throws -> Set<Int> {
        let contents = try home.files().values
        var found: Set<Int> = []
        for n in range where contents.contains(where: { $0.range(of: Data("marker-\(n)-end".utf8)) != nil }) { found.insert(n) }
        return found
    }

    @Test func countRetentionKeepsExactlyTheNewestTransactionsAndCompactionDropsTheRest() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let configuration = home.historyConfiguration(.enabled(maximumCount: 5), compressionLevel: 0)
        let store = try WALDataStore(configuration)
        try Self.save(store, 1...20)
        #expect(try store.allHistory().map(\.token.value) == Array(16...20))
        #expect(try store.historyKeyTokens() == Array(16...20), "each save deleted the transaction that fell out")
        #expect(try Self.markersInFiles(home, 1...20) == Set(1...20), "before compaction the log still holds them all")
        _ = try store.engine.compact()
        #expect(try store.historyKeyTokens() == Array(16...20))
        #expect(try Self.markersInFiles(home, 1...20) == Set(16...20))
        try store.close()
        let reopened = try WALDataStore(configuration)
        #expect(try reopened.allHistory().map(\.author) == (16...20).map { "marker-\($0)-end" })
        #expect(
            errorCode { try reopened.fetchHistory(HistoryDescriptor(after: DefaultHistoryToken(storeIdentifier: reopened.identifier, value: 15))) }
                == .historyTokenExpired)
        #expect(try reopened.fetchHistory(HistoryDescriptor(after: DefaultHistoryToken(storeIdentifier: reopened.identifier, value: 16))).count == 4)
    }

    @Test func aLowerCountAtOpenPrunesAWholeBacklogAcrossManyChunks() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        do {
            var c = home.historyConfiguration()
            c.options.syncMode = .none
            let store = try WALDataStore(c)
            try Self.save(store, 1...150)
            try store.close()
        }
        let store = try WALDataStore(home.historyConfiguration(.enabled(maximumCount: 3), compressionLevel: 0))
        #expect(try store.historyKeyTokens() == [148, 149, 150])
        _ = try store.engine.compact()
        #expect(try Self.markersInFiles(home, 1...150) == [148, 149, 150])
    }

    @Test func ageRetentionDeletesTransactionsOlderThanTheMaximumAge() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let configuration = home.historyConfiguration(.enabled(maximumAge: 1200), compressionLevel: 0)
        let store = try WALDataStore(configuration)
        let base = Date()
        let offset = Mutex<TimeInterval>(-5000)
        store.setHistoryClock { base.addingTimeInterval(offset.withLock { $0 }) }
        // Transactions at -5000, -4500, …, -500 seconds, then one now.
        for n in 1...10 {
            try Self.save(store, n...n)
            offset.withLock { $0 += 500 }
        }
        // At 0: the ones older than -1200 (1...8, at -5000 ... -1500) go; 9 (at -1000) stays.
        try Self.save(store, 11...11)
        #expect(try store.allHistory().map(\.token.value) == [9, 10, 11])
        #expect(try store.historyKeyTokens() == [9, 10, 11])
        _ = try store.engine.compact()
        #expect(try Self.markersInFiles(home, 1...11) == [9, 10, 11])
        try store.close()
        // At open, with the real clock (about `base`), nothing more is too old.
        let reopened = try WALDataStore(configuration)
        #expect(try reopened.allHistory().map(\.token.value) == [9, 10, 11])
    }

    @Test func deletedHistoryLeavesTheFilesAtCompaction() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration(compressionLevel: 0))
        try Self.save(store, 1...12)
        let all = try store.allHistory()
        try store.deleteHistory(HistoryDescriptor(before: all[7].token))
        _ = try store.engine.compact()
        #expect(try store.historyKeyTokens() == Array(8...12))
        #expect(try Self.markersInFiles(home, 1...12) == Set(8...12))
        // The objects are untouched.
        #expect(try store.all("Tag").count == 12)
    }
}
