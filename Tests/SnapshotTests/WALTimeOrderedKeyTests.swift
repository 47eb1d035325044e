import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// The time-ordered primary keys a ``WALDataStore`` gives new objects (FORMAT.md section 18,
/// "Keys"): where they put a save's records, and stores whose objects have random (version 4)
/// keys.
@Suite struct WALTimeOrderedKeyTests {
    typealias F = MigrationFixture

    /// The primary keys of the records of root entity `root`, in key order.
    static func recordKeys(_ store: WALDataStore, root: String) throws -> [UUID] {
        let prefix = [0x52] + Array(root.utf8) + [0]
        return try store.engine.scan(prefix: prefix).collect().map { entry in
            UUID(uuid: entry.key.suffix(16).withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) })
        }
    }

    static func uuid(_ id: PersistentIdentifier) throws -> UUID {
        guard case .uuid(let uuid) = id.primaryKey else { throw Unexpected("\(id) has no UUID key") }
        return uuid
    }

    /// A line of ``MigrationFixture/dump(_:)`` with the names in each `[…]` list sorted again
    /// (after they were renamed).
    static func sortingLists(_ line: String) -> String {
        line.split(separator: "[", omittingEmptySubsequences: false).enumerated().map { i, part in
            guard i > 0, let end = part.firstIndex(of: "]") else { return String(part) }
            return part[..<end].split(separator: ",").sorted().joined(separator: ",") + part[end...]
        }.joined(separator: "[")
    }

    struct Unexpected: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test func objectsSavedInOneBatchLieAdjacentInSaveOrder() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        defer { try? store.close() }
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let before = (0..<30).map { BlogModel.post(title: "before \($0)", date: date) }
        _ = try store.save(DataStoreSaveChangesRequest(inserted: before))

        let batch = (0..<200).map { BlogModel.post(title: "batch \($0)", date: date) }
        let start = UInt64(Date().timeIntervalSince1970 * 1000)
        let result = try store.save(DataStoreSaveChangesRequest(inserted: batch + [BlogModel.tag(name: "news")]))
        let end = UInt64(Date().timeIntervalSince1970 * 1000)
        let saved = try batch.map { try Self.uuid(#require(result.remappedIdentifiers[$0.persistentIdentifier])) }
        _ = try store.save(DataStoreSaveChangesRequest(inserted: (0..<30).map { BlogModel.post(title: "after \($0)", date: date) }))

        #expect(saved.allSatisfy { $0.version == 7 && $0.variant == 0b10 })
        #expect(saved.allSatisfy { (start...end) ~= $0.unixMilliseconds }, "stamped with the time of the save")
        let keys = try Self.recordKeys(store, root: "Post")
        #expect(keys.count == 260)
        let positions = saved.compactMap { keys.firstIndex(of: $0) }
        #expect(
            positions == Array(30..<230),
            "the batch is one run of keys, in the order it was saved, after the posts saved before it and before those saved after it")
    }

    /// A store written with random (version 4) primary keys — made here by importing a CloudKit
    /// export whose record names were given new random UUIDs — reads as it was and takes new
    /// objects, with time-ordered keys, beside and linked to the old ones.
    @Test func aStoreWithVersion4KeysStillReadsAndSaves() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let original = try home.open()
        try F.fill(original)
        let dump = try F.dump(original)
        var renamed: [String: String] = [:]
        for root in ["Post", "Tag", "Attachment"] {
            for key in try Self.recordKeys(original, root: root) { renamed[key.uuidString] = UUID.makeRandom().uuidString }
        }
        #expect(renamed.count == 8)
        let export = home.temporary.path + "/export", copyPath = home.temporary.path + "/copy"
        try CloudKitExport(store: original).write(to: export)
        try original.close()

        func rename(_ text: String) -> String {
            renamed.reduce(text) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
        }
        let files = FileManager.default
        for file in try files.subpathsOfDirectory(atPath: export) {
            let path = export + "/" + file
            if file.hasSuffix(".json") {
                let text = try String(contentsOfFile: path, encoding: .utf8)
                try rename(text).write(toFile: path, atomically: true, encoding: .utf8)
            } else if rename(file) != file {
                try files.moveItem(atPath: path, toPath: export + "/" + rename(file))
            }
        }
        try CloudKitImport.makeStore(from: export, at: copyPath)

        var store = try WALDataStore(WALStoreConfiguration(name: "Blog", schema: BlogModel.schema, path: copyPath))
        let oldKeys = try ["Post", "Tag", "Attachment"].flatMap { try Self.recordKeys(store, root: $0) }
        #expect(oldKeys.count == 8 && oldKeys.allSatisfy { $0.version == 4 }, "the copy's keys are version 4")
        #expect(
            try F.dump(store).map(Self.sortingLists).sorted() == dump.map { Self.sortingLists(rename($0)) }.sorted(),
            "every object as it was, under its new key")

        // Saves: a new post tagged with an old tag, an old post changed, an old attachment deleted.
        let posts = try store.all("Post"), tags = try store.all("Tag"), attachments = try store.all("Attachment")
        let news = try #require(tags.first { $0["name"] == .string("news") })
        let alpha = try #require(posts.first { $0["title"] == .string("alpha") })
        let other = try #require(attachments.first { $0["imageData"] == .data(Data([4])) })
        let fresh = BlogModel.post(title: "delta", date: Date(timeIntervalSince1970: 0), tags: [news.persistentIdentifier])
        var changed = alpha
        changed["title"] = .string("alpha, revised")
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [fresh], updated: [changed], deleted: [other]))
        let delta = try #require(result.remappedIdentifiers[fresh.persistentIdentifier])
        let deltaKey = try Self.uuid(delta)
        #expect(deltaKey.version == 7)
        try store.close()

        store = try WALDataStore(WALStoreConfiguration(name: "Blog", schema: BlogModel.schema, path: copyPath))
        defer { try? store.close() }
        let keys = try Self.recordKeys(store, root: "Post")
        #expect(keys.count == 4 && keys.filter { $0.version == 4 }.count == 3 && keys.contains(deltaKey))
        #expect(try store.snapshot(delta)?["tags"]?.referencedIdentifiers == [news.persistentIdentifier])
        #expect(try store.snapshot(news.persistentIdentifier)?["posts"]?.referencedIdentifiers.contains(delta) == true)
        #expect(try store.snapshot(alpha.persistentIdentifier)?["title"] == .string("alpha, revised"))
        #expect(try store.snapshot(other.persistentIdentifier) == nil)
        #expect(try store.all("Attachment").count == 2)
    }
}
