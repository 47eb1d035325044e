import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

@Suite struct WALDeleteRuleTests {
    struct Family {
        var parent: PersistentIdentifier, kids: [PersistentIdentifier], pet: PersistentIdentifier, note: PersistentIdentifier
    }

    static func family(_ store: WALDataStore, guardian: Bool = false) throws -> (Family, PersistentIdentifier?) {
        let parent = RulesModel.make("Parent", ["name": "Ann"])
        let kids = [
            RulesModel.make("Kid", ["first": "Bo", "last": "A", "parent": .toOne(parent.persistentIdentifier)]),
            RulesModel.make("Kid", ["first": "Cy", "last": "A", "parent": .toOne(parent.persistentIdentifier)]),
        ]
        let pet = RulesModel.make("Pet", ["name": "Rex", "parent": .toOne(parent.persistentIdentifier)])
        let note = RulesModel.make("Note", ["text": "hi", "parent": .toOne(parent.persistentIdentifier)])
        let guardianSnapshot = guardian ? RulesModel.make("Guardian", ["name": "G", "ward": .toOne(parent.persistentIdentifier)]) : nil
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [parent] + kids + [pet, note] + (guardianSnapshot.map { [$0] } ?? [])))
        let m = result.remappedIdentifiers
        return (
            Family(
                parent: m[parent.persistentIdentifier]!, kids: kids.map { m[$0.persistentIdentifier]! }, pet: m[pet.persistentIdentifier]!,
                note: m[note.persistentIdentifier]!), guardianSnapshot.map { m[$0.persistentIdentifier]! }
        )
    }

    @Test func cascadeNullifyAndNoActionApplyInTheDeletingSave() throws {
        let home = WALHome(RulesModel.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        let (f, _) = try Self.family(store)
        let parent = try #require(try store.snapshot(f.parent))
        #expect(Set(parent["kids"]!.referencedIdentifiers) == Set(f.kids), "the to-many side is rebuilt from the to-one side")
        let result = try store.save(DataStoreSaveChangesRequest(deleted: [parent]))
        #expect(try store.all("Kid").isEmpty, "cascade deletes the kids")
        let pet = try #require(try store.snapshot(f.pet))
        #expect(pet["parent"] == .toOne(nil), "nullify clears the pet's parent")
        #expect(result.snapshotsToReregister[f.pet] == pet, "the nullified pet is returned for re-registration")
        let note = try #require(try store.snapshot(f.note))
        #expect(note["parent"] == .toOne(f.parent), "noAction leaves the note's reference as it was")
        #expect(try store.all("Parent").isEmpty)
    }

    @Test func denyRefusesTheDeleteWhileATargetStays() throws {
        let home = WALHome(RulesModel.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        let (f, guardian) = try Self.family(store, guardian: true)
        let parent = try #require(try store.snapshot(f.parent))
        let before = try home.files()
        do {
            _ = try store.save(DataStoreSaveChangesRequest(deleted: [parent]))
            Issue.record("a deny rule with a target must refuse the delete")
        } catch let error as DataStoreError {
            #expect(error.code == .deleteDenied && error.propertyName == "guardian" && error.identifier == f.parent)
        }
        #expect(try home.files() == before, "a refused delete writes nothing")
        #expect(try store.all("Kid").count == 2)
        // Deleting the guardian in the same save lifts the refusal.
        let g = try #require(try store.snapshot(guardian!))
        _ = try store.save(DataStoreSaveChangesRequest(deleted: [parent, g]))
        #expect(try store.all("Parent").isEmpty && store.all("Guardian").isEmpty)
    }

    @Test func batchDeleteByPredicateAppliesTheRules() throws {
        let home = WALHome(RulesModel.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        let (f, _) = try Self.family(store)
        try store.delete(DataStoreBatchDeleteRequest(entityName: "Parent", predicate: .attribute("name") == "Ann"))
        #expect(try store.all("Kid").isEmpty)
        #expect(try store.snapshot(f.pet)?["parent"] == .toOne(nil))
    }

    @Test func theToOneSideWinsAndManyToManyChangesAreUnited() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let p1 = BlogModel.post(title: "one", date: Date(timeIntervalSinceReferenceDate: 1))
        let p2 = BlogModel.post(title: "two", date: Date(timeIntervalSinceReferenceDate: 2))
        let a = BlogModel.attachment(imageData: Data([1]), post: p1.persistentIdentifier)
        let t = BlogModel.tag(name: "t")
        let saved = try store.save(DataStoreSaveChangesRequest(inserted: [p1, p2, a, t]))
        let m = saved.remappedIdentifiers
        let (P1, P2, A, T) = (m[p1.persistentIdentifier]!, m[p2.persistentIdentifier]!, m[a.persistentIdentifier]!, m[t.persistentIdentifier]!)
        #expect(saved.snapshotsToReregister[P1]?["attachments"] == .toMany([A]), "p1 did not list its attachment: its inverse is filled in")

        // The attachment says P2; P1 (unchanged in the save) still lists it: the to-one side wins.
        var post1 = try #require(try store.snapshot(P1))
        var attachment = try #require(try store.snapshot(A))
        attachment["post"] = .toOne(P2)
        var post2 = try #require(try store.snapshot(P2))
        post2["attachments"] = .toMany([])  // contradicts the attachment too
        post1["tags"] = .toMany([T])  // a link added from the post's side only
        let tag = try #require(try store.snapshot(T))  // the tag's (unchanged) side lists no post
        let result = try store.save(DataStoreSaveChangesRequest(updated: [post1, attachment, post2, tag]))
        #expect(try store.snapshot(A)?["post"] == .toOne(P2))
        #expect(try store.snapshot(P2)?["attachments"] == .toMany([A]))
        #expect(try store.snapshot(P1)?["attachments"] == .toMany([]))
        #expect(try store.snapshot(T)?["posts"] == .toMany([P1]), "the link one side adds is added")
        #expect(result.snapshotsToReregister[P1]?["attachments"] == .toMany([]) && result.snapshotsToReregister[T]?["posts"] == .toMany([P1]))

        // Removing the link from the tag's side removes it, whatever the (unchanged) post says.
        var tag2 = try #require(try store.snapshot(T))
        tag2["posts"] = .toMany([])
        _ = try store.save(DataStoreSaveChangesRequest(updated: [tag2, try #require(try store.snapshot(P1))]))
        #expect(try store.snapshot(P1)?["tags"] == .toMany([]))
    }
}
