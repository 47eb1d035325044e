import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// A fetch that returns most of an entity's objects fills their to-many arrays from one scan per
/// relationship; one that returns few reads each object's own keys. Both must give the same
/// arrays, for every relationship shape: join records seen from either side, join records of a
/// relationship that is its own inverse or has none, and back references of a one-to-many.
@Suite struct WALBulkReadTests {
    /// Every object of `entity`, fetched whole (the bulk path), against each fetched alone.
    static func expectBulkMatchesSingleReads(_ store: WALDataStore, _ entity: String, count: Int) throws {
        let all = try store.all(entity)
        #expect(all.count == count)
        for snapshot in all {
            #expect(try store.snapshot(snapshot.persistentIdentifier) == snapshot, "\(snapshot.persistentIdentifier)")
        }
    }

    @Test func theBlogModelsArraysAreTheSameReadInBulkOrOneByOne() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let tags = (0..<70).map { BlogModel.tag(name: "t\($0)") }
        let savedTags = try store.save(DataStoreSaveChangesRequest(inserted: tags))
        let tagIDs = tags.map { savedTags.remappedIdentifiers[$0.persistentIdentifier]! }
        var posts: [DefaultSnapshot] = []
        var attachments: [DefaultSnapshot] = []
        for i in 0..<90 {
            // Post i has i % 4 tags and i % 3 attachments: empty arrays included.
            var post = BlogModel.post(
                title: "p\(i)", date: Date(timeIntervalSinceReferenceDate: Double(i)),
                tags: (0..<(i % 4)).map { tagIDs[(i * 7 + $0 * 13) % tagIDs.count] })
            for _ in 0..<(i % 3) {
                let attachment = BlogModel.attachment(imageData: Data([UInt8(i)]), post: post.persistentIdentifier)
                attachments.append(attachment)
            }
            post["attachments"] = .toMany(attachments.suffix(i % 3).map(\.persistentIdentifier))
            posts.append(post)
        }
        _ = try store.save(DataStoreSaveChangesRequest(inserted: posts + attachments))
        try Self.expectBulkMatchesSingleReads(store, "Post", count: 90)
        try Self.expectBulkMatchesSingleReads(store, "Tag", count: 70)
        let linked = try store.all("Tag").filter { $0["posts"] != .toMany([]) }
        #expect(!linked.isEmpty, "some tags list posts: the mirror side is read")
        let withAttachments = try store.all("Post").filter { $0["attachments"] != .toMany([]) }
        #expect(withAttachments.count == 60, "posts with attachments list them: back references are read")
    }

    @Test func selfInverseAndInverselessArraysAreTheSameReadInBulkOrOneByOne() throws {
        let home = WALHome(WALRelationshipShapeTests.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        let pages = (0..<10).map { WALRelationshipShapeTests.make("Page", ["url": .string("u\($0)")]) }
        let savedPages = try store.save(DataStoreSaveChangesRequest(inserted: pages))
        let pageIDs = pages.map { savedPages.remappedIdentifiers[$0.persistentIdentifier]! }
        let people = (0..<80).map { i in
            WALRelationshipShapeTests.person("n\(i)", ["bookmarks": .toMany((0..<(i % 3)).map { pageIDs[(i + $0) % 10] })])
        }
        let savedPeople = try store.save(DataStoreSaveChangesRequest(inserted: people))
        let ids = people.map { savedPeople.remappedIdentifiers[$0.persistentIdentifier]! }
        // Friends: each person befriends the next two; the relationship is its own inverse.
        var updated: [DefaultSnapshot] = []
        for (i, id) in ids.enumerated() where i % 2 == 0 {
            var person = try #require(try store.snapshot(id))
            person["friends"] = .toMany([ids[(i + 1) % ids.count], ids[(i + 2) % ids.count]])
            updated.append(person)
        }
        _ = try store.save(DataStoreSaveChangesRequest(updated: updated))
        try Self.expectBulkMatchesSingleReads(store, "Person", count: 80)
        let odd = try #require(try store.snapshot(ids[1]))
        #expect(odd["friends"]?.referencedIdentifiers.count == 1, "the link another person made is seen from this side")
    }
}
