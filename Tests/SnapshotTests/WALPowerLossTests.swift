import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Power loss at every I/O operation of one save with assets and relationships: after reopening,
/// the save is all there or not at all — records, assets, join records, back references,
/// index and uniqueness entries alike.
@Suite struct WALPowerLossTests {
    static let path = "/snapshot-store"
    static let epoch = Date(timeIntervalSinceReferenceDate: 600_000_000)

    static var configuration: WALStoreConfiguration {
        var options = LogStore.Options()
        options.blobThreshold = 1000
        return WALStoreConfiguration(name: "Blog", schema: BlogModel.schema, path: path, options: options)
    }

    /// What the store holds, without identifiers (each attempt makes new ones), and how many
    /// keys of each kind the engine holds.
    struct Shape: Equatable, CustomStringConvertible {
        var posts: [String]
        var tags: [String]
        var attachments: [String]
        var keyKinds: [UInt8: Int]
        var description: String { "posts \(posts) tags \(tags) attachments \(attachments) keys \(keyKinds)" }
    }

    static func shape(_ store: WALDataStore) throws -> Shape {
        let posts = try store.all("Post"), tags = try store.all("Tag"), attachments = try store.all("Attachment")
        var names: [PersistentIdentifier: String] = [:]
        for p in posts { if case .string(let t)? = p["title"] { names[p.persistentIdentifier] = t } }
        for t in tags { if case .string(let n)? = t["name"] { names[t.persistentIdentifier] = n } }
        func list(_ v: PropertyValue?) -> String {
            (v?.referencedIdentifiers ?? []).map { names[$0] ?? "attachment" }.sorted().joined(separator: ",")
        }
        var kinds: [UInt8: Int] = [:]
        var cursor = try store.engine.scan(prefix: [])
        while let entry = try cursor.next() { kinds[entry.key[0], default: 0] += 1 }
        // The index answers as the records do.
        for p in posts {
            let indexed = try store.fetch(FetchDescriptor(entityName: "Post", predicate: .attribute("date") == p["date"]!)).fetchedSnapshots
            #expect(indexed.contains(p), "the date index lists every post")
        }
        return Shape(
            posts: posts.map { "\(names[$0.persistentIdentifier]!) tags[\(list($0["tags"]))] attachments \(list($0["attachments"]).count)" }.sorted(),
            tags: tags.map { "\(names[$0.persistentIdentifier]!) posts[\(list($0["posts"]))]" }.sorted(),
            attachments: attachments.map { a in
                let size = if case .data(let d)? = a["imageData"] { d.count } else { -1 }
                return "\(size) bytes of \(a["post"]!.referencedIdentifiers.map { names[$0] ?? "?" })"
            }.sorted(),
            keyKinds: kinds)
    }

    /// The save under test: a new post with a large and a small asset, linked to the stored tag
    /// and to a new one, and the stored post renamed (its indexes move).
    static func request(_ store: WALDataStore) throws -> DataStoreSaveChangesRequest<DefaultSnapshot> {
        let tag = try #require(try store.all("Tag").first)
        var old = try #require(try store.all("Post").first)
        old["title"] = "renamed"
        var post = BlogModel.post(title: "new", date: epoch.addingTimeInterval(60))
        let big = BlogModel.attachment(imageData: Data(repeating: 7, count: 5000), post: post.persistentIdentifier)
        let small = BlogModel.attachment(imageData: Data([1, 2]), post: post.persistentIdentifier)
        let newTag = BlogModel.tag(name: "fresh", posts: [post.persistentIdentifier])
        post["tags"] = .toMany([tag.persistentIdentifier, newTag.persistentIdentifier])
        post["attachments"] = .toMany([big.persistentIdentifier, small.persistentIdentifier])
        return DataStoreSaveChangesRequest(inserted: [post, big, small, newTag], updated: [old])
    }

    @Test func powerLossAtEveryOperationOfASaveLeavesAllOrNothing() throws {
        let base = FaultInjectingFileSystem()
        do {
            let store = try WALDataStore(Self.configuration, fileSystem: base)
            let tag = BlogModel.tag(name: "news")
            let post = BlogModel.post(title: "first", date: Self.epoch, tags: [tag.persistentIdentifier])
            var t = tag
            t["posts"] = .toMany([post.persistentIdentifier])
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [post, t]))
            try store.close()
        }
        let old = try Self.shape(try WALDataStore(Self.configuration, fileSystem: base.clone()))
        let newShape: Shape = try {
            let fs = base.clone()
            let store = try WALDataStore(Self.configuration, fileSystem: fs)
            _ = try store.save(try Self.request(store))
            return try Self.shape(store)
        }()
        #expect(old != newShape)

        var crashAt = 1
        var completed = false
        var sawOld = false, sawNew = false
        while !completed && crashAt < 500 {
            let fs = base.clone()
            let store = try WALDataStore(Self.configuration, fileSystem: fs)
            let request = try Self.request(store)
            fs.crash(atOperation: crashAt)
            let before = fs.operationCount
            let acknowledged = (try? store.save(request)) != nil
            completed = acknowledged && fs.operationCount - before < crashAt
            fs.powerLoss()
            try? store.close()
            let reopened = try WALDataStore(Self.configuration, fileSystem: fs)
            let shape = try Self.shape(reopened)
            #expect(shape == old || shape == newShape, "power loss at operation \(crashAt): \(shape)")
            if acknowledged { #expect(shape == newShape, "power loss at operation \(crashAt): an acknowledged save is lost") }
            if shape == old { sawOld = true } else if shape == newShape { sawNew = true }
            crashAt += 1
        }
        #expect(completed && sawOld && sawNew, "the sweep reached the end of the save (\(crashAt) operations)")
    }

    /// `erase` is one commit: power loss at any of its operations leaves the store whole or
    /// empty, never half erased.
    @Test func powerLossAtEveryOperationOfAnEraseLeavesTheStoreWholeOrEmpty() throws {
        let base = FaultInjectingFileSystem()
        do {
            let store = try WALDataStore(Self.configuration, fileSystem: base)
            let tag = BlogModel.tag(name: "news")
            let post = BlogModel.post(title: "first", date: Self.epoch, tags: [tag.persistentIdentifier])
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [post, tag]))
            // Assets (a blob among them), join records, back references and index entries.
            _ = try store.save(try Self.request(store))
            try store.close()
        }
        let whole = try Self.shape(try WALDataStore(Self.configuration, fileSystem: base.clone()))
        #expect(!whole.posts.isEmpty)
        var crashAt = 1
        var completed = false
        var sawWhole = false, sawEmpty = false
        while !completed && crashAt < 500 {
            let fs = base.clone()
            let store = try WALDataStore(Self.configuration, fileSystem: fs)
            fs.crash(atOperation: crashAt)
            let before = fs.operationCount
            let acknowledged = (try? store.erase()) != nil
            completed = acknowledged && fs.operationCount - before < crashAt
            fs.powerLoss()
            try? store.close()
            let shape = try Self.shape(try WALDataStore(Self.configuration, fileSystem: fs))
            let empty = shape.posts.isEmpty && shape.tags.isEmpty && shape.attachments.isEmpty && shape.keyKinds.keys.allSatisfy { $0 == 0 }
            #expect(shape == whole || empty, "power loss at operation \(crashAt): \(shape)")
            if acknowledged { #expect(empty, "power loss at operation \(crashAt): an acknowledged erase is undone") }
            if shape == whole { sawWhole = true } else if empty { sawEmpty = true }
            crashAt += 1
        }
        #expect(completed && sawWhole && sawEmpty, "the sweep reached the end of the erase (\(crashAt) operations)")
    }
}
