import CoreDataSQLiteStore
import Foundation
import Snapshot
import Testing

/// Programs the random run shrank, kept as tests: each is the minimal reproduction of a
/// disagreement, with what the right answer is.
@Suite struct DifferentialRegressionTests {
    static func id(_ entity: String, _ number: Int) -> PersistentIdentifier { Logical.id(entity, number) }

    /// An insert of `entity` under logical number `number`, its `uid` set to it.
    static func insert(_ entity: String, _ number: Int, _ values: [String: PropertyValue]) -> DefaultSnapshot {
        var values = values
        values["uid"] = .int(number)
        return DefaultSnapshot(persistentIdentifier: id(entity, number), values: values)
    }

    static func post(_ number: Int, slug: String = "a", year: Int = 2020, _ values: [String: PropertyValue] = [:]) -> DefaultSnapshot {
        var all: [String: PropertyValue] = [
            "title": "t", "score": .int(0), "published": .bool(false), "date": .date(DiffGenerator.dates[0]), "slug": .string(slug), "year": .int(year),
        ]
        for (name, value) in values { all[name] = value }
        return insert("Post", number, all)
    }

    static func author(_ number: Int, _ handle: String, _ values: [String: PropertyValue] = [:]) -> DefaultSnapshot {
        var all: [String: PropertyValue] = ["handle": .string(handle), "age": .int(1)]
        for (name, value) in values { all[name] = value }
        return insert("Author", number, all)
    }

    /// Runs `steps` on both stores; the disagreement, if any, and the state they agree on.
    static func replay(_ steps: [Step]) throws -> (disagreement: Disagreement?, state: [PersistentIdentifier: DefaultSnapshot]) {
        let run = try DiffRun()
        defer { run.close() }
        for (i, step) in steps.enumerated() {
            if let disagreement = run.execute(step, index: i) { return (disagreement, run.current) }
        }
        return (nil, run.current)
    }

    // MARK: Fixed in the Core Data-shaped SQLite store

    @Test func deletingTheTargetOfAToOneWithoutInverseClearsTheReference() throws {
        let (disagreement, state) = try Self.replay([
            .save(SaveStep(inserted: [Self.insert("Comment", 2, ["text": "Ab", "votes": .int(-2)])])),
            .save(SaveStep(inserted: [Self.insert("Comment", 6, ["text": "a", "votes": .int(2), "replyTo": .toOne(Self.id("Comment", 2))])])),
            .save(SaveStep(deleted: [Self.id("Comment", 2)])),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
        #expect(state[Self.id("Comment", 6)] != nil)
        #expect(state[Self.id("Comment", 6)]?.values["replyTo"] == nil)
    }

    @Test func anUpdateMayTakeTheUniqueValueOfAnObjectTheSameSaveDeletes() throws {
        let (disagreement, state) = try Self.replay([
            .save(SaveStep(inserted: [Self.author(1, "dée", ["posts": .toMany([])])])),
            .save(SaveStep(inserted: [Self.author(2, "Ann")])),
            .save(SaveStep(updated: [.init(id: Self.id("Author", 1), values: ["handle": "Ann"])], deleted: [Self.id("Author", 2)])),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
        #expect(state[Self.id("Author", 1)]?.values["handle"] == "Ann")
        #expect(state[Self.id("Author", 2)] == nil)
    }

    @Test func twoUpdatesMaySwapUniqueValues() throws {
        let (disagreement, state) = try Self.replay([
            .save(SaveStep(inserted: [Self.author(1, "ann"), Self.author(2, "bob")])),
            .save(SaveStep(updated: [
                .init(id: Self.id("Author", 1), values: ["handle": "bob"]), .init(id: Self.id("Author", 2), values: ["handle": "ann"]),
            ])),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
        #expect(state[Self.id("Author", 1)]?.values["handle"] == "bob")
        #expect(state[Self.id("Author", 2)]?.values["handle"] == "ann")
    }

    @Test func theToManySideThatAddsATargetWinsOverTheOneThatDropsIt() throws {
        let (disagreement, state) = try Self.replay([
            .save(SaveStep(inserted: [Self.post(3), Self.author(4, "ann", ["posts": .toMany([Self.id("Post", 3)])])])),
            .save(SaveStep(
                inserted: [Self.author(11, "cy", ["posts": .toMany([Self.id("Post", 3)])])],
                updated: [.init(id: Self.id("Author", 4), values: ["posts": .toMany([])])])),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
        #expect(state[Self.id("Post", 3)]?.values["author"] == .toOne(Self.id("Author", 11)))
        #expect(state[Self.id("Author", 4)]?.values["posts"] == .toMany([]))
    }

    @Test func anInsertOfASubEntityWithAStoredParentsUniqueValueIsRefusedNotUpserted() throws {
        let (disagreement, state) = try Self.replay([
            .save(SaveStep(inserted: [Self.insert("Tag", 1, ["name": "blue"])])),
            .save(SaveStep(inserted: [Self.insert("Category", 2, ["name": "blue", "rank": .int(1)])])),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
        #expect(state[Self.id("Category", 2)] == nil)
        #expect(state[Self.id("Tag", 1)]?.values["rank"] == nil)
        #expect(state[Self.id("Tag", 1)]?.values["uid"] == .int(1))
    }

    @Test func aSQLiteUniquenessRefusalNamesTheRuleAndBothObjectsAndChangesNothing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("walstore-diff-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try CoreDataSQLiteStore(CoreDataSQLiteConfiguration(name: "Diff", schema: DiffSchema.schema, directory: directory))
        defer { store.close() }
        func post(_ slug: String) -> DefaultSnapshot {
            DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Post"), values: [
                "uid": .int(0), "title": "t", "score": .int(0), "published": .bool(false), "date": .date(DiffGenerator.dates[0]),
                "slug": .string(slug), "year": .int(2020),
            ])
        }
        let (a, b) = (post("a"), post("b"))
        let saved = try store.save(DataStoreSaveChangesRequest(inserted: [a, b]))
        let (first, second) = (saved.remappedIdentifiers[a.persistentIdentifier]!, saved.remappedIdentifiers[b.persistentIdentifier]!)
        var moved = post("b")
        moved.persistentIdentifier = first
        do {
            _ = try store.save(DataStoreSaveChangesRequest(updated: [moved]))
            Issue.record("an update onto another post's slug and year was saved")
        } catch let error as DataStoreError {
            #expect(error.code == .uniqueness)
            #expect(error.entityName == "Post")
            #expect(error.constraint == ["slug", "year"])
            #expect(error.identifier == first)
            #expect(error.relatedIdentifiers == [second])
        }
        let slugs = try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Post", sortBy: [FetchSortDescriptor("slug")])))
            .fetchedSnapshots.map { $0.values["slug"] }
        #expect(slugs == [.string("a"), .string("b")])
    }

    /// Seed 1: the update of the stored Category moves "green" away, so the Tag insert of the
    /// same save is a new object (rule: an update that moves a unique value away frees it for
    /// an insert of the same request); the SQLite store refused it as an upsert across
    /// entities before looking at the update.
    @Test func anUpdateOfASubEntityMovingAUniqueValueAwayFreesItForAnInsertOfTheParent() throws {
        let (disagreement, state) = try Self.replay([
            .save(SaveStep(inserted: [Self.insert("Category", 1, ["name": "green", "rank": .int(0)])])),
            .save(SaveStep(
                inserted: [Self.insert("Tag", 2, ["name": "green"])],
                updated: [.init(id: Self.id("Category", 1), values: ["name": "é"])])),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
        #expect(state[Self.id("Category", 1)]?.values["name"] == "é")
        #expect(state[Self.id("Tag", 2)]?.values["name"] == "green")
    }

    /// Seed 52 (`twice`): a deny rule counts the targets the save leaves, so deleting a post
    /// and its only comment in one save is allowed; the SQLite store checked the rule before the
    /// comment's own delete had run.
    @Test func aDenyRuleAllowsADeleteWhoseTargetsTheSameSaveDeletes() throws {
        let (disagreement, state) = try Self.replay([
            .save(SaveStep(inserted: [Self.post(21)])),
            .save(SaveStep(inserted: [Self.insert("Comment", 52, ["post": .toOne(Self.id("Post", 21)), "text": "b", "votes": .int(2)])])),
            .save(SaveStep(deleted: [Self.id("Post", 21), Self.id("Comment", 52)])),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
        #expect(state.isEmpty)
    }

    /// Seed 140 (`twice`): an insert referring to an object a cascade of the same save deletes
    /// is refused (danglingReference); the SQLite store linked the tag, then let the cascade
    /// drop the link.
    @Test func anInsertReferringToAnObjectACascadeOfTheSaveDeletesIsRefused() throws {
        let (disagreement, state) = try Self.replay([
            .save(SaveStep(inserted: [Self.post(5)])),
            .save(SaveStep(inserted: [Self.author(50, "ae\u{301}", ["posts": .toMany([Self.id("Post", 5)])])])),
            .save(SaveStep(inserted: [Self.insert("Tag", 62, ["name": "\u{e9}", "posts": .toMany([Self.id("Post", 5)])])], deleted: [Self.id("Author", 50)])),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
        #expect(state[Self.id("Author", 50)] != nil)
        #expect(state[Self.id("Tag", 62)] == nil)
    }

    /// `combining`: plain string operations match by `Character`, as the evaluator does: "e"
    /// is not in "ae\u{301}" (its last `Character` is "é"), and "\u{e9}" is, by canonical
    /// equivalence; SQLite's `instr` and `substr` compare code points.
    @Test func plainStringOperationsMatchByCharacter() throws {
        var steps: [Step] = [.save(SaveStep(inserted: [Self.author(1, "ae\u{301}"), Self.author(2, "ab"), Self.author(3, "\u{e9}b")]))]
        for needle in ["e", "\u{e9}", "e\u{301}", "a", "b", "ab"] {
            for operation in [FetchPredicate.StringOperation.contains, .beginsWith, .endsWith] {
                steps.append(.fetch(FetchStep(kind: .fetchIdentifiers, descriptor: FetchDescriptor(
                    entityName: "Author", predicate: .string(path: "handle", operation, needle: needle, options: []), sortBy: [FetchSortDescriptor("uid")]))))
            }
        }
        let (disagreement, _) = try Self.replay(steps)
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
    }

    /// An insert never merges into an object the save deletes, by a cascade either: the post
    /// the author's delete cascades to is deleted, and the insert with its slug and year is a
    /// new post.
    @Test func anInsertDoesNotUpsertIntoAnObjectACascadeOfTheSaveDeletes() throws {
        let (disagreement, state) = try Self.replay([
            .save(SaveStep(inserted: [Self.author(1, "ann"), Self.post(2, slug: "a", ["author": .toOne(Self.id("Author", 1))])])),
            .save(SaveStep(inserted: [Self.post(3, slug: "a", ["title": "new"])], deleted: [Self.id("Author", 1)])),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
        #expect(state[Self.id("Post", 2)] == nil)
        #expect(state[Self.id("Post", 3)]?.values["title"] == "new")
    }

    // MARK: Shapes both stores now agree on (once known disagreements)

    @Test
    func aComparisonOfAStringWithAnIntIsATypeMismatchWhateverTheData() throws {
        let (disagreement, _) = try Self.replay([
            .fetch(FetchStep(kind: .fetch, descriptor: FetchDescriptor(
                entityName: "Comment", predicate: .compare(path: "post.author.handle", .lessOrEqual, value: .int(1)),
                sortBy: [FetchSortDescriptor("post.published"), FetchSortDescriptor("uid")], fetchLimit: 3, fetchOffset: 1))),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
    }

    @Test
    func aSortByAToManyKeyPathIsRefused() throws {
        let (disagreement, _) = try Self.replay([
            .fetch(FetchStep(kind: .fetchIdentifiers, descriptor: FetchDescriptor(
                entityName: "Tag", sortBy: [FetchSortDescriptor("posts"), FetchSortDescriptor("uid")]))),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
    }

    @Test
    func stringsWithCombiningMarksSortByTheirNFCBytes() throws {
        let (disagreement, _) = try Self.replay([
            .save(SaveStep(inserted: [Self.author(6, "bob"), Self.author(8, "E\u{301}"), Self.author(10, "e\u{301}")])),
            .fetch(FetchStep(kind: .fetchIdentifiers, descriptor: FetchDescriptor(
                entityName: "Author", sortBy: [FetchSortDescriptor("handle", order: .reverse), FetchSortDescriptor("uid")]))),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
    }

    @Test
    func anUpsertUnitesTheStoredAndTheInsertedLinks() throws {
        let (disagreement, state) = try Self.replay([
            .save(SaveStep(inserted: [Self.post(1, slug: "a"), Self.post(2, slug: "b")])),
            .save(SaveStep(inserted: [Self.insert("Tag", 3, ["name": "blue", "colour": "red", "posts": .toMany([Self.id("Post", 1)])])])),
            .save(SaveStep(inserted: [Self.insert("Tag", 4, ["name": "blue", "posts": .toMany([Self.id("Post", 2)])])])),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
        #expect(state[Self.id("Tag", 3)]?.values["posts"] == .toMany([Self.id("Post", 1), Self.id("Post", 2)]))
    }

    @Test
    func aCascadeSkipsAChildTheSameSaveMovesAway() throws {
        let (disagreement, state) = try Self.replay([
            .save(SaveStep(inserted: [Self.insert("Review", 9, ["text": "", "votes": .int(-2), "stars": .int(-1)]), Self.author(7, "dée")])),
            .save(SaveStep(inserted: [Self.post(13, ["author": .toOne(Self.id("Author", 7)), "comments": .toMany([Self.id("Review", 9)])])])),
            .save(SaveStep(inserted: [Self.author(23, "cy", ["posts": .toMany([Self.id("Post", 13)])])], deleted: [Self.id("Author", 7)])),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
        #expect(state[Self.id("Post", 13)]?.values["author"] == .toOne(Self.id("Author", 23)))
        #expect(state[Self.id("Author", 7)] == nil)
    }

    @Test
    func anUpdateReferringToAnObjectTheSaveDeletesIsRefused() throws {
        let (disagreement, state) = try Self.replay([
            .save(SaveStep(inserted: [Self.author(2, "cy"), Self.insert("Review", 3, ["text": "x y", "votes": .int(3), "stars": .int(1)])])),
            .save(SaveStep(updated: [.init(id: Self.id("Review", 3), values: ["reviewer": .toOne(Self.id("Author", 2))])])),
            .save(SaveStep(updated: [.init(id: Self.id("Review", 3), values: ["votes": .int(-2)])], deleted: [Self.id("Author", 2)])),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
        #expect(state[Self.id("Author", 2)] != nil)
        #expect(state[Self.id("Review", 3)]?.values["votes"] == .int(3))
    }

    @Test
    func twoInsertsWithOneUniqueValueAreRefused() throws {
        let (disagreement, state) = try Self.replay([
            .save(SaveStep(inserted: [Self.post(3, slug: "c")])),
            .save(SaveStep(inserted: [
                Self.post(21, slug: "b", year: 2021, ["related": .toMany([Self.id("Post", 3)])]), Self.post(22, slug: "b", year: 2021),
            ])),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
        #expect(state.keys.sorted() == [Self.id("Post", 3)])
    }

    @Test
    func anUpdateThatMovesAUniqueValueAwayFreesItForAnInsert() throws {
        let (disagreement, state) = try Self.replay([
            .save(SaveStep(inserted: [Self.insert("Category", 18, ["colour": "blue", "name": "green", "rank": .int(-1)])])),
            .save(SaveStep(
                inserted: [Self.insert("Category", 34, ["colour": "blue", "name": "green", "rank": .int(1)])],
                updated: [.init(id: Self.id("Category", 18), values: ["name": "blue"])])),
        ])
        #expect(disagreement == nil, "\(disagreement.map(String.init(describing:)) ?? "")")
        #expect(state[Self.id("Category", 18)]?.values["name"] == "blue")
        #expect(state[Self.id("Category", 34)]?.values["name"] == "green")
    }

    // MARK: The harness itself

    /// A side that miscounts, for checking that the harness finds and shrinks a disagreement.
    final class Miscounting: DiffSide {
        let inner: any DiffSide
        init(_ inner: any DiffSide) { self.inner = inner }
        var name: String { "miscounting " + inner.name }
        func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> { try inner.save(request) }
        func fetch(_ request: DataStoreFetchRequest) throws -> DataStoreFetchResult<DefaultSnapshot> { try inner.fetch(request) }
        func fetchCount(_ request: DataStoreFetchRequest) throws -> Int {
            let count = try inner.fetchCount(request)
            return count >= 2 ? count + 1 : count
        }
        func fetchIdentifiers(_ request: DataStoreFetchRequest) throws -> [PersistentIdentifier] { try inner.fetchIdentifiers(request) }
        func delete(_ request: DataStoreBatchDeleteRequest) throws { try inner.delete(request) }
        func reopen() throws { try inner.reopen() }
        func close() { inner.close() }
    }

    @Test func aPlantedMiscountIsFoundAndShrunkToAFewSteps() throws {
        let tamper: (any DiffSide) -> any DiffSide = { Miscounting($0) }
        var failure: DiffFailure?
        for seed in UInt64(1)...UInt64(40) where failure == nil {
            failure = try Differential.explore(seed: seed, steps: 60, shapes: [], tamper: tamper)
        }
        let found = try #require(failure)
        #expect(found.disagreement.signature == "fetchCount: ok vs ok")
        var shrinker = DiffShrinker(deadline: Date().addingTimeInterval(120)) { try DiffRun.replay($0, tamper: tamper) }
        let (shrunk, disagreement) = shrinker.shrink(found.program, failure: found.disagreement)
        #expect(disagreement.signature == found.disagreement.signature)
        // Two objects saved (in one save or two), then the count.
        #expect(shrunk.count <= 3, "\(Differential.listing(shrunk))")
        if case .fetch(let fetch)? = shrunk.last { #expect(fetch.kind == .fetchCount) } else { Issue.record("the last step is not the count") }
        #expect(try DiffRun.replay(shrunk, tamper: tamper)?.signature == found.disagreement.signature)
        #expect(try DiffRun.replay(shrunk) == nil)
    }
}
