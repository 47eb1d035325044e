import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// The history of a WALDataStore: what each save records, fetch filters and limits,
/// deleteHistory and expired tokens, tombstones, and history across reopens and erases.
@Suite struct WALHistoryTests {
    static let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)

    @Test func historyIsOffByDefaultAndRecordsNothing() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "news")]))
        #expect(try store.allHistory().isEmpty)
        #expect(try store.historyKeyTokens().isEmpty)
        #expect(try store.engine.value(forKey: [0x00] + Array("history".utf8)) == nil)
    }

    @Test func eachSaveIsOneTransactionWithItsAuthorTokenAndChangesInOrder() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration())
        let before = Date()
        var tag = BlogModel.tag(name: "news")
        let post = BlogModel.post(title: "Hi", date: Self.epoch, tags: [tag.persistentIdentifier])
        let attachment = BlogModel.attachment(imageData: Data([1, 2, 3]), post: post.persistentIdentifier)
        tag["posts"] = .toMany([post.persistentIdentifier])
        let r1 = try store.save(DataStoreSaveChangesRequest(inserted: [post, tag, attachment], editingState: EditingState(author: "app")))
        let p = r1.remappedIdentifiers[post.persistentIdentifier]!, t = r1.remappedIdentifiers[tag.persistentIdentifier]!
        let a = r1.remappedIdentifiers[attachment.persistentIdentifier]!

        // An update of the title only.
        var renamed = try #require(try store.snapshot(p))
        renamed["title"] = "Hello"
        _ = try store.save(DataStoreSaveChangesRequest(updated: [renamed], editingState: EditingState(author: "editor")))
        // Saying the same values again changes nothing and records nothing.
        _ = try store.save(DataStoreSaveChangesRequest(updated: [try #require(try store.snapshot(p))]))
        // A new tag on the post: the post's tags and the tag's posts change (the inverse).
        var second = BlogModel.tag(name: "second")
        second["posts"] = .toMany([p])
        let r3 = try store.save(DataStoreSaveChangesRequest(inserted: [second]))
        let t2 = r3.remappedIdentifiers[second.persistentIdentifier]!
        // Deleting the tag nullifies the post's link to it.
        _ = try store.save(DataStoreSaveChangesRequest(deleted: [try #require(try store.snapshot(t))]))
        // Deleting the post cascades to its attachment, and the second tag loses it.
        _ = try store.save(DataStoreSaveChangesRequest(deleted: [try #require(try store.snapshot(p))], editingState: EditingState(author: "cleaner")))
        let after = Date()

        let history = try store.allHistory()
        #expect(history.map(\.token.value) == [1, 2, 3, 4, 5])
        #expect(history.map(\.author) == ["app", "editor", nil, nil, "cleaner"])
        #expect(history.allSatisfy { $0.storeIdentifier == store.identifier && $0.timestamp >= before && $0.timestamp <= after })
        #expect(history.map(\.timestamp) == history.map(\.timestamp).sorted())
        #expect(history[0].summaries == [.insert(p), .insert(t), .insert(a)])
        #expect(history[1].summaries == [.update(p, ["title"])])
        #expect(history[2].summaries == [.insert(t2), .update(p, ["tags"])])
        #expect(history[3].summaries == [.delete(t, [:]), .update(p, ["tags"])])
        #expect(history[4].summaries == [.delete(p, [:]), .delete(a, [:]), .update(t2, ["posts"])])
        #expect(history[4].changes.map(\.changeIdentifier) == [0, 1, 2])
        #expect(history[4].changes.allSatisfy { if case .delete(let d) = $0 { d.transactionIdentifier == 5 } else { true } })
        #expect(try store.historyKeyTokens() == [1, 2, 3, 4, 5])
    }

    @Test func upsertsAndBatchDeletesAreRecordedWithTheirAuthor() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration())
        let r = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "news", colour: "red")]))
        let t = try #require(r.remappedIdentifiers.values.first)
        // An insert colliding on the unique name updates the stored tag: an update in history.
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "news", colour: "blue")]))
        try store.delete(DataStoreBatchDeleteRequest(entityName: "Tag", editingState: EditingState(author: "batch")))
        let history = try store.allHistory()
        #expect(history.map(\.summaries) == [[.insert(t)], [.update(t, ["colour"])], [.delete(t, [:])]])
        #expect(history.last?.author == "batch")
    }

    @Test func tombstonesHoldThePreservedAttributesOfEveryDeletedObject() throws {
        let home = WALHome(NotesModel.schema)
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration())
        var note = DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Note"), values: ["title": "Groceries", "body": "milk", "stars": .int(4), "draft": "x"])
        let line = DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Line"), values: ["text": "two litres", "note": .toOne(note.persistentIdentifier)])
        note["lines"] = .toMany([line.persistentIdentifier])
        let r = try store.save(DataStoreSaveChangesRequest(inserted: [note, line]))
        let n = r.remappedIdentifiers[note.persistentIdentifier]!, l = r.remappedIdentifiers[line.persistentIdentifier]!
        // An ephemeral attribute is never stored: changing it is no update.
        var edited = try #require(try store.snapshot(n))
        edited["draft"] = "changed"
        edited["stars"] = .null
        _ = try store.save(DataStoreSaveChangesRequest(updated: [edited]))
        _ = try store.save(DataStoreSaveChangesRequest(deleted: [try #require(try store.snapshot(n))]))
        try store.close()

        let reopened = try WALDataStore(home.historyConfiguration())
        let history = try reopened.allHistory()
        #expect(history.count == 3)
        #expect(history[1].summaries == [.update(n, ["stars"])])
        #expect(history[2].summaries == [.delete(n, ["title": "Groceries", "stars": .null]), .delete(l, ["text": "two litres"])])
        guard case .delete(let d)? = history[2].changes.first else { Issue.record("no delete"); return }
        #expect(d.tombstone["title"] == "Groceries")
        #expect(d.tombstone["body"] == nil, "body is not preserved")
        #expect(d.tombstone.map(\.name) == ["stars", "title"])
    }

    /// Eight saves by two authors over posts and tags, for the filter tests.
    static func filled(_ home: WALHome) throws -> (WALDataStore, [DefaultHistoryTransaction]) {
        let store = try WALDataStore(home.historyConfiguration())
        for i in 0..<8 {
            let snapshot = i % 2 == 0 ? BlogModel.post(title: "p\(i)", date: epoch) : BlogModel.tag(name: "t\(i)")
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [snapshot], editingState: EditingState(author: i % 3 == 0 ? "a" : "b")))
        }
        return (store, try store.allHistory())
    }

    @Test func fetchesFilterByTokenAuthorAndEntityWithLimitsInEitherOrder() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let (store, all) = try Self.filled(home)
        #expect(all.map(\.token.value) == Array(1...8))
        let t3 = all[2].token
        func tokens(_ d: HistoryDescriptor<DefaultHistoryTransaction>) throws -> [UInt64] { try store.fetchHistory(d).map(\.token.value) }
        #expect(try tokens(HistoryDescriptor(after: t3)) == [4, 5, 6, 7, 8])
        #expect(try tokens(HistoryDescriptor(after: t3, sortOrder: .newestFirst)) == [8, 7, 6, 5, 4])
        #expect(try tokens(HistoryDescriptor(after: t3, fetchLimit: 2)) == [4, 5])
        #expect(try tokens(HistoryDescriptor(after: t3, fetchLimit: 2, sortOrder: .newestFirst)) == [8, 7])
        #expect(try tokens(HistoryDescriptor(after: t3, before: all[6].token)) == [4, 5, 6])
        #expect(try tokens(HistoryDescriptor(fetchLimit: 0)) == [])
        #expect(try tokens(HistoryDescriptor(after: all[7].token)) == [])
        // Authors: i % 3 == 0 → "a" (transactions 1, 4, 7).
        #expect(try tokens(HistoryDescriptor(authors: ["a"])) == [1, 4, 7])
        #expect(try tokens(HistoryDescriptor(after: t3, authors: ["a"], fetchLimit: 1, sortOrder: .newestFirst)) == [7])
        #expect(try tokens(HistoryDescriptor(authors: ["nobody"])) == [])
        // Entities: posts in the odd transactions (i even).
        #expect(try tokens(HistoryDescriptor(entityNames: ["Post"])) == [1, 3, 5, 7])
        #expect(try tokens(HistoryDescriptor(entityNames: ["Tag"], fetchLimit: 3)) == [2, 4, 6])
        #expect(try tokens(HistoryDescriptor(entityNames: ["Tag", "Post"])) == Array(1...8))
        #expect(
            try store.fetchHistory(HistoryDescriptor(entityNames: ["Post"])).allSatisfy {
                $0.changes.allSatisfy { $0.changedPersistentIdentifier.entityName == "Post" }
            })
        // A token rebuilt from its value (as a client that kept it as JSON would).
        let decoded = try JSONDecoder().decode(DefaultHistoryToken.self, from: JSONEncoder().encode(t3))
        #expect(decoded == t3)
        #expect(try tokens(HistoryDescriptor(after: decoded)) == [4, 5, 6, 7, 8])
        #expect(all[2].token < all[3].token && all[3].token > t3)

        #expect(throws: DataStoreError.self) { try store.fetchHistory(HistoryDescriptor(fetchLimit: -1)) }
        let foreign = DefaultHistoryToken(storeIdentifier: "other", value: 2)
        #expect(errorCode { try store.fetchHistory(HistoryDescriptor(after: foreign)) } == .foreignIdentifier)
        let future = DefaultHistoryToken(storeIdentifier: store.identifier, value: 9)
        #expect(errorCode { try store.fetchHistory(HistoryDescriptor(after: future)) } == .historyTokenExpired)
    }

    @Test func deleteHistoryExpiresTheTokensBeforeItNeverAnsweringPartially() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let (store, all) = try Self.filled(home)
        try store.deleteHistory(HistoryDescriptor(before: all[4].token))  // deletes 1...4
        #expect(try store.allHistory().map(\.token.value) == [5, 6, 7, 8])
        #expect(try store.historyKeyTokens() == [5, 6, 7, 8])
        // The cut's own token still answers; token 4's transaction is gone, so it has expired.
        #expect(try store.fetchHistory(HistoryDescriptor(after: all[4].token)).map(\.token.value) == [6, 7, 8])
        for old in all[0...3] {
            #expect(errorCode { try store.fetchHistory(HistoryDescriptor(after: old.token)) } == .historyTokenExpired)
        }
        #expect(
            errorCode { try store.fetchHistory(HistoryDescriptor(after: DefaultHistoryToken(storeIdentifier: store.identifier, value: 0))) }
                == .historyTokenExpired)
        // Only the oldest end may be deleted.
        #expect(errorCode { try store.deleteHistory(HistoryDescriptor(before: all[6].token, authors: ["a"])) } == .invalidRequest)
        #expect(
            errorCode { try store.deleteHistory(HistoryDescriptor(before: DefaultHistoryToken(storeIdentifier: store.identifier, value: 20))) }
                == .historyTokenExpired)
        #expect(try store.historyKeyTokens() == [5, 6, 7, 8])
        // Deleting before an older token changes nothing.
        try store.deleteHistory(HistoryDescriptor(before: all[1].token))
        #expect(try store.allHistory().count == 4)
        try store.close()

        // Durable, and new transactions continue the numbering.
        let reopened = try WALDataStore(home.historyConfiguration())
        #expect(errorCode { try reopened.fetchHistory(HistoryDescriptor(after: all[2].token)) } == .historyTokenExpired)
        _ = try reopened.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "later")]))
        #expect(try reopened.allHistory().map(\.token.value) == [5, 6, 7, 8, 9])
        // Deleting it all: every token expires, the newest too.
        try reopened.deleteHistory(HistoryDescriptor())
        #expect(try reopened.allHistory().isEmpty && reopened.historyKeyTokens().isEmpty)
        #expect(
            errorCode { try reopened.fetchHistory(HistoryDescriptor(after: DefaultHistoryToken(storeIdentifier: reopened.identifier, value: 9))) }
                == .historyTokenExpired)
        #expect(errorCode { try reopened.fetchHistory(HistoryDescriptor(after: all[7].token)) } == .historyTokenExpired)
    }

    @Test func eraseAndASessionWithHistoryOffExpireEveryEarlierToken() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let (store, all) = try Self.filled(home)
        try store.erase()
        #expect(try store.allHistory().isEmpty && store.historyKeyTokens().isEmpty)
        #expect(errorCode { try store.fetchHistory(HistoryDescriptor(after: all[6].token)) } == .historyTokenExpired)
        #expect(errorCode { try store.fetchHistory(HistoryDescriptor(after: all[7].token)) } == .historyTokenExpired)
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "after erase")]))
        let last = try #require(try store.lastToken())
        #expect(last.value == 9)
        try store.close()

        // A session with history off: its saves are not recorded, so every token expires.
        do {
            let off = try home.open()
            _ = try off.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "unrecorded")]))
            try off.close()
        }
        let on = try WALDataStore(home.historyConfiguration())
        #expect(try on.allHistory().isEmpty && on.historyKeyTokens().isEmpty)
        #expect(errorCode { try on.fetchHistory(HistoryDescriptor(after: last)) } == .historyTokenExpired)
        _ = try on.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "recorded")]))
        #expect(try on.allHistory().map(\.token.value) == [11])
    }

    @Test func aRefusedSaveRecordsNothing() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration())
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "news")]))
        let files = try home.files()
        #expect(throws: DataStoreError.self) {
            try store.save(
                DataStoreSaveChangesRequest(inserted: [
                    BlogModel.tag(name: "a"), BlogModel.post(title: "x", date: Self.epoch, tags: [.temporary(entityName: "Tag")]),
                ]))
        }
        #expect(try home.files() == files)
        #expect(try store.allHistory().count == 1)
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "next")]))
        #expect(try store.allHistory().map(\.token.value) == [1, 2])
    }

    @Test func aDamagedHistoryRecordIsATypedErrorNotATrap() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try WALDataStore(home.historyConfiguration())
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "news")]))
        let key: [UInt8] = [0x48, 0, 0, 0, 0, 0, 0, 0, 1]
        let good = try #require(try store.engine.value(forKey: key))
        for damaged in [[UInt8](), [2] + good.dropFirst(), Array(good.dropLast()), good + [0], Array(good.prefix(10)) + [0xFF, 0xFF, 0xFF, 0x0F]] {
            try store.engine.write { $0.put(key, damaged) }
            #expect(errorCode { try store.allHistory() } == .corrupted, "\(damaged)")
        }
        try store.engine.write { $0.put([0x00] + Array("history".utf8), [1, 0, 0]) }
        try store.close()
        #expect(errorCode { try WALDataStore(home.historyConfiguration()) } == .corrupted)
    }

    @Test func retentionOutOfRangeIsRefusedAtOpen() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        #expect(errorCode { try WALDataStore(home.historyConfiguration(.enabled(maximumCount: 0))) } == .invalidRequest)
        #expect(errorCode { try WALDataStore(home.historyConfiguration(.enabled(maximumAge: -1))) } == .invalidRequest)
        #expect(errorCode { try WALDataStore(home.historyConfiguration(.enabled(maximumAge: .nan))) } == .invalidRequest)
    }
}
