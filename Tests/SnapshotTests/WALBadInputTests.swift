import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Every kind of bad save is refused with its typed error naming the object and property, and
/// leaves the store's files byte-identical.
@Suite struct WALBadInputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let code: DataStoreError.Code
        let property: String?
        let request: @Sendable (Saved) throws -> DataStoreSaveChangesRequest<DefaultSnapshot>
        var testDescription: String { name }
    }

    struct Saved: Sendable {
        var parent: DefaultSnapshot, team: DefaultSnapshot, guardian: DefaultSnapshot, store: String
    }

    static let cases: [Case] = [
        Case(name: "unknown entity", code: .unknownEntity, property: nil) { _ in
            DataStoreSaveChangesRequest(inserted: [RulesModel.make("Comment", ["text": "x"])])
        },
        Case(name: "unknown property", code: .unknownProperty, property: "colour") { _ in
            DataStoreSaveChangesRequest(inserted: [RulesModel.make("Pet", ["name": "x", "colour": "red"])])
        },
        Case(name: "wrong value type", code: .typeMismatch, property: "age") { s in
            var p = s.parent
            p["age"] = .string("old")
            return DataStoreSaveChangesRequest(updated: [p])
        },
        Case(name: "wrong relationship value", code: .typeMismatch, property: "kids") { s in
            var p = s.parent
            p["kids"] = .toOne(nil)
            return DataStoreSaveChangesRequest(updated: [p])
        },
        Case(name: "missing non-optional value", code: .missingValue, property: "name") { _ in
            DataStoreSaveChangesRequest(inserted: [RulesModel.make("Pet", [:])])
        },
        Case(name: "explicit null for a non-optional value", code: .missingValue, property: "name") { s in
            var p = s.parent
            p["name"] = .null
            return DataStoreSaveChangesRequest(updated: [p])
        },
        Case(name: "dangling temporary reference", code: .danglingReference, property: "parent") { _ in
            DataStoreSaveChangesRequest(inserted: [RulesModel.make("Pet", ["name": "x", "parent": .toOne(.temporary(entityName: "Parent"))])])
        },
        Case(name: "dangling permanent reference", code: .danglingReference, property: "parent") { s in
            let ghost = try PersistentIdentifier.identifier(for: s.store, entityName: "Parent", primaryKey: UUID())
            return DataStoreSaveChangesRequest(inserted: [RulesModel.make("Pet", ["name": "x", "parent": .toOne(ghost)])])
        },
        Case(name: "reference of another store", code: .foreignIdentifier, property: "parent") { _ in
            let foreign = try PersistentIdentifier.identifier(for: "elsewhere", entityName: "Parent", primaryKey: UUID())
            return DataStoreSaveChangesRequest(inserted: [RulesModel.make("Pet", ["name": "x", "parent": .toOne(foreign)])])
        },
        Case(name: "update of another store's object", code: .foreignIdentifier, property: nil) { s in
            let foreign = try PersistentIdentifier.identifier(for: "elsewhere", entityName: "Parent", primaryKey: UUID())
            return DataStoreSaveChangesRequest(updated: [DefaultSnapshot(persistentIdentifier: foreign, values: s.parent.values)])
        },
        Case(name: "temporary identifier among the updated", code: .temporaryIdentifierInUpdate, property: nil) { _ in
            DataStoreSaveChangesRequest(updated: [RulesModel.make("Pet", ["name": "x"])])
        },
        Case(name: "temporary identifier among the deleted", code: .temporaryIdentifierInUpdate, property: nil) { _ in
            DataStoreSaveChangesRequest(deleted: [RulesModel.make("Pet", ["name": "x"])])
        },
        Case(name: "reference to the wrong entity", code: .typeMismatch, property: "parent") { s in
            DataStoreSaveChangesRequest(inserted: [RulesModel.make("Pet", ["name": "x", "parent": .toOne(s.team.persistentIdentifier)])])
        },
        Case(name: "over the maximum count", code: .cardinality, property: "pets") { s in
            let pets = (0..<3).map { RulesModel.make("Pet", ["name": .string("p\($0)")]) }
            var p = s.parent
            p["pets"] = .toMany(pets.map(\.persistentIdentifier))
            return DataStoreSaveChangesRequest(inserted: pets, updated: [p])
        },
        Case(name: "under the minimum count", code: .cardinality, property: "members") { s in
            var t = s.team
            t["members"] = .toMany([])
            return DataStoreSaveChangesRequest(updated: [t])
        },
        Case(name: "a deny rule", code: .deleteDenied, property: "guardian") { s in
            DataStoreSaveChangesRequest(deleted: [s.parent])
        },
        Case(name: "an insert of the unique value an update gives", code: .conflictingChanges, property: "name") { s in
            let other = RulesModel.make("Parent", ["name": "Zed"])
            var p = s.parent
            p["name"] = "Zed"
            return DataStoreSaveChangesRequest(inserted: [other], updated: [p])
        },

    ]

    @Test(arguments: cases) func aBadSaveIsRefusedAndWritesNothing(_ bad: Case) throws {
        let home = WALHome(RulesModel.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        let parent = RulesModel.make("Parent", ["name": "Ann"])
        let team = RulesModel.make("Team", ["name": "A", "members": .toMany([parent.persistentIdentifier])])
        let guardian = RulesModel.make("Guardian", ["name": "G", "ward": .toOne(parent.persistentIdentifier)])
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [parent, team, guardian]))
        let saved = Saved(
            parent: try #require(try store.snapshot(result.remappedIdentifiers[parent.persistentIdentifier]!)),
            team: try #require(try store.snapshot(result.remappedIdentifiers[team.persistentIdentifier]!)),
            guardian: try #require(try store.snapshot(result.remappedIdentifiers[guardian.persistentIdentifier]!)), store: store.identifier)
        let request = try bad.request(saved)
        let before = try home.files()
        let contents = try ["Parent", "Team", "Guardian", "Pet"].map { try store.all($0) }
        do {
            _ = try store.save(request)
            Issue.record("\(bad.name): the save was accepted")
        } catch let error as DataStoreError {
            #expect(error.code == bad.code, "\(bad.name): \(error)")
            if let property = bad.property { #expect(error.propertyName == property, "\(bad.name): \(error)") }
            #expect(error.entityName != nil, "\(bad.name): the error names the entity")
        }
        #expect(try home.files() == before, "\(bad.name): the files changed")
        #expect(try ["Parent", "Team", "Guardian", "Pet"].map { try store.all($0) } == contents)
    }
}
