import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Saves of a store with history share commits: each is still a transaction of its own, with
/// the next token in the order the saves were planned, and its record is in the commit that
/// writes its objects.
@Suite struct WALHistorySharedCommitTests {
    typealias Order = WALSharedCommitOrderTests

    static func authored(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>, _ author: String) -> DataStoreSaveChangesRequest<DefaultSnapshot> {
        var r = request
        r.editingState = EditingState(author: author)
        return r
    }

    @Test func concurrentSavesShareACommitEachWithItsOwnTransactionInOrder() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration())
        _ = try store.save(Self.authored(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "kept")]), "setup"))
        let kept = try #require(try store.all("Tag").first)
        var renamed = kept
        renamed["name"] = "renamed"
        let x = BlogModel.tag(name: "x"), y = BlogModel.tag(name: "y")
        let before = store.engine.statistics.lastSequence
        let outcomes = try Order.saveInOrder(
            store,
            [
                Self.authored(DataStoreSaveChangesRequest(inserted: [x]), "a"),
                // Refused (x is inserted twice in one request): no transaction, no token.
                Self.authored(DataStoreSaveChangesRequest(inserted: [y, y]), "refused"),
                Self.authored(DataStoreSaveChangesRequest(updated: [renamed]), "b"),
                Self.authored(DataStoreSaveChangesRequest(inserted: [y]), "c"),
            ])
        #expect(store.engine.statistics.lastSequence == before + 1, "four saves, one commit")
        #expect(outcomes.map(Order.code) == [nil, .conflictingChanges, nil, nil])
        let xID = try #require(try outcomes[0].get().remappedIdentifiers[x.persistentIdentifier])
        let yID = try #require(try outcomes[3].get().remappedIdentifiers[y.persistentIdentifier])

        let history = try store.allHistory()
        #expect(history.map(\.token.value) == [1, 2, 3, 4], "consecutive, in the saves' order")
        #expect(history.map(\.author) == ["setup", "a", "b", "c"])
        #expect(history[1].summaries == [.insert(xID)])
        #expect(history[2].summaries == [.update(kept.persistentIdentifier, ["name"])])
        #expect(history[3].summaries == [.insert(yID)])
        // Each transaction is fetched on its own, after the one before it.
        for (earlier, later) in zip(history, history.dropFirst()) {
            let fetched = try store.fetchHistory(HistoryDescriptor(after: earlier.token, fetchLimit: 1))
            #expect(fetched.map(\.token) == [later.token])
            #expect(fetched.first?.summaries == later.summaries)
        }
        #expect(try store.lastToken()?.value == 4)
        try store.close()
        let reopened = try WALDataStore(home.historyConfiguration())
        #expect(try reopened.allHistory().map(\.author) == ["setup", "a", "b", "c"])
        _ = try reopened.save(Self.authored(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "z")]), "d"))
        #expect(try reopened.lastToken()?.value == 5, "the next token after the shared commit's")
    }

    @Test func retentionInASharedCommitDeletesTheRecordsOfEarlierSavesOfTheSameCommit() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration(.enabled(maximumCount: 2)))
        let before = store.engine.statistics.lastSequence
        let outcomes = try Order.saveInOrder(
            store,
            (1...5).map { i in
                Self.authored(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "t\(i)")]), "s\(i)")
            })
        for outcome in outcomes { _ = try outcome.get() }
        #expect(store.engine.statistics.lastSequence == before + 1)
        #expect(try store.allHistory().map(\.author) == ["s4", "s5"])
        #expect(try store.historyKeyTokens() == [4, 5], "the records the later saves expired are not left behind")
        try store.close()
        let reopened = try WALDataStore(home.historyConfiguration(.enabled(maximumCount: 2)))
        #expect(try reopened.historyKeyTokens() == [4, 5])
        #expect(try reopened.allHistory().map(\.token.value) == [4, 5])
    }

    @Test func aGroupPlannedWhileTheOneBeforeIsWrittenTakesTheTokensAfterIt() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration())
        store.coalescer.limitGroups(to: 2)
        let before = store.engine.statistics.lastSequence
        let outcomes = try Order.saveInOrder(
            store,
            (1...5).map { i in
                Self.authored(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "t\(i)")]), "s\(i)")
            })
        for outcome in outcomes { _ = try outcome.get() }
        #expect(store.engine.statistics.lastSequence == before + 3, "groups of two")
        let history = try store.allHistory()
        #expect(history.map(\.token.value) == [1, 2, 3, 4, 5])
        #expect(history.map(\.author) == ["s1", "s2", "s3", "s4", "s5"])
    }

    static var faultConfiguration: WALStoreConfiguration {
        var c = WALSharedCommitOrderTests.faultConfiguration
        c.history = .enabled()
        return c
    }

    @Test func aFailedSyncFailsEverySaveOfTheGroupAndRecordsNoTransaction() throws {
        let fs = FaultInjectingFileSystem()
        let store = try WALDataStore(Self.faultConfiguration, fileSystem: fs)
        _ = try store.save(Self.authored(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "kept")]), "setup"))
        fs.failNext(.sync, errno: EIO)
        let outcomes = try Order.saveInOrder(
            store,
            [
                Self.authored(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "x")]), "a"),
                Self.authored(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "y")]), "b"),
            ])
        #expect(outcomes.map(Order.code) == [.engine, .engine])
        #expect(try store.allHistory().map(\.author) == ["setup"])
        try? store.close()
        fs.powerLoss()
        let reopened = try WALDataStore(Self.faultConfiguration, fileSystem: fs)
        #expect(try reopened.all("Tag").map { $0["name"] } == [.string("kept")])
        #expect(try reopened.allHistory().map(\.author) == ["setup"])
        _ = try reopened.save(Self.authored(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "x")]), "again"))
        #expect(try reopened.allHistory().map(\.token.value) == [1, 2])
    }

    @Test func powerLossAtEveryOperationOfASharedHistoryCommitKeepsObjectsAndHistoryTogether() throws {
        let base = FaultInjectingFileSystem()
        try WALHistoryPowerLossTests.prepared(base)
        try WALHistoryPowerLossTests.sweep(base) { store in
            let sequence = store.engine.statistics.lastSequence
            var first = try WALPowerLossTests.request(store)
            first.editingState = EditingState(author: "crash")
            let outcomes = try Order.saveInOrder(
                store,
                [
                    first,
                    Self.authored(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "late")]), "late"),
                    Self.authored(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "last")]), "last"),
                ])
            for outcome in outcomes { _ = try outcome.get() }
            #expect(store.engine.statistics.lastSequence == sequence + 1, "one commit for the three saves")
        }
    }
}
