import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// The README's Snapshot example, compiled and run: the schema is accepted and the predicate
/// selects what it says on a JSONStore.
@Suite struct ReadmeSnapshotExampleTests {
    @Test func readmeExampleWorks() throws {
        let schema = try Schema([
            .init(
                "Post",
                attributes: [.init("title", .string), .init("date", .date)],
                relationships: [.init("tags", destination: "Tag", .toMany, inverse: "posts")],
                indexes: [["date"]]),
            .init(
                "Tag",
                attributes: [.init("name", .string, options: .unique)],
                relationships: [.init("posts", destination: "Post", .toMany, inverse: "tags")]),
        ])

        let lastWeek = Date(timeIntervalSinceNow: -7 * 86_400)
        let descriptor = FetchDescriptor(
            entityName: "Post",
            predicate: .attribute("title").contains("swift", options: .caseInsensitive)
                && .attribute("date") > lastWeek
                && .relationship("tags").any(.attribute("name") == "news"),
            sortBy: [FetchSortDescriptor("date", order: .reverse)],
            fetchLimit: 20)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("snapshot-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try JSONStore(JSONStoreConfiguration(name: "Blog", schema: schema, fileURL: directory.appendingPathComponent("blog.json")))
        let news = PersistentIdentifier.temporary(entityName: "Tag")
        let posts = [
            ("Swift 6", 0.0, true), ("SWIFT on Linux", -86_400.0, true), ("Swift old", -30 * 86_400.0, true), ("Rust", 0, true),
            ("swift untagged", 0, false),
        ]
        .map { title, age, tagged in
            DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: "Post"),
                values: ["title": .string(title), "date": .date(Date(timeIntervalSinceNow: age)), "tags": .toMany(tagged ? [news] : [])])
        }
        let tag = DefaultSnapshot(
            persistentIdentifier: news,
            values: ["name": "news", "posts": .toMany(posts.filter { $0["tags"] != .toMany([]) }.map(\.persistentIdentifier))])
        _ = try store.save(DataStoreSaveChangesRequest(inserted: posts + [tag]))
        let titles = try store.fetch(DataStoreFetchRequest(descriptor: descriptor)).fetchedSnapshots.map { $0["title"] }
        #expect(titles == ["Swift 6", "SWIFT on Linux"])
    }
}

/// The README's WALDataStore example, compiled and run.
@Suite struct ReadmeWALDataStoreExampleTests {
    @Test func readmeExampleWorks() throws {
        let schema = try Schema([
            .init(
                "Post",
                attributes: [.init("title", .string), .init("date", .date)],
                relationships: [.init("tags", destination: "Tag", .toMany, inverse: "posts")],
                indexes: [["date"]]),
            .init(
                "Tag",
                attributes: [.init("name", .string, options: .unique)],
                relationships: [.init("posts", destination: "Post", .toMany, inverse: "tags")]),
        ])
        let descriptor = FetchDescriptor(entityName: "Post", predicate: .attribute("date") > Date(timeIntervalSinceNow: -86_400))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("snapshot-readme-wal-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }

        let store = try WALDataStore(WALStoreConfiguration(name: "Blog", schema: schema, path: directory.path))
        let news = DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Tag"), values: ["name": "news"])
        let post = DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Post"),
            values: ["title": "Swift 6", "date": .date(.now), "tags": .toMany([news.persistentIdentifier])])
        let saved = try store.save(DataStoreSaveChangesRequest(inserted: [post, news]))  // durable when it returns
        let postID = saved.remappedIdentifiers[post.persistentIdentifier]!  // the permanent identifier
        let recent = try store.fetch(DataStoreFetchRequest(descriptor: descriptor))  // through the `date` index

        #expect(recent.fetchedSnapshots.map(\.persistentIdentifier) == [postID])
        #expect(recent.fetchedSnapshots[0]["tags"] == .toMany([saved.remappedIdentifiers[news.persistentIdentifier]!]))
    }
}
