import Engine
import Foundation
@testable import Snapshot
import SnapshotTestSupport
import Testing

/// The save planner holds each object's state in slots of its entity (``ObjectState``), never
/// a snapshot by name: inserts, updates over stored records and deletes keep every rule, and
/// only the outputs for the caller are snapshots by name.
@Suite struct SavePlannerStateTests {
    typealias F = MigrationFixture

    /// The blog model with a non-optional `rank` (default 7) after Tag's last field: a
    /// header-only migration, its stored tags' records one field short.
    static func ranked() throws -> Schema {
        try F.blog { $0[named: "Tag"].attributes.append(.init("rank", .int, defaultValue: .int(7))) }
    }

    @Test func planningInsertsUpdatesAndDeletesBuildsNoSnapshotByNameUntilTheCallerAsks() throws {
        let (_, store, post, tags) = try EntityEncoderTests.store()
        // Inserts stating a to-many of stored and new tags, a null for an optional attribute.
        let newTag = BlogModel.tag(name: "new")
        let posts = (0..<3).map { i in
            BlogModel.post(title: "p\(i)", date: Date(timeIntervalSinceReferenceDate: Double(i)), tags: [tags[1], newTag.persistentIdentifier])
        }
        let updated = DefaultSnapshot(persistentIdentifier: post, values: ["title": .string("Changed")])
        let deleted = try #require(try store.snapshot(tags[0]))
        let planner = SavePlanner(mapper: store.mapper)
        let batch = try planner.plan(DataStoreSaveChangesRequest(inserted: posts + [newTag], updated: [updated], deleted: [deleted])).batch
        #expect(try #require(batch.entries).count > 0)
        #expect(planner.snapshotsBuilt == 0, "planning and encoding hold every object in slots")
        let reregistered = try planner.snapshotsToReregister()
        #expect(!reregistered.isEmpty)
        #expect(planner.snapshotsBuilt == reregistered.count, "the outputs are the only snapshots by name")
    }

    @Test func anUpdateOfOneAttributeKeepsEveryOtherStoredValue() throws {
        let (_, store, post, tags) = try EntityEncoderTests.store()
        let before = try #require(try store.snapshot(post))
        _ = try store.save(DataStoreSaveChangesRequest(updated: [DefaultSnapshot(persistentIdentifier: post, values: ["content": .null])]))
        let after = try #require(try store.snapshot(post))
        #expect(after["content"] == .null)
        #expect(after["title"] == before["title"] && after["date"] == before["date"])
        #expect(after["tags"] == .toMany([tags[0]]))
    }

    @Test func anUpdateKeepsTheToOneAndTheDefaultOfAFieldTheRecordLacks() throws {
        let home = MigrationHome()
        defer { home.temporary.remove() }
        try home.filled()
        // Tag's fields are name, colour: "rank" comes last, its records keep two fields.
        let added = try Self.ranked()
        let store = try home.open(added)
        let tag = try #require(try store.all("Tag").first)
        _ = try store.save(
            DataStoreSaveChangesRequest(updated: [
                DefaultSnapshot(persistentIdentifier: tag.persistentIdentifier, values: ["colour": .string("teal")])
            ]))
        let after = try #require(try store.snapshot(tag.persistentIdentifier))
        #expect(after["colour"] == .string("teal"))
        #expect(after["name"] == tag["name"] && after["posts"] == tag["posts"])
        #expect(after["rank"] == .int(7), "the field past the record's last reads, and is saved as, its default")
        let attachment = try #require(try store.all("Attachment").first)
        _ = try store.save(
            DataStoreSaveChangesRequest(updated: [
                DefaultSnapshot(persistentIdentifier: attachment.persistentIdentifier, values: ["imageData": .data(Data([9]))])
            ]))
        #expect(try store.snapshot(attachment.persistentIdentifier)?["post"] == attachment["post"], "the stored to-one is kept")
        try store.close()
    }

    @Test func insertsStatingToManysNewObjectsAndNullsWriteTheRecordsAndLinksOfTheirValues() throws {
        let home = MigrationHome()
        defer { home.temporary.remove() }
        let schema = try Self.ranked()
        var store = try home.open(schema)
        var tag = BlogModel.tag(name: "t")
        tag["rank"] = .null
        let date = Date(timeIntervalSinceReferenceDate: 5)
        let post = BlogModel.post(title: "p", date: date, tags: [tag.persistentIdentifier])
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [post, tag]))
        try store.close()
        store = try home.open(schema)
        defer { try? store.close() }
        let records = Set(try store.liveEntries(prefix: [0x52]).map(\.value))
        #expect(
            records == [
                RecordWriter.record(entityName: "Tag", values: [.value(.string("t")), .value(.null), .value(.int(7))]),
                RecordWriter.record(entityName: "Post", values: [.value(.string("p")), .value(.null), .value(.date(date))]),
            ], "a non-optional null is stored as its default; to-manys hold no field")
        let ids = try [post, tag].map { try #require(result.remappedIdentifiers[$0.persistentIdentifier]) }
        #expect(try store.snapshot(ids[0])?["tags"] == .toMany([ids[1]]), "the link to the new tag is stored")
        #expect(try [0x4D, 0x4E].map { try store.liveEntries(prefix: [$0]).count } == [1, 1], "one link and its mirror")
    }

    @Test func anUpdateStatingTheStoredValuesWritesNoRecord() throws {
        let (_, store, post, _) = try EntityEncoderTests.store()
        let planned = try EntityEncoderTests.plannedUpdate(store, post, ["title": "Hello"])
        #expect(planned.unchanged == 1)
        #expect(planned.entries.isEmpty)
    }
}
