import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// The seed model (Post, Attachment, Tag) end to end: one save of a graph under temporary
/// identifiers, fetches, and the raw engine records in CloudKit's record shape.
@Suite struct SeedModelEndToEndTests {
    struct Graph {
        var news: DefaultSnapshot, howTo: DefaultSnapshot
        var posts: [DefaultSnapshot]
        var small: DefaultSnapshot, large: DefaultSnapshot
        var result: DataStoreSaveChangesResult<DefaultSnapshot>
        func permanent(_ s: DefaultSnapshot) -> PersistentIdentifier { result.remappedIdentifiers[s.persistentIdentifier]! }
    }

    static let epoch = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let largeImage = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    static func saveGraph(_ store: WALDataStore) throws -> Graph {
        var news = BlogModel.tag(name: "news", colour: "red")
        var howTo = BlogModel.tag(name: "how-to")
        var posts = (0..<3).map { i in
            BlogModel.post(title: "Post \(i)", content: i == 1 ? nil : "body \(i)", date: epoch.addingTimeInterval(Double(i) * 3600))
        }
        let small = BlogModel.attachment(imageData: Data([1, 2, 3]), post: posts[0].persistentIdentifier)
        let large = BlogModel.attachment(imageData: largeImage, post: posts[0].persistentIdentifier)
        posts[0]["attachments"] = .toMany([small.persistentIdentifier, large.persistentIdentifier])
        posts[0]["tags"] = .toMany([news.persistentIdentifier, howTo.persistentIdentifier])
        posts[2]["tags"] = .toMany([news.persistentIdentifier])
        news["posts"] = .toMany([posts[0].persistentIdentifier, posts[2].persistentIdentifier])
        howTo["posts"] = .toMany([posts[0].persistentIdentifier])
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [news, howTo] + posts + [small, large]))
        return Graph(news: news, howTo: howTo, posts: posts, small: small, large: large, result: result)
    }

    @Test func aGraphSavedUnderTemporaryIdentifiersIsRemappedAndFetchedBack() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let g = try Self.saveGraph(store)
        let temporaries = [g.news, g.howTo, g.small, g.large] + g.posts
        #expect(Set(g.result.remappedIdentifiers.keys) == Set(temporaries.map(\.persistentIdentifier)))
        for (temporary, permanent) in g.result.remappedIdentifiers {
            #expect(permanent.storeIdentifier == store.identifier && permanent.entityName == temporary.entityName && !permanent.isTemporary)
        }
        #expect(g.result.snapshotsToReregister.isEmpty, "a consistent graph with every value given needs nothing re-registered")

        // References among the inserts are rewritten to the permanent identifiers.
        let post0 = try #require(try store.snapshot(g.permanent(g.posts[0])))
        #expect(Set(post0["attachments"]!.referencedIdentifiers) == [g.permanent(g.small), g.permanent(g.large)])
        #expect(Set(post0["tags"]!.referencedIdentifiers) == [g.permanent(g.news), g.permanent(g.howTo)])
        let large = try #require(try store.snapshot(g.permanent(g.large)))
        #expect(large["post"] == .toOne(g.permanent(g.posts[0])) && large["imageData"] == .data(Self.largeImage))
        let news = try #require(try store.snapshot(g.permanent(g.news)))
        #expect(Set(news["posts"]!.referencedIdentifiers) == [g.permanent(g.posts[0]), g.permanent(g.posts[2])])

        // Predicates, sorts, offset, limit, prefetch.
        let descriptor = FetchDescriptor(
            entityName: "Post", predicate: .attribute("title").beginsWith("Post") && .relationship("tags").any(.attribute("name") == "news"),
            sortBy: [FetchSortDescriptor("date", order: .reverse)], fetchLimit: 1, fetchOffset: 1,
            relationshipKeyPathsForPrefetching: ["tags", "attachments"])
        let result = try store.fetch(descriptor)
        #expect(result.fetchedSnapshots.map(\.persistentIdentifier) == [g.permanent(g.posts[0])])
        #expect(Set(result.relatedSnapshots.keys) == [g.permanent(g.news), g.permanent(g.howTo), g.permanent(g.small), g.permanent(g.large)])
        let noContent = try store.fetch(FetchDescriptor(entityName: "Post", predicate: .attribute("content").isNil, propertiesToFetch: ["title"]))
        #expect(noContent.fetchedSnapshots.map { $0.values } == [["title": "Post 1"]])
        let attachments = try store.fetch(FetchDescriptor(entityName: "Attachment", predicate: .attribute("post.title") == "Post 0"))
        #expect(attachments.fetchedSnapshots.count == 2)
    }

    @Test func theRawEngineRecordsHaveCloudKitsRecordShape() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let g = try Self.saveGraph(store)
        let engine = store.engine
        func pk(_ s: DefaultSnapshot) -> UUID {
            guard case .uuid(let u) = g.permanent(s).primaryKey else { return UUID() }
            return u
        }
        func recordName(_ s: DefaultSnapshot) -> String { "\(s.persistentIdentifier.entityName)_\(pk(s).uuidString)" }

        // A post: CD_entityName first, then CD_ fields by name; no to-many fields.
        let postKey = [0x52] + RawRecord.name("Post") + RawRecord.uuidBytes(pk(g.posts[0]))
        let post = try RawRecord.fields(try #require(try engine.value(forKey: postKey)), key: postKey, schema: store.schema)
        #expect(post.map(\.0) == ["CD_entityName", "CD_content", "CD_date", "CD_title"])
        #expect(post[0].1 == .string("Post") && post[1].1 == .string("body 0") && post[3].1 == .string("Post 0"))
        #expect(post[2].1 == .date(Self.epoch.timeIntervalSinceReferenceDate))
        let post1Key = [0x52] + RawRecord.name("Post") + RawRecord.uuidBytes(pk(g.posts[1]))
        let post1 = try RawRecord.fields(try #require(try engine.value(forKey: post1Key)), key: post1Key, schema: store.schema)
        #expect(post1[1] == ("CD_content", .null))

        // An attachment: the to-one as the target's record name, the image as an asset in a blob.
        let attachmentKey = [0x52] + RawRecord.name("Attachment") + RawRecord.uuidBytes(pk(g.large))
        let attachment = try RawRecord.fields(try #require(try engine.value(forKey: attachmentKey)), key: attachmentKey, schema: store.schema)
        #expect(attachment.map(\.0) == ["CD_entityName", "CD_imageData_ckAsset", "CD_post"])
        #expect(attachment[2].1 == .string(recordName(g.posts[0])))
        let assetKey = [0x41] + RawRecord.name("Attachment") + RawRecord.uuidBytes(pk(g.large)) + Array("imageData".utf8)
        #expect(attachment[1].1 == .data(assetKey))
        let assetEntry = try #require(try engine.scan(prefix: assetKey).collect().first { $0.key == assetKey })
        #expect(assetEntry.isBlob, "an externalStorage attribute is a blob file")
        #expect(try assetEntry.value() == Array(Self.largeImage))
        let smallAsset = try #require(
            (try engine.scan(prefix: [0x41] + RawRecord.name("Attachment") + RawRecord.uuidBytes(pk(g.small))).collect()).first)
        #expect(try smallAsset.isBlob && smallAsset.value() == [1, 2, 3], "even a 3-byte externalStorage value is a blob")

        // The back reference of the to-one.
        let back = [0x42] + RawRecord.name("Post") + RawRecord.uuidBytes(pk(g.posts[0])) + RawRecord.name("Attachment.post")
        #expect(
            Set(try engine.scan(prefix: back).collect().map(\.key)) == [
                back + RawRecord.name("Attachment") + RawRecord.uuidBytes(pk(g.small)),
                back + RawRecord.name("Attachment") + RawRecord.uuidBytes(pk(g.large)),
            ])

        // The many-to-many as links standing for CDMR join records, Post:Tag / tags:posts: keys
        // with empty values (side A, the posts, first).
        let links = try engine.scan(prefix: [0x4D]).collect()
        #expect(try links.allSatisfy { try $0.value().isEmpty })
        let joins = try links.map { entry in (entry.key, try RawRecord.joinRecord(key: entry.key, entityA: "Post")) }
        let expectedPairs = [(g.posts[0], g.news), (g.posts[0], g.howTo), (g.posts[2], g.news)].map { "\(recordName($0.0)):\(recordName($0.1))" }
        #expect(Set(joins.map { $0.1.first { $0.0 == "CD_recordNames" }!.1 }) == Set(expectedPairs.map(RawRecord.Field.string)))
        for (key, fields) in joins {
            #expect(fields.map(\.0) == ["CD_entityNames", "CD_recordNames", "CD_relationships"])
            #expect(fields[0].1 == .string("Post:Tag") && fields[2].1 == .string("tags:posts"))
            guard case .string(let names) = fields[1].1 else { continue }
            let parts = names.split(separator: ":").map { $0.split(separator: "_").map(String.init) }
            let (a, b) = (try #require(UUID(uuidString: parts[0][1])), try #require(UUID(uuidString: parts[1][1])))
            #expect(
                key == [0x4D] + RawRecord.name("Post:Tag") + RawRecord.name("tags:posts") + RawRecord.uuidBytes(a) + RawRecord.name(parts[1][0])
                    + RawRecord.uuidBytes(b))
            #expect(
                try engine.value(
                    forKey: [0x4E] + RawRecord.name("Post:Tag") + RawRecord.name("tags:posts") + RawRecord.uuidBytes(b) + RawRecord.name(parts[0][0])
                        + RawRecord.uuidBytes(a)) == [], "its mirror")
        }
        #expect(try engine.scan(prefix: [0x4E]).collect().map(\.key).count == 3, "one mirror key per link")
        // Tags: records of their own; no join data in them.
        let tagKey = [0x52] + RawRecord.name("Tag") + RawRecord.uuidBytes(pk(g.news))
        let tag = try RawRecord.fields(try #require(try engine.value(forKey: tagKey)), key: tagKey, schema: store.schema)
        #expect(tag.map(\.0) == ["CD_entityName", "CD_colour", "CD_name"])
        // The unique tag name and the post indexes.
        #expect(try engine.scan(prefix: [0x55] + RawRecord.name("Tag") + RawRecord.name("name")).collect().map(\.key).count == 2)
        #expect(try engine.scan(prefix: [0x49] + RawRecord.name("Post") + RawRecord.name("date")).collect().map(\.key).count == 3)
        #expect(try engine.scan(prefix: [0x49] + RawRecord.name("Post") + RawRecord.name("title,date")).collect().map(\.key).count == 3)
    }

    @Test func reopeningKeepsEverything() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        var store: WALDataStore? = try home.open()
        _ = try Self.saveGraph(store!)
        let before = try ["Post", "Attachment", "Tag"].map { try store!.all($0) }
        let identifier = store!.identifier
        try store!.close()
        store = nil
        let reopened = try home.open()
        #expect(reopened.identifier == identifier)
        #expect(try ["Post", "Attachment", "Tag"].map { try reopened.all($0) } == before)
        #expect(
            try reopened.fetchCount(
                DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Post", predicate: .attribute("date") > Self.epoch))) == 2)
    }
}
