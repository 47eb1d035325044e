import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

@Suite struct WALUpsertAndInheritanceTests {
    @Test func anInsertCollidingOnAUniqueAttributeUpdatesTheStoredObject() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let first = BlogModel.tag(name: "news", colour: "red")
        let id = try store.save(DataStoreSaveChangesRequest(inserted: [first])).remappedIdentifiers[first.persistentIdentifier]!
        let again = BlogModel.tag(name: "news", colour: "blue")
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [again]))
        #expect(result.remappedIdentifiers[again.persistentIdentifier] == id, "the insert maps to the stored object")
        #expect(result.snapshotsToReregister[id]?["colour"] == "blue")
        #expect(try store.all("Tag").map(\.persistentIdentifier) == [id])
        #expect(try store.snapshot(id)?["colour"] == "blue")
        // Two colliding inserts in one save are refused: which one's values would win is unsaid.
        let a = BlogModel.tag(name: "how-to"), b = BlogModel.tag(name: "how-to", colour: "green")
        #expect { _ = try store.save(DataStoreSaveChangesRequest(inserted: [a, b])) } throws: { error in
            let e = error as? DataStoreError
            return e?.code == .uniqueness && e?.identifier == b.persistentIdentifier && e?.relatedIdentifiers == [a.persistentIdentifier]
        }
        #expect(try store.all("Tag").count == 1)
    }

    @Test func anInsertCollidingOnACompoundConstraintUpdatesTheStoredObject() throws {
        let home = WALHome(RulesModel.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        let kid = RulesModel.make("Kid", ["first": "Bo", "last": "A", "age": 3])
        let id = try store.save(DataStoreSaveChangesRequest(inserted: [kid])).remappedIdentifiers[kid.persistentIdentifier]!
        let sameName = RulesModel.make("Kid", ["first": "Bo", "last": "A", "age": 4])
        let otherName = RulesModel.make("Kid", ["first": "Bo", "last": "B"])
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [sameName, otherName]))
        #expect(result.remappedIdentifiers[sameName.persistentIdentifier] == id)
        #expect(result.remappedIdentifiers[otherName.persistentIdentifier] != id)
        #expect(try store.snapshot(id)?["age"] == 4)
        let other = try #require(try store.snapshot(result.remappedIdentifiers[otherName.persistentIdentifier]!))
        #expect(other["age"] == 0, "the default fills the value the insert left out")
        #expect(result.snapshotsToReregister[other.persistentIdentifier] == other, "an insert given a default is returned")
    }

    @Test func subEntitiesAreStoredUnderTheirRootAndFetchedByKind() throws {
        let home = WALHome(RulesModel.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        let rex = RulesModel.make("Dog", ["name": "Rex", "breed": "collie"])
        let tom = RulesModel.make("Cat", ["name": "Tom", "indoor": true])
        let any = RulesModel.make("Animal", ["name": "Blob"])
        let m = try store.save(DataStoreSaveChangesRequest(inserted: [rex, tom, any])).remappedIdentifiers
        #expect(m[rex.persistentIdentifier]?.entityName == "Dog")
        #expect(Set(try store.all("Animal").map(\.persistentIdentifier.entityName)) == ["Dog", "Cat", "Animal"])
        #expect(try store.all("Dog").map { $0["breed"] } == ["collie"])
        let onlyAnimals = try store.fetch(FetchDescriptor(entityName: "Animal", includesSubentities: false)).fetchedSnapshots
        #expect(onlyAnimals.map(\.persistentIdentifier) == [m[any.persistentIdentifier]!])
        // One record type: every object is under R "Animal".
        let records = try store.engine.scan(prefix: [0x52] + RawRecord.name("Animal")).collect().map {
            try RawRecord.fields(try $0.value(), key: $0.key, schema: store.schema)
        }
        #expect(Set(records.map { $0[0].1 }) == [.string("Dog"), .string("Cat"), .string("Animal")])
        // The root's unique name covers the sub-entities: a Dog named Rex upserts the dog, a Cat
        // named Rex is refused (an upsert cannot change an object's entity).
        let dog = RulesModel.make("Dog", ["name": "Rex", "breed": "beagle"])
        #expect(
            try store.save(DataStoreSaveChangesRequest(inserted: [dog])).remappedIdentifiers[dog.persistentIdentifier] == m[rex.persistentIdentifier])
        let cat = RulesModel.make("Cat", ["name": "Rex", "indoor": false])
        #expect { _ = try store.save(DataStoreSaveChangesRequest(inserted: [cat])) } throws: { ($0 as? DataStoreError)?.code == .uniqueness }
        // The root's index serves a sub-entity fetch.
        let before = store.recordsRead
        #expect(try store.fetch(FetchDescriptor(entityName: "Cat", predicate: .attribute("name") == "Tom")).fetchedSnapshots.count == 1)
        #expect(store.recordsRead - before == 1)
    }
}
