import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Lightweight migrations: each change Core Data infers, one by one and several at once,
/// applied when a store is opened with a new schema and no plan.
@Suite struct MigrationLightweightTests {
    typealias F = MigrationFixture

    /// The titles of the posts, sorted.
    static func titles(_ store: WALDataStore, entity: String = "Post", attribute: String = "title") throws -> [String] {
        try store.all(entity).map { if case .string(let t)? = $0[attribute] { t } else { "?" } }.sorted()
    }

    @Test func anAddedOptionalAttributeReadsNullWithoutRewritingRecords() throws {
        let home = MigrationHome()
        try home.filled()
        let rawBefore = try {
            let s = try home.open(BlogModel.schema); defer { try? s.close() };
            return try s.engine.scan(prefix: [0x52]).collect().map { try $0.value() }
        }()
        let schema = try F.blog { $0[named: "Post"].attributes.append(.init("summary", .string, isOptional: true)) }
        let store = try home.open(schema)
        #expect(try store.all("Post").allSatisfy { $0["summary"] == .null })
        #expect(try store.engine.scan(prefix: [0x52]).collect().map { try $0.value() } == rawBefore, "records are read as they are, not rewritten")
        #expect(try F.keyKinds(store)[0x01] == nil, "no new generation")
        try store.close()
    }

    @Test func anAddedAttributeWithADefaultReadsTheDefaultInSnapshotsAndPredicates() throws {
        let home = MigrationHome()
        try home.filled()
        let schema = try F.blog { $0[named: "Post"].attributes.append(.init("views", .int, defaultValue: .int(7))) }
        do {
            let store = try home.open(schema)
            #expect(try store.all("Post").map { $0["views"] } == [.int(7), .int(7), .int(7)])
            #expect(try store.fetch(FetchDescriptor(entityName: "Post", predicate: .attribute("views") == 7)).fetchedSnapshots.count == 3)
            var post = try #require(try store.all("Post").first)
            post["views"] = .int(1)
            _ = try store.save(DataStoreSaveChangesRequest(updated: [post]))
            try store.close()
        }
        let store = try home.open(schema)
        #expect(try store.all("Post").map { $0["views"] ?? .null }.sorted() == [.int(1), .int(7), .int(7)])
        try store.close()
    }

    @Test func aRemovedAttributeIsGoneFromEveryRecord() throws {
        let home = MigrationHome()
        try home.filled()
        let schema = try F.blog { $0[named: "Post"].attributes.removeAll { $0.name == "content" } }
        let store = try home.open(schema)
        let posts = try store.all("Post")
        #expect(posts.count == 3 && posts.allSatisfy { $0["content"] == nil })
        let records = try store.liveEntries(prefix: [0x52] + Array("Post".utf8) + [0])
        #expect(records.count == 3)
        for entry in records {
            #expect(try RawRecord.fields(entry.value, key: entry.key, schema: store.schema).map(\.0) == ["CD_entityName", "CD_date", "CD_title"])
            #expect(!String(decoding: entry.value, as: UTF8.self).contains("text "), "the old value is not kept")
        }
        try store.close()
    }

    @Test func aRenamedAttributeKeepsItsValuesAndItsIndex() throws {
        let home = MigrationHome()
        try home.filled()
        let schema = try F.blog {
            let i = $0[named: "Post"].attributes.firstIndex { $0.name == "title" }!
            $0[named: "Post"].attributes[i] = .init("headline", .string, originalName: "title")
            $0[named: "Post"].indexes = [.init(["date"]), .init(["headline", "date"])]
        }
        let store = try home.open(schema)
        #expect(try Self.titles(store, attribute: "headline") == ["alpha", "beta", "gamma"])
        let before = store.recordsRead
        let found = try store.fetch(FetchDescriptor(entityName: "Post", predicate: .attribute("headline") == "beta")).fetchedSnapshots
        #expect(found.count == 1 && store.recordsRead - before == 1, "answered through the renamed index")
        try store.close()
    }

    @Test func aRenamedEntityKeepsItsObjectsRelationshipsAndAssets() throws {
        let home = MigrationHome()
        let old = try home.filled()
        let schema = try F.renamedPost()
        let store = try home.open(schema)
        let renamed = old.map { $0.replacingOccurrences(of: "Post_", with: "Article_") }.sorted()
        let dumped = try F.dump(store)
        #expect(dumped == renamed, "\(dumped.filter { !renamed.contains($0) }) vs \(renamed.filter { !dumped.contains($0) })")
        #expect(try store.fetch(FetchDescriptor(entityName: "Article", predicate: .attribute("date") == F.epoch)).fetchedSnapshots.count == 1)
        // The new generation is live and the old one gone: no key of the old layout is left.
        let kinds = try F.keyKinds(store)
        #expect(Set(kinds.keys) == [0x00, 0x01], "\(kinds)")
        try store.close()
        #expect(try F.dump(try home.open(schema)) == renamed, "reopened")
    }

    @Test func aRequiredAttributeMadeOptionalTakesNulls() throws {
        let home = MigrationHome()
        try home.filled()
        let schema = try F.blog { $0[named: "Post"].attributes[0].isOptional = true }
        let store = try home.open(schema)
        var post = try #require(try store.all("Post").first)
        post["title"] = .null
        _ = try store.save(DataStoreSaveChangesRequest(updated: [post]))
        #expect(try store.all("Post").contains { $0["title"] == .null })
        try store.close()
    }

    @Test func anAddedEntityAndRelationshipStartEmptyAndWork() throws {
        let home = MigrationHome()
        let old = try home.filled()
        let schema = try F.blog {
            $0[named: "Post"].relationships.append(.init("comments", destination: "Comment", .toMany, inverse: "post", deleteRule: .cascade))
            $0.append(
                .init("Comment", attributes: [.init("text", .string)], relationships: [.init("post", destination: "Post", inverse: "comments")]))
        }
        let store = try home.open(schema)
        #expect(try store.all("Comment").isEmpty)
        #expect(try store.all("Post").allSatisfy { $0["comments"] == .toMany([]) })
        #expect(try F.dump(store).count == old.count)
        let post = try #require(try store.all("Post").first)
        let comment = DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Comment"), values: ["text": .string("hi"), "post": .toOne(post.persistentIdentifier)])
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [comment]))
        #expect(try store.snapshot(post.persistentIdentifier)?["comments"]?.referencedIdentifiers.count == 1)
        try store.close()
    }

    @Test func indexesAddedAndRemovedAreBuiltAndDropped() throws {
        let home = MigrationHome()
        try home.filled()
        let schema = try F.blog { $0[named: "Post"].indexes = [.init(["content"])] }
        let store = try home.open(schema)
        var indexNames: Set<String> = []
        var cursor = try store.engine.scan(prefix: [])
        while let entry = try cursor.next() {
            guard entry.key.count > 6 && entry.key[5] == 0x49 else { continue }
            let parts = entry.key.dropFirst(6).split(separator: 0, maxSplits: 2)
            indexNames.insert(String(decoding: parts[1], as: UTF8.self))
        }
        #expect(indexNames == ["content"])
        let before = store.recordsRead
        let found = try store.fetch(FetchDescriptor(entityName: "Post", predicate: .attribute("content") == "text 2")).fetchedSnapshots
        #expect(found.count == 1 && store.recordsRead - before == 1)
        try store.close()
    }

    @Test func aUniquenessConstraintAddedOverDistinctValuesUpsertsAfterwards() throws {
        let home = MigrationHome()
        try home.filled()
        let schema = try F.blog { $0[named: "Post"].uniquenessConstraints = [.init(["title"])] }
        let store = try home.open(schema)
        let duplicate = BlogModel.post(title: "beta", content: "again", date: F.epoch)
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [duplicate]))
        #expect(try Self.titles(store) == ["alpha", "beta", "gamma"], "the insert became an update of beta")
        try store.close()
    }

    @Test func aUniquenessConstraintRemovedAllowsEqualValues() throws {
        let home = MigrationHome()
        try home.filled()
        let schema = try F.blog { $0[named: "Tag"].attributes[0].options = [] }
        let store = try home.open(schema)
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "news")]))
        #expect(try store.all("Tag").count == 3)
        try store.close()
    }

    @Test func severalChangesAtOnce() throws {
        let home = MigrationHome()
        let old = try home.filled()
        let schema = try F.blog {
            $0[named: "Post"].name = "Article"
            $0[named: "Article"].originalName = "Post"
            $0[named: "Article"].attributes = [
                .init("headline", .string, originalName: "title"), .init("date", .date), .init("views", .int, defaultValue: .int(0)),
            ]
            $0[named: "Article"].indexes = [.init(["date"])]
            $0[named: "Attachment"].relationships[0].destination = "Article"
            $0[named: "Tag"].relationships[0].destination = "Article"
            $0[named: "Tag"].attributes[1] = .init("color", .string, isOptional: true, originalName: "colour")
        }
        let store = try home.open(schema)
        let expected = old.map { line -> String in
            var l = line.replacingOccurrences(of: "Post_", with: "Article_").replacingOccurrences(of: "colour=", with: "color=")
            if l.hasPrefix("Article_") {
                l = l.replacingOccurrences(of: "title=", with: "headline=")
                l = l.replacing(#/ content=(null|string\("[^"]*"\))/#, with: "") + " views=int(0)"
            }
            return l
        }
        func normalised(_ lines: [String]) -> [String] { lines.map { $0.split(separator: " ").sorted().joined(separator: " ") }.sorted() }
        let dumped = normalised(try F.dump(store)), wanted = normalised(expected)
        #expect(dumped == wanted, "\(dumped.filter { !wanted.contains($0) }) vs \(wanted.filter { !dumped.contains($0) })")
        try store.close()
    }

    @Test func storesRecordTheirSchemaAndItsVersion() throws {
        let home = MigrationHome()
        try home.filled()
        let store = try home.open(BlogModel.schema)
        let header = try #require(try store.engine.value(forKey: [0x00] + Array("store".utf8)))
        #expect(header[0] == 4)
        let json = try JSONEncoder().encode(BlogModel.schema)
        #expect(String(decoding: header, as: UTF8.self).contains("\"Attachment\""), "the schema is stored")
        #expect(json.count > 100)
        try store.close()
    }
}
