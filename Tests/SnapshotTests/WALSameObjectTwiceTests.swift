import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// One save request that names an object twice — the same identifier in two places, the same
/// unique value on two objects, a reference to an object the same request deletes — for every
/// pair of insert, update and delete: refused whole (typed error naming the rule and the
/// objects, files byte-identical) or applied by the rule, with the state it leaves checked.
@Suite struct WALSameObjectTwiceTests {
    /// The stored objects every case starts from.
    ///
    /// Blog: posts P1 and P2, tag T1 "swift" on both, tag T2 "news" on none, attachment A of P1.
    /// Rules: parent O "Ann" with kids K1 (Bo A) and K2 (Cy A) (cascade), parent O2 "Ben"
    /// without kids, guarded by G (deny).
    struct World: @unchecked Sendable {  // used by one test at a time, on its thread
        let store: WALDataStore
        let ids: [String: PersistentIdentifier]
        subscript(_ name: String) -> PersistentIdentifier { ids[name]! }
        func snapshot(_ name: String) throws -> DefaultSnapshot { try #require(try store.snapshot(self[name])) }
        func names(_ entity: String, _ key: String = "name") throws -> [String] {
            try store.all(entity).compactMap { if case .string(let s)? = $0.values[key] { s } else { nil } }.sorted()
        }
    }

    enum Model: Sendable { case blog, rules }

    /// What the case expects of the request it makes.
    enum Outcome {
        /// Refused with `code`, naming `identifier`, `related`, `property` and `constraint`
        /// (each `nil` when not checked).
        case refused(
            DataStoreError.Code, identifier: PersistentIdentifier?, related: [PersistentIdentifier]? = nil,
            property: String? = nil, constraint: [String]? = nil)
        /// Applied: `check` looks at the result and the store.
        case applied((DataStoreSaveChangesResult<DefaultSnapshot>, World) throws -> Void)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let model: Model
        let make: @Sendable (World) throws -> (DataStoreSaveChangesRequest<DefaultSnapshot>, Outcome)
        var testDescription: String { name }
        init(
            _ name: String, _ model: Model = .blog,
            _ make: @escaping @Sendable (World) throws -> (DataStoreSaveChangesRequest<DefaultSnapshot>, Outcome)
        ) {
            self.name = name
            self.model = model
            self.make = make
        }
    }

    static func tag(_ w: World, _ name: String) throws -> DefaultSnapshot { try w.snapshot(name) }
    static func make(_ entity: String, _ values: [String: PropertyValue]) -> DefaultSnapshot { RulesModel.make(entity, values) }

    static let cases: [Case] = [
        // MARK: The same identifier twice
        Case("one temporary identifier on two inserts is refused") { _ in
            let a = BlogModel.tag(name: "a")
            let b = DefaultSnapshot(persistentIdentifier: a.persistentIdentifier, values: ["name": "b"])
            return (DataStoreSaveChangesRequest(inserted: [a, b]), .refused(.conflictingChanges, identifier: a.persistentIdentifier))
        },
        Case("one identifier twice among the updated is refused") { w in
            var a = try w.snapshot("T2"), b = try w.snapshot("T2")
            a["colour"] = "red"
            b["colour"] = "blue"
            return (DataStoreSaveChangesRequest(updated: [a, b]), .refused(.conflictingChanges, identifier: w["T2"]))
        },
        Case("one identifier both updated and deleted is refused") { w in
            var t = try w.snapshot("T2")
            t["colour"] = "red"
            return (DataStoreSaveChangesRequest(updated: [t], deleted: [t]), .refused(.conflictingChanges, identifier: w["T2"]))
        },
        Case("one identifier twice among the deleted is one delete") { w in
            let t = try w.snapshot("T2")
            return (
                DataStoreSaveChangesRequest(deleted: [t, t]),
                .applied { _, w throws in
                    #expect(try w.names("Tag") == ["swift"])
                }
            )
        },
        Case("an insert's temporary identifier among the deleted is refused") { _ in
            let t = BlogModel.tag(name: "new")
            return (
                DataStoreSaveChangesRequest(inserted: [t], deleted: [t]), .refused(.temporaryIdentifierInUpdate, identifier: t.persistentIdentifier)
            )
        },

        // MARK: The same unique value on two objects
        Case("an insert never merges into the object the same save deletes") { w in
            let t = BlogModel.tag(name: "swift", posts: [w["P1"]])
            return (
                DataStoreSaveChangesRequest(inserted: [t], deleted: [try w.snapshot("T1")]),
                .applied { result, w throws in
                    let id = try #require(result.remappedIdentifiers[t.persistentIdentifier])
                    #expect(id != w["T1"], "the insert is a new object")
                    #expect(try w.store.snapshot(w["T1"]) == nil)
                    let new = try #require(try w.store.snapshot(id))
                    #expect(new["name"] == "swift" && new["posts"] == .toMany([w["P1"]]))
                    #expect(try w.snapshot("P1")["tags"] == .toMany([id]))
                    #expect(try w.snapshot("P2")["tags"] == .toMany([]))
                }
            )
        },
        Case("two inserts with one unique value are refused naming both") { _ in
            let a = BlogModel.tag(name: "dup"), b = BlogModel.tag(name: "dup", colour: "red")
            return (
                DataStoreSaveChangesRequest(inserted: [a, b]),
                .refused(.uniqueness, identifier: b.persistentIdentifier, related: [a.persistentIdentifier], property: "name", constraint: ["name"])
            )
        },
        Case("two inserts upserting one stored object are refused naming both") { _ in
            let a = BlogModel.tag(name: "swift"), b = BlogModel.tag(name: "swift")
            return (
                DataStoreSaveChangesRequest(inserted: [a, b]),
                .refused(.uniqueness, identifier: b.persistentIdentifier, related: [a.persistentIdentifier], property: "name", constraint: ["name"])
            )
        },
        Case("an insert matching an object the same save updates is refused naming both") { w in
            var t1 = try w.snapshot("T1")
            t1["colour"] = "red"
            let t = BlogModel.tag(name: "swift")
            return (
                DataStoreSaveChangesRequest(inserted: [t], updated: [t1]),
                .refused(.conflictingChanges, identifier: t.persistentIdentifier, related: [w["T1"]], property: "name", constraint: ["name"])
            )
        },
        Case("an insert matching the value an update moves to its object is refused") { w in
            var t2 = try w.snapshot("T2")
            t2["name"] = "mine"
            let t = BlogModel.tag(name: "mine")
            return (
                DataStoreSaveChangesRequest(inserted: [t], updated: [t2]),
                .refused(.conflictingChanges, identifier: t.persistentIdentifier, related: [w["T2"]], constraint: ["name"])
            )
        },
        Case("an update that moves a unique value away frees it for an insert") { w in
            var t1 = try w.snapshot("T1")
            t1["name"] = "swift-old"
            let t = BlogModel.tag(name: "swift")
            return (
                DataStoreSaveChangesRequest(inserted: [t], updated: [t1]),
                .applied { result, w throws in
                    #expect(result.remappedIdentifiers[t.persistentIdentifier] != w["T1"])
                    #expect(try w.names("Tag") == ["news", "swift", "swift-old"])
                    #expect(try w.snapshot("T1")["posts"]?.referencedIdentifiers.count == 2, "the renamed tag keeps its posts")
                }
            )
        },
        Case("an update taking a stored object's unique value is refused naming both") { w in
            var t2 = try w.snapshot("T2")
            t2["name"] = "swift"
            return (
                DataStoreSaveChangesRequest(updated: [t2]),
                .refused(.uniqueness, identifier: w["T2"], related: [w["T1"]], property: "name", constraint: ["name"])
            )
        },
        Case("two updates that swap unique values are applied") { w in
            var t1 = try w.snapshot("T1"), t2 = try w.snapshot("T2")
            t1["name"] = "news"
            t2["name"] = "swift"
            return (
                DataStoreSaveChangesRequest(updated: [t1, t2]),
                .applied { _, w throws in
                    #expect(try w.snapshot("T1")["name"] == "news" && w.snapshot("T2")["name"] == "swift")
                }
            )
        },
        Case("a delete frees its unique value for an update in the same save") { w in
            var t2 = try w.snapshot("T2")
            t2["name"] = "swift"
            return (
                DataStoreSaveChangesRequest(updated: [t2], deleted: [try w.snapshot("T1")]),
                .applied { _, w throws in
                    #expect(try w.store.all("Tag").map(\.persistentIdentifier) == [w["T2"]])
                    #expect(try w.snapshot("T2")["name"] == "swift")
                }
            )
        },
        Case("an upsert keeps the stored object's links and adds its own") { w in
            let p3 = BlogModel.post(title: "three", date: Date(timeIntervalSinceReferenceDate: 3))
            let t = BlogModel.tag(name: "swift", colour: "orange", posts: [p3.persistentIdentifier])
            return (
                DataStoreSaveChangesRequest(inserted: [t, p3]),
                .applied { result, w throws in
                    #expect(result.remappedIdentifiers[t.persistentIdentifier] == w["T1"])
                    let P3 = try #require(result.remappedIdentifiers[p3.persistentIdentifier])
                    let t1 = try w.snapshot("T1")
                    #expect(Set(t1["posts"]!.referencedIdentifiers) == [w["P1"], w["P2"], P3], "the union of stored and inserted links")
                    #expect(t1["colour"] == "orange", "the insert's attributes win")
                    #expect(result.snapshotsToReregister[w["T1"]] == t1)
                }
            )
        },
        Case("an upsert with no links removes none") { w in
            let t = BlogModel.tag(name: "swift")
            return (
                DataStoreSaveChangesRequest(inserted: [t]),
                .applied { result, w throws in
                    #expect(result.remappedIdentifiers[t.persistentIdentifier] == w["T1"])
                    #expect(Set(try w.snapshot("T1")["posts"]!.referencedIdentifiers) == [w["P1"], w["P2"]])
                    #expect(try w.snapshot("P1")["tags"] == .toMany([w["T1"]]))
                }
            )
        },
        Case("an upsert whose to-one is nil keeps the stored target", .rules) { w in
            let kid = Self.make("Kid", ["first": "Bo", "last": "A", "age": 9, "parent": .toOne(nil)])
            return (
                DataStoreSaveChangesRequest(inserted: [kid]),
                .applied { result, w throws in
                    #expect(result.remappedIdentifiers[kid.persistentIdentifier] == w["K1"])
                    let k1 = try w.snapshot("K1")
                    #expect(k1["parent"] == .toOne(w["O"]) && k1["age"] == 9)
                    #expect(Set(try w.snapshot("O")["kids"]!.referencedIdentifiers) == [w["K1"], w["K2"]])
                }
            )
        },
        Case("an upsert whose to-one names another target moves the object", .rules) { w in
            let kid = Self.make("Kid", ["first": "Bo", "last": "A", "parent": .toOne(w["O2"])])
            return (
                DataStoreSaveChangesRequest(inserted: [kid]),
                .applied { _, w throws in
                    #expect(try w.snapshot("K1")["parent"] == .toOne(w["O2"]))
                    #expect(try w.snapshot("O")["kids"] == .toMany([w["K2"]]))
                }
            )
        },
        Case("an upsert's one-to-many gains its children and keeps the stored ones", .rules) { w in
            let kid = Self.make("Kid", ["first": "Di", "last": "A"])
            let ann = Self.make("Parent", ["name": "Ann", "kids": .toMany([kid.persistentIdentifier])])
            return (
                DataStoreSaveChangesRequest(inserted: [ann, kid]),
                .applied { result, w throws in
                    #expect(result.remappedIdentifiers[ann.persistentIdentifier] == w["O"])
                    let di = try #require(result.remappedIdentifiers[kid.persistentIdentifier])
                    #expect(Set(try w.snapshot("O")["kids"]!.referencedIdentifiers) == [w["K1"], w["K2"], di])
                    #expect(try w.store.snapshot(di)?["parent"] == .toOne(w["O"]))
                }
            )
        },
        Case("an insert never merges into an object the same save's cascade deletes", .rules) { w in
            let kid = Self.make("Kid", ["first": "Bo", "last": "A"])
            return (
                DataStoreSaveChangesRequest(inserted: [kid], deleted: [try w.snapshot("O")]),
                .applied { result, w throws in
                    let id = try #require(result.remappedIdentifiers[kid.persistentIdentifier])
                    #expect(id != w["K1"])
                    #expect(try w.store.all("Kid").map(\.persistentIdentifier) == [id])
                    #expect(try w.store.snapshot(id)?["parent"] == .toOne(nil))
                }
            )
        },

        // MARK: A reference to an object the same request deletes
        Case("an insert referring to an object the same save deletes is refused and writes no asset") { w in
            let a = BlogModel.attachment(imageData: Data(repeating: 7, count: 10_000), post: w["P2"])
            return (
                DataStoreSaveChangesRequest(inserted: [a], deleted: [try w.snapshot("P2")]),
                .refused(.danglingReference, identifier: a.persistentIdentifier, related: [w["P2"]], property: "post")
            )
        },
        Case("an insert's to-many naming an object the same save deletes is refused") { w in
            let p = BlogModel.post(title: "new", date: .distantPast, tags: [w["T2"]])
            return (
                DataStoreSaveChangesRequest(inserted: [p], deleted: [try w.snapshot("T2")]),
                .refused(.danglingReference, identifier: p.persistentIdentifier, related: [w["T2"]], property: "tags")
            )
        },
        Case("an update referring to an object the same save deletes is refused") { w in
            var p2 = try w.snapshot("P2")
            p2["tags"] = .toMany([w["T1"], w["T2"]])
            return (
                DataStoreSaveChangesRequest(updated: [p2], deleted: [try w.snapshot("T2")]),
                .refused(.danglingReference, identifier: w["P2"], related: [w["T2"]], property: "tags")
            )
        },
        Case("a cascade spares an attachment the same save moves to another post") { w in
            var a = try w.snapshot("A")
            a["post"] = .toOne(w["P2"])
            return (
                DataStoreSaveChangesRequest(updated: [a], deleted: [try w.snapshot("P1")]),
                .applied { _, w throws in
                    #expect(try w.snapshot("A")["post"] == .toOne(w["P2"]), "moved away from the deleted post, the attachment is not cascaded")
                }
            )
        },
        Case("an insert into a parent the same save deletes is refused", .rules) { w in
            let kid = Self.make("Kid", ["first": "Di", "last": "A", "parent": .toOne(w["O"])])
            return (
                DataStoreSaveChangesRequest(inserted: [kid], deleted: [try w.snapshot("O")]),
                .refused(.danglingReference, identifier: kid.persistentIdentifier, related: [w["O"]], property: "parent")
            )
        },
        Case("an update of an object the same save's cascade deletes is refused naming both", .rules) { w in
            // K2 stays O's, so O's cascade deletes it, and the update says it stays.
            let k2 = DefaultSnapshot(persistentIdentifier: w["K2"], values: ["age": 4])
            return (
                DataStoreSaveChangesRequest(updated: [k2], deleted: [try w.snapshot("O")]),
                .refused(.conflictingChanges, identifier: w["K2"], related: [w["O"]])
            )
        },

        // MARK: Delete rules read what the request leaves
        Case("a cascade spares a child the same save detaches", .rules) { w in
            var k1 = try w.snapshot("K1")
            k1["parent"] = .toOne(nil)
            return (
                DataStoreSaveChangesRequest(updated: [k1], deleted: [try w.snapshot("O")]),
                .applied { _, w throws in
                    #expect(try w.store.all("Kid").map(\.persistentIdentifier) == [w["K1"]])
                    #expect(try w.snapshot("K1")["parent"] == .toOne(nil))
                }
            )
        },
        Case("a cascade spares a child the same save moves, both sides stated", .rules) { w in
            var k1 = try w.snapshot("K1"), o2 = try w.snapshot("O2")
            k1["parent"] = .toOne(w["O2"])
            o2["kids"] = .toMany([w["K1"]])
            return (
                DataStoreSaveChangesRequest(updated: [k1, o2], deleted: [try w.snapshot("O")]),
                .applied { _, w throws in
                    #expect(try w.store.all("Kid").map(\.persistentIdentifier) == [w["K1"]])
                    #expect(try w.snapshot("O2")["kids"] == .toMany([w["K1"]]))
                }
            )
        },
        Case("a cascade spares a child the same save moves from the to-many side", .rules) { w in
            var o2 = try w.snapshot("O2")
            o2["kids"] = .toMany([w["K1"]])
            return (
                DataStoreSaveChangesRequest(updated: [o2], deleted: [try w.snapshot("O")]),
                .applied { _, w throws in
                    #expect(try w.snapshot("K1")["parent"] == .toOne(w["O2"]))
                    #expect(try w.store.all("Kid").count == 1)
                }
            )
        },
        Case("a deny rule counts the targets the request leaves", .rules) { w in
            var g = try w.snapshot("G")
            g["ward"] = .toOne(nil)
            return (
                DataStoreSaveChangesRequest(updated: [g], deleted: [try w.snapshot("O2")]),
                .applied { _, w throws in
                    #expect(try w.names("Parent") == ["Ann"])
                    #expect(try w.snapshot("G")["ward"] == .toOne(nil))
                }
            )
        },
        Case("a deny rule with a target left refuses, naming both", .rules) { w in
            (
                DataStoreSaveChangesRequest(deleted: [try w.snapshot("O2")]),
                .refused(.deleteDenied, identifier: w["O2"], related: [w["G"]], property: "guardian")
            )
        },
    ]

    static func world(_ model: Model, _ home: WALHome) throws -> World {
        let store = try home.open()
        switch model {
        case .blog:
            let p1 = BlogModel.post(title: "one", date: Date(timeIntervalSinceReferenceDate: 1))
            let p2 = BlogModel.post(title: "two", date: Date(timeIntervalSinceReferenceDate: 2))
            let t1 = BlogModel.tag(name: "swift", posts: [p1.persistentIdentifier, p2.persistentIdentifier])
            let t2 = BlogModel.tag(name: "news")
            let a = BlogModel.attachment(imageData: Data([1, 2, 3]), post: p1.persistentIdentifier)
            let m = try store.save(DataStoreSaveChangesRequest(inserted: [p1, p2, t1, t2, a])).remappedIdentifiers
            return World(
                store: store,
                ids: [
                    "P1": m[p1.persistentIdentifier]!, "P2": m[p2.persistentIdentifier]!, "T1": m[t1.persistentIdentifier]!,
                    "T2": m[t2.persistentIdentifier]!, "A": m[a.persistentIdentifier]!,
                ])
        case .rules:
            let o = make("Parent", ["name": "Ann"]), o2 = make("Parent", ["name": "Ben"])
            let k1 = make("Kid", ["first": "Bo", "last": "A", "parent": .toOne(o.persistentIdentifier)])
            let k2 = make("Kid", ["first": "Cy", "last": "A", "parent": .toOne(o.persistentIdentifier)])
            let g = make("Guardian", ["name": "G", "ward": .toOne(o2.persistentIdentifier)])
            let m = try store.save(DataStoreSaveChangesRequest(inserted: [o, o2, k1, k2, g])).remappedIdentifiers
            return World(
                store: store,
                ids: [
                    "O": m[o.persistentIdentifier]!, "O2": m[o2.persistentIdentifier]!, "K1": m[k1.persistentIdentifier]!,
                    "K2": m[k2.persistentIdentifier]!, "G": m[g.persistentIdentifier]!,
                ])
        }
    }

    static func everything(_ w: World, _ model: Model) throws -> [[DefaultSnapshot]] {
        let entities = model == .blog ? ["Post", "Tag", "Attachment"] : ["Parent", "Kid", "Guardian"]
        return try entities.map { try w.store.all($0) }
    }

    @Test(arguments: cases) func aRequestNamingAnObjectTwiceIsRefusedOrAppliedByItsRule(_ c: Case) throws {
        let home = WALHome(c.model == .blog ? BlogModel.schema : RulesModel.schema)
        defer { home.temporary.remove() }
        let w = try Self.world(c.model, home)
        let (request, outcome) = try c.make(w)
        switch outcome {
        case .refused(let code, let identifier, let related, let property, let constraint):
            let files = try home.files()
            let contents = try Self.everything(w, c.model)
            do {
                _ = try w.store.save(request)
                Issue.record("\(c.name): the save was accepted")
            } catch let error as DataStoreError {
                #expect(error.code == code, "\(error)")
                #expect(error.entityName != nil, "the error names the entity: \(error)")
                if let identifier { #expect(error.identifier == identifier, "\(error)") }
                if let related { #expect(error.relatedIdentifiers == related, "\(error)") }
                if let property { #expect(error.propertyName == property, "\(error)") }
                if let constraint { #expect(error.constraint == constraint, "\(error)") }
            }
            #expect(try home.files() == files, "a refused save leaves the files byte-identical")
            #expect(try Self.everything(w, c.model) == contents)
        case .applied(let check):
            let result = try w.store.save(request)
            try check(result, w)
            // What the save left is what a reopened store reads.
            let before = try Self.everything(w, c.model)
            try w.store.close()
            let reopened = World(store: try home.open(), ids: w.ids)
            defer { try? reopened.store.close() }
            #expect(try Self.everything(reopened, c.model) == before)
        }
    }

    @Test func twoQueuedSavesInsertingOneUniqueValueAreWrittenOneAfterTheOther() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let a = BlogModel.tag(name: "dup", colour: "red"), b = BlogModel.tag(name: "dup", colour: "blue")
        let outcomes = try WALSharedCommitTests.saveQueued(
            store, [DataStoreSaveChangesRequest(inserted: [a]), DataStoreSaveChangesRequest(inserted: [b])], queued: 2)
        let first = try #require(try outcomes[0].get().remappedIdentifiers[a.persistentIdentifier])
        // The saves queue in either order; the later one upserts into the earlier one's tag.
        #expect(try outcomes[1].get().remappedIdentifiers[b.persistentIdentifier] == first)
        #expect(try store.all("Tag").map(\.persistentIdentifier) == [first])
        #expect(try ["red", "blue"].map(PropertyValue.string).contains(store.snapshot(first)?["colour"] ?? .null))
    }
}
