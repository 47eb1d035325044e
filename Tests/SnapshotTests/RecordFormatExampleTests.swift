import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// FORMAT.md §18's Example is produced by a store and checked byte for byte, so the document
/// cannot drift from the code.
@Suite struct RecordFormatExampleTests {
    static func b(_ s: String) -> [UInt8] { Array(s.utf8) }
    static func n(_ s: String) -> [UInt8] { Array(s.utf8) + [0] }

    @Test func theExampleStoreHoldsTheDocumentedBytes() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let tag = BlogModel.tag(name: "news")
        let post = BlogModel.post(title: "Hi", date: Date(timeIntervalSinceReferenceDate: 600_000_000), tags: [tag.persistentIdentifier])
        let attachment = BlogModel.attachment(imageData: Data([7, 7, 7]), post: post.persistentIdentifier)
        let ids = try store.save(DataStoreSaveChangesRequest(inserted: [post, tag, attachment])).remappedIdentifiers
        func pk(_ s: DefaultSnapshot) throws -> [UInt8] {
            guard case .uuid(let u) = try #require(ids[s.persistentIdentifier]).primaryKey else { throw RawRecord.Malformed() }
            return RawRecord.uuidBytes(u)
        }
        let (p, a, t) = (try pk(post), try pk(attachment), try pk(tag))
        let d: [UInt8] = [0x41, 0xC1, 0xE1, 0xA3, 0, 0, 0, 0]
        let dFlipped: [UInt8] = [0xC1, 0xC1, 0xE1, 0xA3, 0, 0, 0, 0]
        let expected: [([UInt8], [UInt8])] = [
            ([0x52] + Self.n("Post") + p, [0x02, 0x08, 0x04] + Self.b("Post") + [0x14, 0x00, 0x09] + Self.b("Hi") + d),
            ([0x52] + Self.n("Attachment") + a, [0x02, 0x0D, 0x0A] + Self.b("Attachment") + [0x0B, 0x39] + p + Self.b("Post")),
            ([0x52] + Self.n("Tag") + t, [0x02, 0x06, 0x03] + Self.b("Tag") + [0x18, 0x00] + Self.b("news")),
            ([0x41] + Self.n("Attachment") + a + Self.b("imageData"), [7, 7, 7]),
            ([0x42] + Self.n("Post") + p + Self.n("Attachment.post") + Self.n("Attachment") + a, []),
            ([0x4D] + Self.n("Post:Tag") + Self.n("tags:posts") + p + Self.n("Tag") + t, []),
            ([0x4E] + Self.n("Post:Tag") + Self.n("tags:posts") + t + Self.n("Post") + p, []),
            ([0x49] + Self.n("Post") + Self.n("date") + [0x30] + dFlipped + p, Self.b("Post")),
            ([0x49] + Self.n("Post") + Self.n("title,date") + [0x40] + Self.n("Hi") + [0x30] + dFlipped + p, Self.b("Post")),
            ([0x55] + Self.n("Tag") + Self.n("name") + [0x40] + Self.n("news"), t + Self.b("Tag")),
        ]
        var stored: [[UInt8]: [UInt8]] = [:]
        for tag in [0x41, 0x42, 0x49, 0x4D, 0x4E, 0x52, 0x55] as [UInt8] {
            for entry in try store.liveEntries(prefix: [tag]) { stored[entry.key] = entry.value }
        }
        #expect(stored.count == expected.count, "no other record-layer key")
        for (key, value) in expected {
            #expect(stored[key] == value, "\(key)")
        }
        #expect(try store.engine.scan(prefix: [0x41]).collect().allSatisfy(\.isBlob), "the external image is a blob file")
        // The same bytes read as CloudKit records.
        let postRecord = try RawRecord.fields(
            try #require(stored[[0x52] + Self.n("Post") + p]), key: [0x52] + Self.n("Post") + p, schema: store.schema)
        #expect(postRecord.map(\.0) == ["CD_entityName", "CD_content", "CD_date", "CD_title"])
        try store.close()
    }

    @Test func aLinkOfARelationshipThatIsItsOwnInverseListsTheSmallerPrimaryKeyFirst() throws {
        let home = WALHome(WALRelationshipShapeTests.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        let a = WALRelationshipShapeTests.person("a"), b = WALRelationshipShapeTests.person("b", ["friends": .toMany([a.persistentIdentifier])])
        let ids = try store.save(DataStoreSaveChangesRequest(inserted: [a, b])).remappedIdentifiers
        let pks = try [a, b].map { s -> [UInt8] in
            guard case .uuid(let u) = try #require(ids[s.persistentIdentifier]).primaryKey else { throw RawRecord.Malformed() }
            return RawRecord.uuidBytes(u)
        }.sorted { $0.lexicographicallyPrecedes($1) }
        let prefix = Self.n("Person:Person") + Self.n("friends:friends")
        #expect(try store.liveEntries(prefix: [0x4D]).map(\.key) == [[0x4D] + prefix + pks[0] + Self.n("Person") + pks[1]])
        #expect(try store.liveEntries(prefix: [0x4E]).map(\.key) == [[0x4E] + prefix + pks[1] + Self.n("Person") + pks[0]])
        try store.close()
    }
}
