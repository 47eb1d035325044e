import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// A refused save's error names, in its fields, everything its message mentions: the entity,
/// the property, the rule's constraint, the object — an insert by the temporary identifier the
/// request holds — and every other object concerned.
@Suite struct WALSaveErrorFieldsTests {
    struct Stored: Sendable {
        var ann: DefaultSnapshot, kid: DefaultSnapshot, guardian: DefaultSnapshot, store: String
    }

    struct Expected: Sendable {
        var code: DataStoreError.Code
        var entity: String
        var property: String?
        var identifier: PersistentIdentifier
        var related: [PersistentIdentifier] = []
        var constraint: [String]? = nil
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let make: @Sendable (Stored) throws -> (DataStoreSaveChangesRequest<DefaultSnapshot>, Expected)
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "missing value of an insert") { _ in
            let pet = RulesModel.make("Pet", [:])
            return (
                DataStoreSaveChangesRequest(inserted: [pet]),
                Expected(code: .missingValue, entity: "Pet", property: "name", identifier: pet.persistentIdentifier)
            )
        },
        Case(name: "missing value of an update") { s in
            var ann = s.ann
            ann["name"] = .null
            return (
                DataStoreSaveChangesRequest(updated: [ann]),
                Expected(code: .missingValue, entity: "Parent", property: "name", identifier: s.ann.persistentIdentifier)
            )
        },
        Case(name: "type mismatch of an insert") { _ in
            let pet = RulesModel.make("Pet", ["name": 3])
            return (
                DataStoreSaveChangesRequest(inserted: [pet]),
                Expected(code: .typeMismatch, entity: "Pet", property: "name", identifier: pet.persistentIdentifier)
            )
        },
        Case(name: "a reference to the wrong entity") { s in
            let pet = RulesModel.make("Pet", ["name": "Rex", "parent": .toOne(s.kid.persistentIdentifier)])
            return (
                DataStoreSaveChangesRequest(inserted: [pet]),
                Expected(
                    code: .typeMismatch, entity: "Pet", property: "parent", identifier: pet.persistentIdentifier,
                    related: [s.kid.persistentIdentifier])
            )
        },
        Case(name: "a dangling permanent reference") { s in
            let ghost = try PersistentIdentifier.identifier(for: s.store, entityName: "Parent", primaryKey: UUID())
            let pet = RulesModel.make("Pet", ["name": "Rex", "parent": .toOne(ghost)])
            return (
                DataStoreSaveChangesRequest(inserted: [pet]),
                Expected(code: .danglingReference, entity: "Pet", property: "parent", identifier: pet.persistentIdentifier, related: [ghost])
            )
        },
        Case(name: "a dangling temporary reference") { _ in
            let nobody = PersistentIdentifier.temporary(entityName: "Parent")
            let pet = RulesModel.make("Pet", ["name": "Rex", "parent": .toOne(nobody)])
            return (
                DataStoreSaveChangesRequest(inserted: [pet]),
                Expected(code: .danglingReference, entity: "Pet", property: "parent", identifier: pet.persistentIdentifier, related: [nobody])
            )
        },
        Case(name: "a count under the minimum of an insert") { _ in
            let team = RulesModel.make("Team", ["name": "T", "members": .toMany([])])
            return (
                DataStoreSaveChangesRequest(inserted: [team]),
                Expected(code: .cardinality, entity: "Team", property: "members", identifier: team.persistentIdentifier)
            )
        },
        Case(name: "a deny rule") { s in
            (
                DataStoreSaveChangesRequest(deleted: [s.ann]),
                Expected(
                    code: .deleteDenied, entity: "Parent", property: "guardian", identifier: s.ann.persistentIdentifier,
                    related: [s.guardian.persistentIdentifier])
            )
        },
        Case(name: "an insert sharing a stored object's unique value across sub-entities") { _ in
            let dog = RulesModel.make("Dog", ["name": "Rex"])
            let cat = RulesModel.make("Cat", ["name": "Rex", "indoor": true])
            _ = dog
            return (
                DataStoreSaveChangesRequest(inserted: [cat]),
                Expected(code: .uniqueness, entity: "Cat", property: "name", identifier: cat.persistentIdentifier, constraint: ["name"])
            )
        },
        Case(name: "an insert sharing a compound unique value with another insert") { _ in
            let a = RulesModel.make("Kid", ["first": "Al", "last": "B"]), b = RulesModel.make("Kid", ["first": "Al", "last": "B"])
            return (
                DataStoreSaveChangesRequest(inserted: [a, b]),
                Expected(
                    code: .uniqueness, entity: "Kid", property: nil, identifier: b.persistentIdentifier, related: [a.persistentIdentifier],
                    constraint: ["first", "last"])
            )
        },
        Case(name: "an insert of the compound unique value an update gives") { s in
            var kid = s.kid
            kid["first"] = "Al"
            let other = RulesModel.make("Kid", ["first": "Al", "last": "A"])
            return (
                DataStoreSaveChangesRequest(inserted: [other], updated: [kid]),
                Expected(
                    code: .conflictingChanges, entity: "Kid", property: nil, identifier: other.persistentIdentifier,
                    related: [s.kid.persistentIdentifier],
                    constraint: ["first", "last"])
            )
        },
    ]

    @Test(arguments: cases) func aRefusedSaveNamesEverythingItsMessageMentions(_ c: Case) throws {
        let home = WALHome(RulesModel.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        let ann = RulesModel.make("Parent", ["name": "Ann"])
        let kid = RulesModel.make("Kid", ["first": "Bo", "last": "A", "parent": .toOne(ann.persistentIdentifier)])
        let guardian = RulesModel.make("Guardian", ["name": "G", "ward": .toOne(ann.persistentIdentifier)])
        let dog = RulesModel.make("Dog", ["name": "Rex"])
        let m = try store.save(DataStoreSaveChangesRequest(inserted: [ann, kid, guardian, dog])).remappedIdentifiers
        let stored = Stored(
            ann: try #require(try store.snapshot(m[ann.persistentIdentifier]!)), kid: try #require(try store.snapshot(m[kid.persistentIdentifier]!)),
            guardian: try #require(try store.snapshot(m[guardian.persistentIdentifier]!)), store: store.identifier)
        var (request, expected) = try c.make(stored)
        if c.name.contains("across sub-entities") { expected.related = [m[dog.persistentIdentifier]!] }
        let files = try home.files()
        do {
            _ = try store.save(request)
            Issue.record("the save was accepted")
        } catch let error as DataStoreError {
            #expect(error.code == expected.code, "\(error)")
            #expect(error.entityName == expected.entity, "\(error)")
            #expect(error.propertyName == expected.property, "\(error)")
            #expect(error.identifier == expected.identifier, "\(error)")
            #expect(error.relatedIdentifiers == expected.related, "\(error)")
            #expect(error.constraint == expected.constraint, "\(error)")
            for id in [expected.identifier] + expected.related {
                #expect(error.message.contains("\(id)"), "the message names \(id): \(error.message)")
            }
        }
        #expect(try home.files() == files)
    }
}
