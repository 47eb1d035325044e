import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// A new object's properties the request leaves out read their defaults in place: they are
/// stored, counted, checked and returned as if the request had stated them.
@Suite struct WALInsertDefaultsTests {
    @Test func aNewObjectLeavingABoundedToManyOutIsCheckedByItsLinks() throws {
        let home = WALHome(RulesModel.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        // No members stated: none, under the minimum of one.
        let team = RulesModel.make("Team", ["name": "T"])
        #expect(errorCode { try store.save(DataStoreSaveChangesRequest(inserted: [team])) } == .cardinality)
        // Pets gained only through their own to-one: three are over the maximum of two.
        let parent = RulesModel.make("Parent", ["name": "P"])
        let pets = (0..<3).map { RulesModel.make("Pet", ["name": .string("p\($0)"), "parent": .toOne(parent.persistentIdentifier)]) }
        #expect(errorCode { try store.save(DataStoreSaveChangesRequest(inserted: [parent] + pets)) } == .cardinality)
        #expect(try store.all("Parent").isEmpty && store.all("Pet").isEmpty, "refused saves write nothing")

        let result = try store.save(DataStoreSaveChangesRequest(inserted: [parent] + pets.prefix(2)))
        let p = try #require(result.remappedIdentifiers[parent.persistentIdentifier])
        let petIDs = pets.prefix(2).compactMap { result.remappedIdentifiers[$0.persistentIdentifier] }
        // Returned whole: the pets its links gave it, its defaults.
        let returned = try #require(result.snapshotsToReregister[p])
        #expect(Set(returned["pets"]?.referencedIdentifiers ?? []) == Set(petIDs))
        #expect(returned["kids"] == .toMany([]) && returned["notes"] == .toMany([]))
        #expect(returned["age"] == .null && returned["guardian"] == .toOne(nil))
        #expect(try store.snapshot(p) == returned)
    }

    @Test func aNewObjectLeavingAnAttributeOutIsStoredIndexedAndObservedWithItsDefault() throws {
        let home = WALHome(RulesModel.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        let observation = try store.observe(FetchDescriptor(entityName: "Kid", predicate: .attribute("age") == 0))
        let kid = RulesModel.make("Kid", ["first": "Al", "last": "B"])
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [kid]))
        let id = try #require(result.remappedIdentifiers[kid.persistentIdentifier])
        let returned = try #require(result.snapshotsToReregister[id], "an insert given defaults is returned whole")
        #expect(returned["age"] == .int(0) && returned["parent"] == .toOne(nil))
        #expect(try store.snapshot(id)?["age"] == .int(0))
        #expect(observation.newestAnswer?.map(\.persistentIdentifier) == [id], "the observer sees the default")
        observation.cancel()
        // An insert stating everything is not returned.
        let whole = RulesModel.make("Kid", ["first": "Cy", "last": "B", "age": .int(3), "parent": .toOne(nil)])
        #expect(try store.save(DataStoreSaveChangesRequest(inserted: [whole])).snapshotsToReregister.isEmpty)
        // A second insert of the same unique first and last, leaving age out, is an upsert.
        let again = try store.save(DataStoreSaveChangesRequest(inserted: [RulesModel.make("Kid", ["first": "Al", "last": "B"])]))
        #expect(Array(again.remappedIdentifiers.values) == [id])
        #expect(try store.all("Kid").count == 2)
    }
}
