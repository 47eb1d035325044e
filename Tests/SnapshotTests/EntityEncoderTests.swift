import Engine
import Foundation
@testable import Snapshot
import SnapshotTestSupport
import Testing

/// The per-entity encoder writes the same record bytes as ``RecordWriter``, and a save's
/// updates compare record bytes: an unchanged record derives and writes nothing again, a
/// changed field rewrites only the entries derived from it.
@Suite struct EntityEncoderTests {
    /// A deterministic generator (SplitMix64), so a failure repeats.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func theEncoderWritesTheRecordWriterBytesForRandomSnapshotsOfEveryAttributeType() throws {
        let schema = try RecordFormatTests.schema()
        let layout = RecordLayout(schema: schema)
        let encoder = layout.encoder(of: "Thing")
        let fields = layout.recordFields(of: "Thing")
        let choices = try RecordFormatTests.valuesByField()
        try #require(choices.count == fields.count)
        var random = Generator(state: 42)
        for _ in 0..<200 {
            let id = try PersistentIdentifier.identifier(for: "S", entityName: "Thing", primaryKey: UUID())
            let pk = try #require(RecordMapper.primaryKey(of: id))
            var values: [String: PropertyValue] = ["scratch": .string("not stored"), "children": .toMany([])]
            var chosen: [PropertyValue] = []
            for (field, options) in zip(fields.fields, choices) {
                // Now and then a property the snapshot does not hold: written as null.
                if Int.random(in: 0..<8, using: &random) == 0 {
                    chosen.append(.null)
                    continue
                }
                let value = try #require(options.randomElement(using: &random))
                values[field.name] = value
                chosen.append(value)
            }
            let snapshot = DefaultSnapshot(persistentIdentifier: id, values: values)
            let encoded = encoder.encode(encoder.state(of: snapshot), primaryKey: pk, assetThreshold: .max, layout: layout)
            #expect(encoded.record == RecordFormatTests.record(chosen))
            #expect(!encoded.holdsAsset)
        }
    }

    /// A store holding one post with two tags; the post's identifier and the tags'.
    static func store() throws -> (WALHome, WALDataStore, post: PersistentIdentifier, tags: [PersistentIdentifier]) {
        let home = WALHome()
        let store = try home.open()
        let a = BlogModel.tag(name: "a"), b = BlogModel.tag(name: "b")
        let post = BlogModel.post(title: "Hello", content: "first", date: Date(timeIntervalSinceReferenceDate: 10), tags: [a.persistentIdentifier])
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [a, b, post]))
        let ids = try [post, a, b].map { try #require(result.remappedIdentifiers[$0.persistentIdentifier]) }
        return (home, store, ids[0], [ids[1], ids[2]])
    }

    /// The batch a planner makes of updating `id` with `values` over its stored snapshot, and
    /// how many records it found unchanged.
    static func plannedUpdate(
        _ store: WALDataStore, _ id: PersistentIdentifier, _ values: [String: PropertyValue]
    ) throws -> (entries: [WriteBatch.Entry], unchanged: Int) {
        var snapshot = try #require(try store.snapshot(id))
        for (name, value) in values { snapshot[name] = value }
        let planner = SavePlanner(mapper: store.mapper)
        let batch = try planner.plan(DataStoreSaveChangesRequest(updated: [snapshot])).batch
        return (try #require(batch.entries), planner.unchangedRecords)
    }

    static func tags(_ entries: [WriteBatch.Entry]) -> [String] {
        entries.map { entry in
            switch entry {
            case .put(let key, _): "put \(Character(UnicodeScalar(key[0])))"
            case .putExternal(let key, _): "putExternal \(Character(UnicodeScalar(key[0])))"
            case .delete(let key): "delete \(Character(UnicodeScalar(key[0])))"
            }
        }.sorted()
    }

    @Test func anUpdateThatChangesNothingWritesNoEntryAndFindsItsRecordUnchanged() throws {
        let (_, store, post, _) = try Self.store()
        let planned = try Self.plannedUpdate(store, post, [:])
        #expect(planned.entries.isEmpty)
        #expect(planned.unchanged == 1, "the record's bytes equal the stored ones: nothing derived again")
        let restated = try Self.plannedUpdate(store, post, ["title": .string("Hello"), "content": .string("first")])
        #expect(restated.entries.isEmpty)
        #expect(restated.unchanged == 1)
    }

    @Test func anUpdateOfOneFieldRewritesOnlyTheEntriesDerivedFromIt() throws {
        let (_, store, post, _) = try Self.store()
        let content = try Self.plannedUpdate(store, post, ["content": .string("second")])
        #expect(Self.tags(content.entries) == ["put R"], "content is in no index: the record alone")
        #expect(content.unchanged == 0)
        let title = try Self.plannedUpdate(store, post, ["title": .string("Bye")])
        #expect(Self.tags(title.entries) == ["delete I", "put I", "put R"], "the (title, date) index entry moves; the date one stays")
    }

    @Test func anUpdateOfLinksAloneWritesOnlyTheLinksItChanges() throws {
        let (_, store, post, tags) = try Self.store()
        let planned = try Self.plannedUpdate(store, post, ["tags": .toMany([tags[1]])])
        #expect(planned.unchanged == 1, "the post's record is unchanged (the tags gain and lose the link without a record)")
        #expect(Self.tags(planned.entries) == ["delete M", "delete N", "put M", "put N"])
        _ = try store.save(DataStoreSaveChangesRequest(updated: [try #require(try store.snapshot(post)).updating("tags", .toMany([tags[1]]))]))
        #expect(try store.snapshot(post)?["tags"] == .toMany([tags[1]]))
    }
}

extension DefaultSnapshot {
    fileprivate func updating(_ name: String, _ value: PropertyValue) -> DefaultSnapshot {
        var copy = self
        copy[name] = value
        return copy
    }
}
