import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// History recorded before a migration stays as it was recorded (with the entity names of its
/// time), and saves after it continue the token sequence.
@Suite struct MigrationHistoryTests {
    typealias F = MigrationFixture

    func open(_ home: MigrationHome, _ schema: Schema) throws -> WALDataStore {
        var configuration = F.configuration(schema, path: home.path)
        configuration.history = .enabled()
        return try WALDataStore(configuration)
    }

    /// Each transaction as its token and changes.
    func summary(_ store: WALDataStore) throws -> [String] {
        try store.allHistory().map { t in "\(t.token.tokenValue ?? 0): \(t.summaries.map(\.description).sorted())" }
    }

    @Test func historyOutlivesALightweightMigrationAndARenameAndTokensContinue() throws {
        let home = MigrationHome()
        let before: [String]
        let lastToken: UInt64
        do {
            let store = try open(home, BlogModel.schema)
            try F.fill(store)
            var post = try #require(try store.all("Post").first)
            post["title"] = .string("renamed")
            _ = try store.save(DataStoreSaveChangesRequest(updated: [post]))
            before = try summary(store)
            lastToken = try #require(try store.lastToken()?.tokenValue)
            try store.close()
        }
        #expect(before.count == 2 && before[0].contains("insert Post") && before[1].contains("update Post"))

        // A lightweight migration that rewrites every record (an index added).
        let indexed = try F.blog { $0[named: "Post"].indexes.append(.init(["title"])) }
        do {
            let store = try open(home, indexed)
            #expect(try F.keyKinds(store)[0x01] != nil, "the records were rewritten into a new generation")
            #expect(try summary(store) == before)
            try store.close()
        }

        // A rename: the history keeps the names it was recorded with.
        let renamed = try F.blog {
            $0[named: "Post"].indexes.append(.init(["title"]))
            $0[named: "Post"].name = "Article"
            $0[named: "Article"].originalName = "Post"
            $0[named: "Attachment"].relationships[0].destination = "Article"
            $0[named: "Tag"].relationships[0].destination = "Article"
        }
        let store = try open(home, renamed)
        #expect(try summary(store) == before)
        _ = try store.save(
            DataStoreSaveChangesRequest(inserted: [
                DefaultSnapshot(
                    persistentIdentifier: .temporary(entityName: "Article"),
                    values: ["title": .string("after"), "content": .null, "date": .date(F.epoch), "attachments": .toMany([]), "tags": .toMany([])])
            ]))
        let history = try store.allHistory()
        #expect(history.count == 3)
        #expect((history.last?.token.tokenValue ?? 0) > lastToken, "the new save continues the token sequence")
        #expect(history.last?.summaries.map(\.description) == ["insert Article"])
        try store.close()
    }
}
