import CoreDataSQLiteStore
import Foundation
import Snapshot
import SnapshotTestSupport
import SQLiteSupport
import Testing

/// What the store leaves in its database and support directory, read back with plain SQL.
@Suite struct CoreDataLayoutTests {
    func names(_ database: SQLiteDatabase, _ type: String) throws -> [String] {
        let statement = try database.prepare("SELECT name FROM sqlite_master WHERE type = '\(type)' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        var result: [String] = []
        while try statement.step() { result.append(statement.text(0) ?? "") }
        return result
    }

    @Test func theTablesAndIndexesAreCoreDatas() throws {
        let home = StoreHome()
        defer { home.remove() }
        try home.open().close()
        let database = try SQLiteDatabase(path: home.directory + "/Blog.sqlite", create: false)
        defer { database.close() }
        #expect(try names(database, "table") == ["ZATTACHMENT", "ZPOST", "ZTAG", "Z_2TAGS", "Z_METADATA", "Z_MODELCACHE", "Z_PRIMARYKEY"])
        #expect(try names(database, "index") == [
            "ZATTACHMENT_ZPOST_INDEX", "Z_2TAGS_Z_3TAGS_INDEX", "Z_Post_date", "Z_Post_title_date", "Z_Tag_UNIQUE_name",
        ])
        #expect(try database.text("SELECT group_concat(Z_ENT || ':' || Z_NAME, ',') FROM Z_PRIMARYKEY") == "1:Attachment,2:Post,3:Tag")
        #expect(try database.text("PRAGMA journal_mode") == "wal")
        #expect(try database.text("PRAGMA auto_vacuum") == "2")
    }

    @Test func identifiersAreZPKsAndZMaxIsBumpedOncePerSave() throws {
        let home = StoreHome()
        defer { home.remove() }
        let store = try home.open()
        let posts = (0..<3).map { BlogModel.post(title: "p\($0)", date: Date(timeIntervalSinceReferenceDate: Double($0))) }
        let result = try store.save(DataStoreSaveChangesRequest(inserted: posts))
        let keys = posts.compactMap { result.remappedIdentifiers[$0.persistentIdentifier]?.primaryKey }
        #expect(keys == [.integer(1), .integer(2), .integer(3)])
        let id = try #require(result.remappedIdentifiers[posts[0].persistentIdentifier])
        #expect(store.uri(for: id) == "x-coredata://\(store.identifier)/Post/p1")
        store.close()
        let database = try SQLiteDatabase(path: home.directory + "/Blog.sqlite", create: false)
        defer { database.close() }
        #expect(try database.text("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Post'") == "3")
        #expect(try database.text("SELECT Z_UUID FROM Z_METADATA") == id.storeIdentifier)
        #expect(try database.text("SELECT group_concat(Z_OPT) FROM ZPOST") == "1,1,1")
    }

    @Test func largeExternalDataGoesToItsOwnFileAndLeavesWithItsObject() throws {
        let home = StoreHome()
        defer { home.remove() }
        let store = try home.open(threshold: 1_000)
        var post = BlogModel.post(title: "with picture", date: Date(timeIntervalSinceReferenceDate: 0))
        let big = Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0) })
        let attachment = BlogModel.attachment(imageData: big, post: post.persistentIdentifier)
        let small = BlogModel.attachment(imageData: Data([1, 2, 3]), post: post.persistentIdentifier)
        post["attachments"] = .toMany([attachment.persistentIdentifier, small.persistentIdentifier])
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [post, attachment, small]))
        let external = home.directory + "/.Blog_SUPPORT/_EXTERNAL_DATA"
        #expect(try FileManager.default.contentsOfDirectory(atPath: external).count == 1)
        let fetched = try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Attachment")))
        #expect(Set(fetched.fetchedSnapshots.compactMap { $0["imageData"] }) == [.data(big), .data(Data([1, 2, 3]))])
        let saved = try #require(result.remappedIdentifiers[post.persistentIdentifier])
        _ = try store.save(DataStoreSaveChangesRequest(deleted: [DefaultSnapshot(persistentIdentifier: saved)]))
        #expect(try store.fetchCount(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Attachment"))) == 0, "the cascade deletes both attachments")
        #expect(try FileManager.default.contentsOfDirectory(atPath: external).isEmpty, "the external file goes after the commit")
    }

    @Test func anInsertWithAStoredUniqueNameUpdatesThatTag() throws {
        let home = StoreHome()
        defer { home.remove() }
        let store = try home.open()
        let first = BlogModel.tag(name: "news", colour: "red")
        let stored = try #require(try store.save(DataStoreSaveChangesRequest(inserted: [first])).remappedIdentifiers[first.persistentIdentifier])
        let again = BlogModel.tag(name: "news", colour: "blue")
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [again]))
        #expect(result.remappedIdentifiers[again.persistentIdentifier] == stored)
        let tags = try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Tag"))).fetchedSnapshots
        #expect(tags.count == 1 && tags.first?["colour"] == .string("blue"))
    }

    @Test func aDatabaseOfAnotherSchemaIsRefused() throws {
        let home = StoreHome()
        defer { home.remove() }
        try home.open().close()
        let other = try Schema([.init("Note", attributes: [.init("text", .string)])])
        #expect(throws: DataStoreError.self) {
            try CoreDataSQLiteStore(CoreDataSQLiteConfiguration(name: "Blog", schema: other, directory: home.directory))
        }
    }
}
