import Foundation
import Snapshot
import Testing

/// The relationship shapes the blog model does not have: a one-to-one with its inverse, a
/// to-many without an inverse, and a many-to-many that is its own inverse. Each is kept in step
/// by saves (both ends, inverses moved), survives a reopen, and loses a deleted object.
@Suite struct WALRelationshipShapeTests {
    static let schema = makeSchema(person: "Person")

    /// The schema with its person entity named `person` (renamed from `Person` when it differs).
    static func makeSchema(person: String) -> Schema {
        do {
            return try Schema([
                .init(
                    person,
                    attributes: [.init("name", .string)],
                    relationships: [
                        .init("passport", destination: "Passport", .toOne, inverse: "holder"),
                        .init("bookmarks", destination: "Page", .toMany),
                        .init("friends", destination: person, .toMany, inverse: "friends"),
                    ], originalName: person == "Person" ? nil : "Person"),
                .init(
                    "Passport", attributes: [.init("number", .string)],
                    relationships: [.init("holder", destination: person, .toOne, inverse: "passport")]),
                .init("Page", attributes: [.init("url", .string)]),
            ])
        } catch {
            preconditionFailure("a fixed, consistent schema: \(error)")
        }
    }

    static func make(_ entity: String, _ values: [String: PropertyValue]) -> DefaultSnapshot {
        DefaultSnapshot(persistentIdentifier: .temporary(entityName: entity), values: values)
    }

    static func person(_ name: String, _ extra: [String: PropertyValue] = [:]) -> DefaultSnapshot {
        make(
            "Person",
            ["name": .string(name), "passport": .toOne(nil), "bookmarks": .toMany([]), "friends": .toMany([])]
                .merging(extra) { _, new in new })
    }

    /// Saves Ann, Bo and Cy, Ann listing Bo and Cy (and herself, when `herself`) as friends;
    /// their permanent identifiers.
    static func saveAnnWithFriends(
        in store: WALDataStore, herself: Bool
    ) throws -> (PersistentIdentifier, PersistentIdentifier, PersistentIdentifier) {
        let ann = person("Ann"), bo = person("Bo"), cy = person("Cy")
        var annWithFriends = ann
        annWithFriends["friends"] = .toMany([bo.persistentIdentifier, cy.persistentIdentifier] + (herself ? [ann.persistentIdentifier] : []))
        let m = try store.save(DataStoreSaveChangesRequest(inserted: [annWithFriends, bo, cy])).remappedIdentifiers
        return (try #require(m[ann.persistentIdentifier]), try #require(m[bo.persistentIdentifier]), try #require(m[cy.persistentIdentifier]))
    }

    @Test func aOneToOneMovesItsInverseAndTheOtherEndLetsGo() throws {
        let home = WALHome(Self.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        let passport = Self.make("Passport", ["number": "P1", "holder": .toOne(nil)])
        let ann = Self.person("Ann", ["passport": .toOne(passport.persistentIdentifier)])
        let bo = Self.person("Bo")
        let saved = try store.save(DataStoreSaveChangesRequest(inserted: [passport, ann, bo]))
        let ids = saved.remappedIdentifiers
        let (p, a, b) = (ids[passport.persistentIdentifier]!, ids[ann.persistentIdentifier]!, ids[bo.persistentIdentifier]!)
        #expect(try store.snapshot(p)?["holder"] == .toOne(a), "the inverse of Ann's passport is set")

        // Bo takes the passport: Ann's end lets go, in the same save.
        var boNow = try #require(try store.snapshot(b))
        boNow["passport"] = .toOne(p)
        let moved = try store.save(DataStoreSaveChangesRequest(updated: [boNow]))
        #expect(try store.snapshot(p)?["holder"] == .toOne(b))
        #expect(try store.snapshot(a)?["passport"] == .toOne(nil), "Ann no longer holds it")
        #expect(moved.snapshotsToReregister[a]?["passport"] == .toOne(nil), "and Ann comes back for re-registration")
        try store.close()

        let reopened = try home.open()
        #expect(try reopened.snapshot(p)?["holder"] == .toOne(b))
        #expect(try reopened.snapshot(a)?["passport"] == .toOne(nil))
        // Deleting the passport nullifies its holder's end.
        _ = try reopened.save(DataStoreSaveChangesRequest(deleted: [try #require(try reopened.snapshot(p))]))
        #expect(try reopened.snapshot(b)?["passport"] == .toOne(nil))
    }

    @Test func aToManyWithoutAnInverseKeepsItsTargetsAndLosesADeletedOne() throws {
        let home = WALHome(Self.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        let pages = (0..<3).map { Self.make("Page", ["url": .string("https://example.com/\($0)")]) }
        let ann = Self.person("Ann", ["bookmarks": .toMany(pages.map(\.persistentIdentifier))])
        let saved = try store.save(DataStoreSaveChangesRequest(inserted: pages + [ann]))
        let a = saved.remappedIdentifiers[ann.persistentIdentifier]!
        let pageIDs = pages.map { saved.remappedIdentifiers[$0.persistentIdentifier]! }
        #expect(Set(try #require(try store.snapshot(a))["bookmarks"]!.referencedIdentifiers) == Set(pageIDs))

        // Drop one bookmark by updating the list, delete another page outright.
        var annNow = try #require(try store.snapshot(a))
        annNow["bookmarks"] = .toMany([pageIDs[0], pageIDs[1]])
        _ = try store.save(DataStoreSaveChangesRequest(updated: [annNow]))
        _ = try store.save(DataStoreSaveChangesRequest(deleted: [try #require(try store.snapshot(pageIDs[1]))]))
        try store.close()
        let reopened = try home.open()
        #expect(try reopened.snapshot(a)?["bookmarks"]?.referencedIdentifiers == [pageIDs[0]])
        #expect(try reopened.all("Page").count == 2, "pages are not deleted with the link")
    }

    @Test func aCloudKitExportSendsEachLinkOfARelationshipThatIsItsOwnInverseOnce() throws {
        let home = WALHome(Self.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        // Ann's friends: Bo, Cy and Ann herself (a link from an object to itself).
        let (a, _, _) = try Self.saveAnnWithFriends(in: store, herself: true)
        #expect(try store.snapshot(a)?["friends"]?.referencedIdentifiers.count == 3, "Ann lists herself once")
        #expect(try store.all("Person").first { $0.persistentIdentifier == a }?["friends"]?.referencedIdentifiers.count == 3)

        var linkNames: [String] = []
        try CloudKitExport(store: store).forEachRecord { record, _ in
            if record.recordType == CloudKitRecord.linkRecordType { linkNames.append(record.recordName) }
        }
        #expect(linkNames.count == 3, "Ann–Bo, Ann–Cy and Ann–Ann, each once: \(linkNames)")
        #expect(Set(linkNames).count == linkNames.count, "no link record is sent twice")

        let export = home.temporary.path + "/export", copyPath = home.temporary.path + "/copy"
        let summary = try CloudKitExport(store: store).write(to: export)
        #expect(summary.links == 3)
        try store.close()
        let imported = try CloudKitImport.makeStore(from: export, at: copyPath)
        #expect(imported.links == 3)
        let copy = try WALDataStore(WALStoreConfiguration(name: "Blog", schema: Self.schema, path: copyPath))
        defer { try? copy.close() }
        // The import is a new store: its objects are named by their names here.
        let people = try copy.all("Person")
        var names: [PersistentIdentifier: String] = [:]
        for person in people { if case .string(let name)? = person["name"] { names[person.persistentIdentifier] = name } }
        var friends: [String: [String]] = [:]
        for person in people {
            friends[names[person.persistentIdentifier] ?? "?"] = (person["friends"]?.referencedIdentifiers ?? []).map { names[$0] ?? "?" }.sorted()
        }
        #expect(friends == ["Ann": ["Ann", "Bo", "Cy"], "Bo": ["Ann"], "Cy": ["Ann"]])
    }

    @Test func aMigrationRewriteKeepsALinkOfAnObjectToItselfOnce() throws {
        let home = WALHome(Self.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        _ = try Self.saveAnnWithFriends(in: store, herself: true)
        try store.close()
        // Renaming the entity rewrites every record and link into a new generation.
        let renamed = try WALDataStore(WALStoreConfiguration(name: "Blog", schema: Self.makeSchema(person: "Human"), path: home.path))
        defer { try? renamed.close() }
        let people = try renamed.all("Human")
        let ann = try #require(people.first { $0["name"] == .string("Ann") })
        let friends = ann["friends"]?.referencedIdentifiers ?? []
        #expect(friends.count == 3, "Bo, Cy and Ann herself, each once: \(friends)")
        #expect(Set(friends) == Set(people.map(\.persistentIdentifier)))
    }

    @Test func aManyToManyThatIsItsOwnInverseIsSymmetric() throws {
        let home = WALHome(Self.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        let (a, b, c) = try Self.saveAnnWithFriends(in: store, herself: false)
        #expect(try store.snapshot(b)?["friends"]?.referencedIdentifiers == [a], "a friendship shows from both ends")
        #expect(try store.snapshot(c)?["friends"]?.referencedIdentifiers == [a])

        // Cy ends it from Cy's side; Bo is deleted.
        var cyNow = try #require(try store.snapshot(c))
        cyNow["friends"] = .toMany([])
        _ = try store.save(DataStoreSaveChangesRequest(updated: [cyNow]))
        _ = try store.save(DataStoreSaveChangesRequest(deleted: [try #require(try store.snapshot(b))]))
        try store.close()
        let reopened = try home.open()
        #expect(try reopened.snapshot(a)?["friends"]?.referencedIdentifiers == [], "both friendships are gone")
        #expect(try reopened.snapshot(c)?["friends"]?.referencedIdentifiers == [])
        #expect(try reopened.all("Person").count == 2)
    }
}
