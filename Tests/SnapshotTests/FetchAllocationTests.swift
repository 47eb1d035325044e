import CAllocationCounter
import Foundation
import Snapshot
import Testing

/// A fetch matches records on the bytes the engine lends: a record it does not return costs
/// no allocation, so a count or a filtered fetch over 2,000 records allocates what the same
/// call over 100 does (counted with the tests' allocation counter, on a warm store whose
/// records lie in one cached table).
@Suite(.serialized) struct FetchAllocationTests {
    /// Counts the allocations `body` makes on this thread.
    static func allocations(_ body: () throws -> Void) rethrows -> Int {
        walstore_allocations_start()
        defer { _ = walstore_allocations_stop() }
        try body()
        return walstore_allocations_stop()
    }

    /// A store of `count` objects named `item 0`, `item 1`, … (every fourth a `Special`),
    /// compacted into one table.
    static func store(_ count: Int) throws -> (WALHome, WALDataStore) {
        let home = WALHome(RecordMatcherTests.schema)
        let store = try home.open()
        _ = try store.engine.write { batch in
            for i in 0..<count {
                let entity = i % 4 == 0 ? "Special" : "Item"
                let pk = UUID()
                let id = try PersistentIdentifier.identifier(for: store.identifier, entityName: entity, primaryKey: pk)
                let snapshot = DefaultSnapshot(
                    persistentIdentifier: id, values: ["name": .string("item \(i)"), "rank": .int(i), "parent": .toOne(nil)])
                let record = RecordWriter.record(of: snapshot, fields: RecordFieldList(schema: RecordMatcherTests.schema, entity: entity))
                batch.put([0x52] + Array("Item".utf8) + [0] + withUnsafeBytes(of: pk.uuid) { Array($0) }, record)
            }
        }
        _ = try store.engine.compact()
        return (home, store)
    }

    /// The allocations of `call` on a store of `count` objects, the second time it runs (the
    /// first fills the block cache).
    static func measure(_ count: Int, _ call: (WALDataStore) throws -> Void) throws -> Int {
        let (home, store) = try store(count)
        defer { home.temporary.remove() }
        defer { try? store.close() }
        try call(store)
        return try allocations { try call(store) }
    }

    static func request(
        _ predicate: FetchPredicate?, entity: String = "Item", limit: Int? = nil, sortBy: [FetchSortDescriptor] = []
    ) -> DataStoreFetchRequest {
        DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: entity, predicate: predicate, sortBy: sortBy, fetchLimit: limit))
    }

    @Test func aCountWhosePredicateTheBytesDecideAllocatesNothingPerRecord() throws {
        try #require(walstore_allocations_available() == 1, "this build has the allocation counter")
        let contains = Self.request(.string(path: "name", .contains, needle: "7", options: []))
        let few = try Self.measure(100) { store in _ = try store.fetchCount(contains) }
        let many = try Self.measure(2_000) { store in _ = try store.fetchCount(contains) }
        #expect(many <= few + 4, "\(few) allocations for 100 records, \(many) for 2,000")
    }

    @Test func aFilteredFetchAllocatesForWhatItReturnsNotForWhatItRejects() throws {
        try #require(walstore_allocations_available() == 1, "this build has the allocation counter")
        // One match, `item 3`, among 100 or 2,000 records (of two entities, sub-entities left out).
        let one = Self.request(.compare(path: "name", .equal, value: .string("item 3")))
        let few = try Self.measure(100) { store throws in
            let found = try store.fetch(one).fetchedSnapshots.count == 1; #expect(found)
        }
        let many = try Self.measure(2_000) { store throws in
            let found = try store.fetch(one).fetchedSnapshots.count == 1; #expect(found)
        }
        #expect(many <= few + 4, "\(few) allocations for 100 records, \(many) for 2,000")
    }

    @Test func identifiersOfAFilteredFetchAllocateNothingPerRejectedRecord() throws {
        try #require(walstore_allocations_available() == 1, "this build has the allocation counter")
        let none = Self.request(.string(path: "name", .beginsWith, needle: "nothing", options: [.caseInsensitive]), entity: "Special")
        let few = try Self.measure(100) { store throws in
            let found = try store.fetchIdentifiers(none).isEmpty; #expect(found)
        }
        let many = try Self.measure(2_000) { store throws in
            let found = try store.fetchIdentifiers(none).isEmpty; #expect(found)
        }
        #expect(many <= few + 4, "\(few) allocations for 100 records, \(many) for 2,000")
    }
}
