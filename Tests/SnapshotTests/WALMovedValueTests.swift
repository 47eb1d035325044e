import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Values and children that the same request moves away: an insert may take them, a cascade spares
/// them; and a version-2 store whose open is refused is left as it was.
@Suite struct WALMovedValueTests {
    /// Owners whose animals cascade; the root Animal's unique name covers its sub-entities.
    static let zoo: Schema = {
        do {
            return try Schema([
                .init(
                    "Owner", attributes: [.init("name", .string)],
                    relationships: [.init("animals", destination: "Animal", .toMany, inverse: "owner", deleteRule: .cascade)]),
                .init(
                    "Animal", attributes: [.init("name", .string, options: .unique)],
                    relationships: [.init("owner", destination: "Owner", inverse: "animals")]),
                .init("Dog", superentity: "Animal", attributes: [.init("breed", .string, isOptional: true)]),
                .init("Cat", superentity: "Animal", attributes: [.init("indoor", .bool, isOptional: true)]),
            ])
        } catch { preconditionFailure("\(error)") }
    }()

    static func make(_ entity: String, _ values: [String: PropertyValue]) -> DefaultSnapshot {
        DefaultSnapshot(persistentIdentifier: .temporary(entityName: entity), values: values)
    }

    /// "An insert never merges into an object the request deletes (directly or by a cascade):
    /// the delete happens and the insert is a new object." The planner refused an insert of
    /// another sub-entity of the same root at once (`uniqueness`, "an upsert needs the same
    /// entity") before the cascade that deletes the holder of the value was known.
    @Test func anInsertOfAnotherSubEntityTakesTheUniqueValueOfAnObjectACascadeDeletes() throws {
        let home = WALHome(Self.zoo)
        defer { home.temporary.remove() }
        let store = try home.open()
        let owner = Self.make("Owner", ["name": "Ann"])
        let dog = Self.make("Dog", ["name": "Rex", "owner": .toOne(owner.persistentIdentifier)])
        let ids = try store.save(DataStoreSaveChangesRequest(inserted: [owner, dog])).remappedIdentifiers
        let ownerID = try #require(ids[owner.persistentIdentifier]), dogID = try #require(ids[dog.persistentIdentifier])
        let cat = Self.make("Cat", ["name": "Rex"])
        let stored = try #require(try store.snapshot(ownerID))
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [cat], deleted: [stored]))
        let catID = try #require(result.remappedIdentifiers[cat.persistentIdentifier])
        #expect(catID != dogID && catID.entityName == "Cat", "the insert is a new object")
        #expect(try store.all("Animal").map(\.persistentIdentifier) == [catID], "the dog went with its owner")
        #expect(try store.all("Owner").isEmpty)
        // The rule still refuses the same insert when the holder stays.
        let owner2 = Self.make("Owner", ["name": "Ben"])
        let dog2 = Self.make("Dog", ["name": "Max", "owner": .toOne(owner2.persistentIdentifier)])
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [owner2, dog2]))
        let files = try home.files()
        #expect { _ = try store.save(DataStoreSaveChangesRequest(inserted: [Self.make("Cat", ["name": "Max"])])) } throws: { error in
            (error as? DataStoreError)?.code == .uniqueness
        }
        #expect(try home.files() == files)
        try store.close()
    }

    /// Kids unique by first name within their family: a compound constraint over an attribute
    /// and a to-one.
    static let families: Schema = {
        do {
            return try Schema([
                .init(
                    "Family", attributes: [.init("name", .string)],
                    relationships: [.init("kids", destination: "Child", .toMany, inverse: "family", deleteRule: .nullify)]),
                .init(
                    "Child", attributes: [.init("first", .string), .init("age", .int, isOptional: true)],
                    relationships: [.init("family", destination: "Family", inverse: "kids")],
                    uniquenessConstraints: [["first", "family"]]),
            ])
        } catch { preconditionFailure("\(error)") }
    }()

    /// "An update that moves a unique value away frees it for an insert of the same request."
    /// Here the value (first name + family) moves away through a to-many stated from the other
    /// side (the other family lists the child). The planner matched the insert against the
    /// stored values, merged it into the child it moves, and the insert's to-one undid the move:
    /// the child stays, the other family's statement is lost and no new child is made.
    @Test func anInsertTakesACompoundUniqueValueAToManyStatedFromTheOtherSideMovesAway() throws {
        let home = WALHome(Self.families)
        defer { home.temporary.remove() }
        let store = try home.open()
        let a = Self.make("Family", ["name": "A"]), b = Self.make("Family", ["name": "B"])
        let bo = Self.make("Child", ["first": "Bo", "age": 3, "family": .toOne(a.persistentIdentifier)])
        let ids = try store.save(DataStoreSaveChangesRequest(inserted: [a, b, bo])).remappedIdentifiers
        let aID = try #require(ids[a.persistentIdentifier]), bID = try #require(ids[b.persistentIdentifier])
        let boID = try #require(ids[bo.persistentIdentifier])
        // B now lists Bo (moving Bo out of A), and a new Bo joins A.
        let moveToB = DefaultSnapshot(persistentIdentifier: bID, values: ["kids": .toMany([boID])])
        let newBo = Self.make("Child", ["first": "Bo", "age": 0, "family": .toOne(aID)])
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [newBo], updated: [moveToB]))
        let newID = try #require(result.remappedIdentifiers[newBo.persistentIdentifier])
        #expect(newID != boID, "the insert is a new object: the stored Bo moved away from A")
        #expect(try store.snapshot(boID)?["family"] == .toOne(bID), "the stated move happened")
        #expect(try store.snapshot(boID)?["age"] == 3, "the moved child keeps its values")
        #expect(try store.all("Child").count == 2)
        try store.close()
    }

    /// Desks unique by label per owner, the owner a one-to-one.
    static let offices: Schema = {
        do {
            return try Schema([
                .init("Person", attributes: [.init("name", .string)], relationships: [.init("desk", destination: "Desk", inverse: "owner")]),
                .init(
                    "Desk", attributes: [.init("label", .string), .init("floor", .int, isOptional: true)],
                    relationships: [.init("owner", destination: "Person", inverse: "desk")], uniquenessConstraints: [["label", "owner"]]),
            ])
        } catch { preconditionFailure("\(error)") }
    }()

    /// The same through a one-to-one stated from the other side: another person takes the desk,
    /// which frees (label, first owner) for an insert. The planner merged the insert into the
    /// desk that moves, so no new desk was made.
    @Test func anInsertTakesACompoundUniqueValueAOneToOneStatedFromTheOtherSideMovesAway() throws {
        let home = WALHome(Self.offices)
        defer { home.temporary.remove() }
        let store = try home.open()
        let ann = Self.make("Person", ["name": "Ann"]), ben = Self.make("Person", ["name": "Ben"])
        let desk = Self.make("Desk", ["label": "D1", "floor": 2, "owner": .toOne(ann.persistentIdentifier)])
        let ids = try store.save(DataStoreSaveChangesRequest(inserted: [ann, ben, desk])).remappedIdentifiers
        let annID = try #require(ids[ann.persistentIdentifier]), benID = try #require(ids[ben.persistentIdentifier])
        let deskID = try #require(ids[desk.persistentIdentifier])
        let benTakesIt = DefaultSnapshot(persistentIdentifier: benID, values: ["desk": .toOne(deskID)])
        let newDesk = Self.make("Desk", ["label": "D1", "owner": .toOne(annID)])
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [newDesk], updated: [benTakesIt]))
        let newID = try #require(result.remappedIdentifiers[newDesk.persistentIdentifier])
        #expect(newID != deskID, "the insert is a new desk: Ben took the stored one")
        #expect(try store.snapshot(deskID)?["owner"] == .toOne(benID))
        #expect(try store.snapshot(deskID)?["floor"] == 2)
        #expect(try store.snapshot(annID)?["desk"] == .toOne(newID))
        #expect(try store.all("Desk").count == 2)
        try store.close()
    }

    static let words: Schema = {
        do {
            return try Schema([.init("Word", attributes: [.init("text", .string, options: .unique)], indexes: [["text"]])])
        } catch { preconditionFailure("\(error)") }
    }()

    /// A schema that drops Word: opening a store holding words with it is refused, "The store is
    /// unchanged."
    static let noWords: Schema = {
        do { return try Schema([.init("Other", attributes: [.init("n", .string)])]) } catch { preconditionFailure("\(error)") }
    }()

    /// A refused open of a store of header version 2 must leave its files byte-identical, as a
    /// refused open of a current store does. The string-key upgrade runs (and commits its keys
    /// and a version-3 header, then the records' rewrite in format 2 and a version-4 header) before the migration's checks refuse the configured schema.
    @Test
    func aRefusedOpenOfAVersion2StoreLeavesItsFilesUnchanged() throws {
        let home = WALHome(Self.words)
        defer { home.temporary.remove() }
        var store = try home.open()
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [Self.make("Word", ["text": "plain"])]))
        let headerKey = [0x00] + Array("store".utf8)
        try store.rewriteInRecordsFormat1(headerVersion: 2)
        try store.close()
        let files = try home.files()
        var options = LogStore.Options()
        options.blobThreshold = 4096
        let other = WALStoreConfiguration(name: "Blog", schema: Self.noWords, path: home.path, options: options)
        #expect { store = try WALDataStore(other) } throws: { ($0 as? DataStoreError)?.code == .schemaMismatch }
        #expect(try home.files() == files, "the refused open wrote nothing")
        // The same store opened with its own schema is upgraded.
        store = try home.open()
        #expect(try #require(try store.engine.value(forKey: headerKey))[0] == 4)
        try store.close()
    }

    /// The refusal a migration's dry run makes (a uniqueness rule the stored objects break) is
    /// promised byte-identical too (GenerationRewriter); for a version-2 store the upgrade has
    /// committed by then.
    @Test
    func aMigrationRefusedByItsDryRunLeavesAVersion2StoreUnchanged() throws {
        let loose = try Schema([.init("Word", attributes: [.init("text", .string)], indexes: [["text"]])])
        let home = WALHome(loose)
        defer { home.temporary.remove() }
        var store = try home.open()
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [Self.make("Word", ["text": "same"]), Self.make("Word", ["text": "same"])]))
        let headerKey = [0x00] + Array("store".utf8)
        try store.rewriteInRecordsFormat1(headerVersion: 2)
        try store.close()
        let files = try home.files()
        var options = LogStore.Options()
        options.blobThreshold = 4096
        let strict = WALStoreConfiguration(name: "Blog", schema: Self.words, path: home.path, options: options)
        #expect { store = try WALDataStore(strict) } throws: { ($0 as? DataStoreError)?.code == .uniqueness }
        #expect(try home.files() == files, "the refused open wrote nothing")
        // The same store opened with its own schema is upgraded.
        store = try home.open()
        #expect(try #require(try store.engine.value(forKey: headerKey))[0] == 4)
        try store.close()
    }
}
