import Engine
import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// The same pairs as the store's (insert, update, delete × the same object, the same unique
/// value, a reference to the other), made through a context's pending changes: what the
/// context sends is either refused by the store's rule (every change stays pending, the files
/// byte-identical) or applied by it, and the context then holds what the store holds.
@Suite struct ContextSameObjectTwiceTests {
    /// The blog model plus `Owner` (unique `name`, `items` cascade) and `Item` (`owner`).
    static let schema: Schema = {
        do {
            return try Schema(
                BlogModel.schema.entities + [
                    .init(
                        "Owner", attributes: [.init("name", .string, options: .unique)],
                        relationships: [.init("items", destination: "Item", .toMany, inverse: "owner", deleteRule: .cascade)]),
                    .init("Item", attributes: [.init("title", .string)], relationships: [.init("owner", destination: "Owner", inverse: "items")]),
                ])
        } catch {
            preconditionFailure("\(error)")
        }
    }()

    /// A container of one store holding posts P1 and P2, tag T1 "swift" on both, tag T2
    /// "news", owners O (items I1, I2) and O2 (no items); and a fresh context on it.
    struct World {
        let temporary = TemporaryDirectory("walstore-context-twice")
        var path: String { temporary.path + "/main" }
        var container: StoreContainer!
        var context: StoreContext!
        var ids: [String: PersistentIdentifier] = [:]
        subscript(_ name: String) -> PersistentIdentifier { ids[name]! }

        init() throws {
            container = try StoreContainer(
                schema: ContextSameObjectTwiceTests.schema, configurations: [.init(name: "Main", entityNames: nil, path: path)])
            let seed = StoreContext(container)
            let p1 = try seed.insert(BlogModel.post(title: "one", date: Date(timeIntervalSinceReferenceDate: 1)))
            let p2 = try seed.insert(BlogModel.post(title: "two", date: Date(timeIntervalSinceReferenceDate: 2)))
            let t1 = try seed.insert(BlogModel.tag(name: "swift", posts: [p1, p2]))
            let t2 = try seed.insert(BlogModel.tag(name: "news"))
            let o = try seed.insert(Self.make("Owner", ["name": "Ann"]))
            let o2 = try seed.insert(Self.make("Owner", ["name": "Ben"]))
            let i1 = try seed.insert(Self.make("Item", ["title": "i1", "owner": .toOne(o)]))
            let i2 = try seed.insert(Self.make("Item", ["title": "i2", "owner": .toOne(o)]))
            let m = try seed.save()
            ids = ["P1": m[p1]!, "P2": m[p2]!, "T1": m[t1]!, "T2": m[t2]!, "O": m[o]!, "O2": m[o2]!, "I1": m[i1]!, "I2": m[i2]!]
            context = StoreContext(container)
        }

        static func make(_ entity: String, _ values: [String: PropertyValue]) -> DefaultSnapshot {
            DefaultSnapshot(persistentIdentifier: .temporary(entityName: entity), values: values)
        }

        /// The object as the store holds it (read through a new context).
        func stored(_ id: PersistentIdentifier) throws -> DefaultSnapshot? { try StoreContext(container).snapshot(for: id) }
        func stored(_ name: String) throws -> DefaultSnapshot { try #require(try stored(self[name])) }
        func all(_ entity: String) throws -> [PersistentIdentifier] {
            try container.fetchIdentifiers(Snapshot.FetchDescriptor(entityName: entity)).sorted()
        }

        /// Expects `context.save()` to be refused with `code` naming `identifier` (and `related`),
        /// the store's files unchanged and the context's changes still pending.
        func expectRefusal(
            _ code: DataStoreError.Code, identifier: PersistentIdentifier, related: [PersistentIdentifier]? = nil,
            sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            let files = try directoryFiles(path)
            let pending = (context.insertedIdentifiers, context.changedIdentifiers, context.deletedIdentifiers)
            do {
                try context.save()
                Issue.record("the save was accepted", sourceLocation: sourceLocation)
            } catch let error as DataStoreError {
                #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
                #expect(error.identifier == identifier, "\(error)", sourceLocation: sourceLocation)
                if let related { #expect(error.relatedIdentifiers == related, "\(error)", sourceLocation: sourceLocation) }
            }
            #expect(try directoryFiles(path) == files, "a refused save leaves the files byte-identical", sourceLocation: sourceLocation)
            #expect(
                context.insertedIdentifiers == pending.0 && context.changedIdentifiers == pending.1 && context.deletedIdentifiers == pending.2,
                "the changes stay pending", sourceLocation: sourceLocation)
        }
    }

    // MARK: The same object twice

    @Test func anInsertDeletedBeforeTheSaveIsNeverWritten() throws {
        let w = try World()
        defer { w.temporary.remove() }
        let t = try w.context.insert(BlogModel.tag(name: "brief"))
        try w.context.delete(t)
        #expect(try w.context.save().isEmpty)
        #expect(try w.all("Tag") == [w["T1"], w["T2"]].sorted())
    }

    @Test func anUpdateThenADeleteOfOneObjectDeletesIt() throws {
        let w = try World()
        defer { w.temporary.remove() }
        try w.context.update(w["T2"], ["colour": "red"])
        try w.context.delete(w["T2"])
        try w.context.save()
        #expect(try w.stored(w["T2"]) == nil)
        #expect(w.context.registeredSnapshot(for: w["T2"]) == nil)
    }

    @Test func anObjectDeletedThenUpdatedIsRefusedByTheContext() throws {
        let w = try World()
        defer { w.temporary.remove() }
        try w.context.delete(w["T2"])
        #expect { try w.context.update(w["T2"], ["colour": "red"]) } throws: { ($0 as? DataStoreError)?.code == .danglingReference }
    }

    // MARK: The same unique value twice

    @Test func aNewTagNamedAsOneDeletedInTheSameSaveIsANewObjectWithItsLinks() throws {
        let w = try World()
        defer { w.temporary.remove() }
        try w.context.delete(w["T1"])
        let t = try w.context.insert(BlogModel.tag(name: "swift", posts: [w["P1"]]))
        let id = try #require(try w.context.save()[t])
        #expect(id != w["T1"])
        #expect(try w.stored(w["T1"]) == nil)
        #expect(try w.stored(id)?["posts"] == .toMany([w["P1"]]))
        #expect(try w.stored("P1")["tags"] == .toMany([id]))
        #expect(try w.stored("P2")["tags"] == .toMany([]))
        #expect(w.context.registeredSnapshot(for: id)?["name"] == "swift")
    }

    @Test func twoNewTagsWithOneNameAreRefusedNamingBoth() throws {
        let w = try World()
        defer { w.temporary.remove() }
        let a = try w.context.insert(BlogModel.tag(name: "dup"))
        let b = try w.context.insert(BlogModel.tag(name: "dup"))
        try w.expectRefusal(.uniqueness, identifier: b, related: [a])
        // Dropping one lets the other through.
        try w.context.delete(b)
        let id = try #require(try w.context.save()[a])
        #expect(try w.stored(id)?["name"] == "dup")
    }

    @Test func aNewTagNamedAsAnUpdatedOneIsRefusedNamingBoth() throws {
        let w = try World()
        defer { w.temporary.remove() }
        try w.context.update(w["T2"], ["name": "fresh"])
        let t = try w.context.insert(BlogModel.tag(name: "fresh"))
        try w.expectRefusal(.conflictingChanges, identifier: t, related: [w["T2"]])
    }

    @Test func aNewTagTakesTheNameAnUpdateGivesUp() throws {
        let w = try World()
        defer { w.temporary.remove() }
        try w.context.update(w["T1"], ["name": "swift-old"])
        let t = try w.context.insert(BlogModel.tag(name: "swift"))
        let id = try #require(try w.context.save()[t])
        #expect(id != w["T1"])
        #expect(try w.stored("T1")["name"] == "swift-old")
        #expect(try w.stored("T1")["posts"]?.referencedIdentifiers.count == 2)
    }

    @Test func anUpsertingInsertKeepsTheStoredLinksAndTheContextRegistersThem() throws {
        let w = try World()
        defer { w.temporary.remove() }
        let t = try w.context.insert(BlogModel.tag(name: "swift", colour: "orange"))
        #expect(try w.context.save()[t] == w["T1"])
        let stored = try w.stored("T1")
        #expect(Set(stored["posts"]!.referencedIdentifiers) == [w["P1"], w["P2"]])
        #expect(stored["colour"] == "orange")
        #expect(w.context.registeredSnapshot(for: w["T1"]) == stored, "the context holds what the store holds")
    }

    // MARK: A reference to an object the same save deletes

    @Test func aNewObjectReferringToADeletedOneIsRefused() throws {
        let w = try World()
        defer { w.temporary.remove() }
        try w.context.delete(w["O2"])
        let item = try w.context.insert(World.make("Item", ["title": "late", "owner": .toOne(w["O2"])]))
        try w.expectRefusal(.danglingReference, identifier: item, related: [w["O2"]])
    }

    @Test func anUpdateReferringToAnObjectDeletedBeforeIsRefused() throws {
        let w = try World()
        defer { w.temporary.remove() }
        try w.context.delete(w["T2"])
        try w.context.update(w["P2"], ["tags": .toMany([w["T1"], w["T2"]])])
        try w.expectRefusal(.danglingReference, identifier: w["P2"], related: [w["T2"]])
    }

    @Test func anUpdateReferringToAnObjectDeletedAfterLosesTheReference() throws {
        let w = try World()
        defer { w.temporary.remove() }
        try w.context.update(w["P2"], ["tags": .toMany([w["T1"], w["T2"]])])
        try w.context.delete(w["T2"])
        try w.context.save()
        #expect(try w.stored("P2")["tags"] == .toMany([w["T1"]]))
        #expect(try w.stored(w["T2"]) == nil)
    }

    @Test func aNewObjectUnderAnOwnerDeletedLaterIsDiscardedWithIt() throws {
        let w = try World()
        defer { w.temporary.remove() }
        let item = try w.context.insert(World.make("Item", ["title": "new", "owner": .toOne(w["O2"])]))
        try w.context.delete(w["O2"])
        #expect(!w.context.insertedIdentifiers.contains(item), "the cascade discards the pending insert")
        try w.context.save()
        #expect(try w.stored(w["O2"]) == nil)
        #expect(try w.all("Item") == [w["I1"], w["I2"]].sorted())
    }

    // MARK: Delete rules read what the save leaves

    @Test func aCascadeSparesAnItemDetachedBeforeTheDelete() throws {
        let w = try World()
        defer { w.temporary.remove() }
        try w.context.update(w["I1"], ["owner": .toOne(nil)])
        try w.context.delete(w["O"])
        #expect(w.context.deletedIdentifiers == [w["O"], w["I2"]])
        try w.context.save()
        #expect(try w.all("Item") == [w["I1"]])
        #expect(try w.stored("I1")["owner"] == .toOne(nil))
    }

    @Test func aCascadeSparesAnItemMovedToAnotherOwnerFromEitherSide() throws {
        let w = try World()
        defer { w.temporary.remove() }
        try w.context.update(w["I1"], ["owner": .toOne(w["O2"])])
        try w.context.update(w["O2"], ["items": .toMany([w["I2"]])])
        try w.context.delete(w["O"])
        #expect(w.context.deletedIdentifiers == [w["O"]])
        try w.context.save()
        #expect(try w.all("Item") == [w["I1"], w["I2"]].sorted())
        #expect(Set(try w.stored("O2")["items"]!.referencedIdentifiers) == [w["I1"], w["I2"]])
        #expect(try w.stored("I2")["owner"] == .toOne(w["O2"]))
    }
}
