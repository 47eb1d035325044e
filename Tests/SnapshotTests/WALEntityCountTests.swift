import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// The per-entity count keys: every save, batch delete, cascade, upsert, shared commit and
/// erase keeps them equal to the objects stored, and a count without predicate reads them
/// instead of the records.
@Suite struct WALEntityCountTests {
    static let entities = ["Post", "Tag", "Attachment"]
    static let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)

    static func count(_ store: WALDataStore, _ entity: String, offset: Int? = nil, limit: Int? = nil) throws -> Int {
        try store.fetchCount(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: entity, fetchLimit: limit, fetchOffset: offset)))
    }

    /// The count key of `entity` as stored (`nil`: absent).
    static func storedCount(_ store: WALDataStore, _ entity: String) throws -> UInt64? {
        guard let bytes = try store.engine.value(forKey: [0x43] + Array(entity.utf8) + [0]) else { return nil }
        #expect(bytes.count == 8)
        return bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Counts without predicate, the count keys and a scan of the records agree, and the
    /// counts read no record.
    static func expectCountsAgree(_ store: WALDataStore, _ context: String) throws {
        for entity in entities {
            let scanned = try store.all(entity).count
            let read = store.recordsRead
            let counted = try count(store, entity)
            #expect(store.recordsRead == read, "\(context): a count without predicate reads no record")
            #expect(counted == scanned, "\(context): \(entity) counted \(counted), stored \(scanned)")
            #expect(try (storedCount(store, entity) ?? 0) == UInt64(scanned), "\(context): the count key of \(entity)")
        }
    }

    static func postWithAttachments(_ title: String, _ n: Int, tags: [PersistentIdentifier] = []) -> [DefaultSnapshot] {
        var post = BlogModel.post(title: title, date: epoch, tags: tags)
        let attachments = (0..<n).map { i in BlogModel.attachment(imageData: Data([UInt8(i)]), post: post.persistentIdentifier) }
        post["attachments"] = .toMany(attachments.map(\.persistentIdentifier))
        return [post] + attachments
    }

    @Test func countsStayExactThroughInsertsUpsertsDeletesCascadesAndReopen() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        var store = try home.open()
        try Self.expectCountsAgree(store, "empty")
        let a = BlogModel.tag(name: "a"), b = BlogModel.tag(name: "b")
        _ = try store.save(
            DataStoreSaveChangesRequest(
                inserted: [a, b] + Self.postWithAttachments("one", 2) + Self.postWithAttachments("two", 3)))
        try Self.expectCountsAgree(store, "inserts")
        #expect(try Self.count(store, "Attachment") == 5)
        // An insert matching a stored tag's unique name is an update: no new tag.
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "a", colour: "red"), BlogModel.tag(name: "c")]))
        try Self.expectCountsAgree(store, "upsert")
        #expect(try Self.count(store, "Tag") == 3)
        // Deleting a post cascades to its attachments.
        let one = try #require(try store.all("Post").first { $0["title"] == .string("one") })
        _ = try store.save(DataStoreSaveChangesRequest(deleted: [one]))
        try Self.expectCountsAgree(store, "cascade")
        #expect(try Self.count(store, "Attachment") == 3)
        // A batch delete by predicate.
        try store.delete(DataStoreBatchDeleteRequest(entityName: "Tag", predicate: .attribute("name") != "c"))
        try Self.expectCountsAgree(store, "batch delete")
        #expect(try Self.count(store, "Tag") == 1)
        // Inserts and deletes of one entity in one save.
        let two = try #require(try store.all("Post").first)
        _ = try store.save(DataStoreSaveChangesRequest(inserted: Self.postWithAttachments("three", 1), deleted: [two]))
        try Self.expectCountsAgree(store, "insert and delete")
        #expect(try Self.count(store, "Post") == 1 && Self.count(store, "Attachment") == 1)
        try store.close()
        store = try home.open()
        try Self.expectCountsAgree(store, "reopened")
        try store.erase()
        try Self.expectCountsAgree(store, "erased")
        _ = try store.save(DataStoreSaveChangesRequest(inserted: Self.postWithAttachments("four", 2)))
        try Self.expectCountsAgree(store, "after the erase")
        try store.close()
    }

    @Test func aCountWithoutPredicateIsTheSumOfTheCountKeysWindowed() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        var store = try home.open()
        _ = try store.save(DataStoreSaveChangesRequest(inserted: Self.postWithAttachments("one", 2)))
        // Stored counts that disagree with the records show which one the count reads.
        try store.engine.write { $0.put([0x43] + Array("Attachment".utf8) + [0], [0, 0, 0, 0, 0, 0, 0x03, 0xE8]) }
        try store.close()
        store = try home.open()
        #expect(try Self.count(store, "Attachment") == 1000)
        #expect(try Self.count(store, "Attachment", offset: 10, limit: 5) == 5)
        #expect(try Self.count(store, "Attachment", offset: 998, limit: 5) == 2)
        #expect(try Self.count(store, "Attachment", offset: 2000) == 0)
        #expect(try Self.count(store, "Post") == 1)
        #expect(
            try store.fetchCount(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Attachment", predicate: .constant(true)))) == 2,
            "a count with a predicate reads the records")
        try store.close()
    }

    @Test func aStoreWithoutCountKeysIsCountedOnceAtOpenAndTheKeysWritten() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        var store = try home.open()
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "t")] + Self.postWithAttachments("one", 3)))
        // As a store written before counts were kept.
        try store.engine.write { batch in
            for entity in Self.entities { batch.delete([0x43] + Array(entity.utf8) + [0]) }
        }
        #expect(try Self.storedCount(store, "Post") == nil)
        try store.close()
        store = try home.open()
        #expect(try Self.storedCount(store, "Post") == 1 && Self.storedCount(store, "Attachment") == 3 && Self.storedCount(store, "Tag") == 1)
        try Self.expectCountsAgree(store, "counted at open")
        try store.close()
    }

    @Test func savesSharingACommitCountEveryInsert() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let tag = BlogModel.tag(name: "t")
        let tagID = try #require(try store.save(DataStoreSaveChangesRequest(inserted: [tag])).remappedIdentifiers[tag.persistentIdentifier])
        let before = store.engine.statistics.lastSequence
        let outcomes = try WALSharedCommitTests.saveQueued(store, WALSharedCommitTests.posts(5, tag: tagID), queued: 5)
        for outcome in outcomes { _ = try outcome.get() }
        #expect(store.engine.statistics.lastSequence == before + 1, "five saves, one commit")
        try Self.expectCountsAgree(store, "shared commit")
        #expect(try Self.count(store, "Post") == 5)
        try store.close()
    }

    /// Power loss at every I/O operation of a save that inserts and deletes (with a cascade):
    /// after recovery, the count keys and the records agree.
    @Test func countsAndRecordsAgreeAfterPowerLossAtEveryOperationOfASave() throws {
        var options = LogStore.Options()
        options.blobThreshold = 1000
        let configuration = WALStoreConfiguration(name: "Blog", schema: BlogModel.schema, path: "/count-store", options: options)
        let base = FaultInjectingFileSystem()
        do {
            let store = try WALDataStore(configuration, fileSystem: base)
            _ = try store.save(DataStoreSaveChangesRequest(inserted: Self.postWithAttachments("old", 2) + [BlogModel.tag(name: "t")]))
            try store.close()
        }
        var crashAt = 1
        var completed = false
        var sawOld = false, sawNew = false
        while !completed && crashAt < 300 {
            let fs = base.clone()
            let store = try WALDataStore(configuration, fileSystem: fs)
            let old = try #require(try store.all("Post").first)
            let request = DataStoreSaveChangesRequest(inserted: Self.postWithAttachments("new", 3), deleted: [old])
            fs.crash(atOperation: crashAt)
            let before = fs.operationCount
            let acknowledged = (try? store.save(request)) != nil
            completed = acknowledged && fs.operationCount - before < crashAt
            fs.powerLoss()
            try? store.close()
            let reopened = try WALDataStore(configuration, fileSystem: fs)
            try Self.expectCountsAgree(reopened, "power loss at operation \(crashAt)")
            let attachments = try Self.count(reopened, "Attachment")
            #expect(attachments == 2 || attachments == 3)
            if acknowledged { #expect(attachments == 3, "power loss at operation \(crashAt): an acknowledged save is lost") }
            if attachments == 2 { sawOld = true } else { sawNew = true }
            try reopened.close()
            crashAt += 1
        }
        #expect(completed && sawOld && sawNew, "the sweep reached the end of the save (\(crashAt) operations)")
    }
}
