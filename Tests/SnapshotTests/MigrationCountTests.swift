import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// A rewrite of the records — the upgrade from records format 1, and every migration that
/// rewrites — writes the per-entity count keys of the generation it makes, so the open that
/// follows reads them and counts no record.
@Suite struct MigrationCountTests {
    typealias F = MigrationFixture

    /// The live generation's count keys, by entity name.
    static func countKeys(_ store: WALDataStore) throws -> [String: UInt64] {
        var counts: [String: UInt64] = [:]
        for (key, value) in try store.liveEntries(prefix: [0x43]) {
            #expect(key.count > 2 && key.last == 0 && value.count == 8)
            counts[String(decoding: key.dropFirst().dropLast(), as: UTF8.self)] = value.reduce(0) { $0 << 8 | UInt64($1) }
        }
        return counts
    }

    /// The open counted no record, and the count keys, the counts and the records agree.
    static func expectCountsWritten(_ store: WALDataStore, _ expected: [String: UInt64], _ context: String) throws {
        #expect(store.countingScans == 0, "\(context): the open counted the records")
        #expect(try countKeys(store) == expected, "\(context): the count keys")
        for entity in store.schema.entities where !entity.isAbstract {
            let counted = try store.fetchCount(
                DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: entity.name, includesSubentities: false)))
            #expect(UInt64(counted) == expected[entity.name] ?? 0, "\(context): the count of \(entity.name)")
            #expect(try store.all(entity.name).count == counted, "\(context): the records of \(entity.name)")
        }
    }

    @Test func theUpgradeFromRecordsFormat1WritesTheCountKeys() throws {
        let home = MigrationHome()
        defer { home.temporary.remove() }
        var store = try home.open(BlogModel.schema)
        try F.fill(store)
        try store.rewriteInRecordsFormat1()
        try store.close()
        store = try home.open(BlogModel.schema)
        try Self.expectCountsWritten(store, ["Post": 3, "Tag": 2, "Attachment": 3], "upgraded")
        try store.close()
    }

    @Test func aStoreWithoutCountKeysStillCountsItsRecordsAtOpen() throws {
        // The hook the other tests read does see a counting scan.
        let home = MigrationHome()
        defer { home.temporary.remove() }
        var store = try home.open(BlogModel.schema)
        try F.fill(store)
        try store.engine.write { batch in
            for entity in ["Post", "Tag", "Attachment"] { batch.delete([0x43] + Array(entity.utf8) + [0]) }
        }
        try store.close()
        store = try home.open(BlogModel.schema)
        #expect(store.countingScans == 1)
        #expect(try Self.countKeys(store) == ["Post": 3, "Tag": 2, "Attachment": 3])
        try store.close()
    }

    @Test func aRenamedEntityIsCountedUnderItsNewName() throws {
        let home = MigrationHome()
        defer { home.temporary.remove() }
        try home.filled()
        let schema = try F.blog {
            $0[named: "Post"].name = "Article"
            $0[named: "Article"].originalName = "Post"
            $0[named: "Attachment"].relationships[0].destination = "Article"
            $0[named: "Tag"].relationships[0].destination = "Article"
        }
        let store = try home.open(schema)
        try Self.expectCountsWritten(store, ["Article": 3, "Tag": 2, "Attachment": 3], "renamed")
        try store.close()
    }

    @Test func aRemovedEntityLeavesNoCountAndAnAddedOneCountsNothing() throws {
        let home = MigrationHome()
        defer { home.temporary.remove() }
        try home.filled()
        var store = try home.open(try BlogWithoutAttachments.schema(), plan: DropAttachmentsPlan.self)
        try Self.expectCountsWritten(store, ["Post": 3, "Tag": 2], "removed")
        try store.close()

        let withComments = try Schema(
            try BlogWithoutAttachments.schema().entities.map { entity in
                var entity = entity
                if entity.name == "Post" {
                    entity.relationships.append(.init("comments", destination: "Comment", .toMany, inverse: "post", deleteRule: .cascade))
                    // A renamed attribute makes the step rewrite the records.
                    if let i = entity.attributes.firstIndex(where: { $0.name == "content" }) {
                        entity.attributes[i].name = "body"
                        entity.attributes[i].originalName = "content"
                    }
                }
                return entity
            } + [.init("Comment", attributes: [.init("text", .string)], relationships: [.init("post", destination: "Post", inverse: "comments")])])
        store = try home.open(withComments)
        try Self.expectCountsWritten(store, ["Post": 3, "Tag": 2], "added")
        try store.close()
    }
}
