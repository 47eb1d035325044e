import Foundation
import Snapshot

/// A check of the contract that failed: which one, and what was wrong.
public struct ContractViolation: Error, CustomStringConvertible {
    /// The name of the check that failed.
    public var check: String
    /// What the store got wrong.
    public var message: String
    /// `contract check <name>: <message>`.
    public var description: String { "contract check \(check): \(message)" }
}

/// The checks every `DataStore` of this package must pass, run against a store made fresh
/// (and empty, on ``BlogModel/schema``) for each check, so any store can be plugged in.
///
/// Each check asserts what a correct store must return, computed here independently of the
/// evaluator from the data the check inserted; a failure throws a ``ContractViolation``.
///
/// To-many relationships are unordered, as SwiftData's are: a store may return their
/// identifiers in any order, so the checks compare snapshots with every to-many list sorted
/// (``normalized(_:)``). Everything else is compared exactly.
public struct DataStoreContract<Store: DataStoreBatching> where Store.SnapshotType == DefaultSnapshot {
    /// Makes a new, empty store on the blog model.
    public var makeStore: () throws -> Store

    /// A contract run on stores `makeStore` makes, one per check.
    public init(makeStore: @escaping () throws -> Store) { self.makeStore = makeStore }

    /// The names of the checks, for parameterised tests.
    public static var checkNames: [String] { checks.map(\.name) }

    /// Runs the check `name` on a fresh store.
    public func run(_ name: String) throws {
        guard let check = Self.checks.first(where: { $0.name == name }) else {
            throw ContractViolation(check: name, message: "no such check")
        }
        try check.body(Context(name: name, store: try makeStore()))
    }

    /// Runs every check, each on a fresh store.
    public func runAll() throws {
        for name in Self.checkNames { try run(name) }
    }

    struct Context {
        let name: String
        let store: Store

        func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
            if !condition { throw ContractViolation(check: name, message: message()) }
        }

        func expectError(_ code: DataStoreError.Code, _ what: String, _ body: () throws -> Void) throws {
            do {
                try body()
            } catch let error as DataStoreError {
                try expect(error.code == code, "\(what): expected \(code), got \(error)")
                return
            }
            throw ContractViolation(check: name, message: "\(what): expected \(code), nothing was thrown")
        }

        /// The store's answer, to-many lists sorted.
        func fetch(_ descriptor: FetchDescriptor) throws -> DataStoreFetchResult<DefaultSnapshot> {
            var result = try store.fetch(DataStoreFetchRequest(descriptor: descriptor))
            result.fetchedSnapshots = result.fetchedSnapshots.map(DataStoreContract.normalized)
            result.relatedSnapshots = result.relatedSnapshots.mapValues(DataStoreContract.normalized)
            return result
        }

        func all(_ entity: String) throws -> [DefaultSnapshot] { try fetch(FetchDescriptor(entityName: entity)).fetchedSnapshots }
    }

    /// A saved graph: two tags, posts with dates one day apart, one attachment per even post.
    struct Graph {
        var posts: [DefaultSnapshot] = []  // permanent, as saved
        var tags: [DefaultSnapshot] = []
        var attachments: [DefaultSnapshot] = []
        var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
        var temporaryPosts: [DefaultSnapshot] = []
        var temporaryTags: [DefaultSnapshot] = []
        var temporaryAttachments: [DefaultSnapshot] = []
    }

    static var titles: [String] { ["Swift news", "swift tips", "Cooking", "SWIFT on Linux", "Gardening", "Café Swift", "Rust", "Swifts (birds)"] }
    static var epoch: Date { Date(timeIntervalSinceReferenceDate: 700_000_000) }

    /// Inserts the graph in one save with temporary identifiers and returns it, remapped.
    static func saveGraph(_ context: Context) throws -> Graph {
        var g = Graph()
        var news = BlogModel.tag(name: "news", colour: "red")
        var howTo = BlogModel.tag(name: "how-to")
        for (i, title) in titles.enumerated() {
            let tags = i % 3 == 0 ? [news.persistentIdentifier] : (i % 3 == 1 ? [news.persistentIdentifier, howTo.persistentIdentifier] : [])
            var post = BlogModel.post(
                title: title, content: i % 2 == 0 ? "body \(i)" : nil, date: epoch.addingTimeInterval(Double(i % 5) * 86_400), tags: tags)
            if i % 2 == 0 {
                let attachment = BlogModel.attachment(imageData: Data([UInt8(i), 1, 2]), post: post.persistentIdentifier)
                post["attachments"] = .toMany([attachment.persistentIdentifier])
                g.temporaryAttachments.append(attachment)
            }
            if tags.contains(news.persistentIdentifier) {
                news["posts"] = .toMany(news["posts"]!.referencedIdentifiers + [post.persistentIdentifier])
            }
            if tags.contains(howTo.persistentIdentifier) {
                howTo["posts"] = .toMany(howTo["posts"]!.referencedIdentifiers + [post.persistentIdentifier])
            }
            g.temporaryPosts.append(post)
        }
        g.temporaryTags = [news, howTo]
        let result = try context.store.save(
            DataStoreSaveChangesRequest(inserted: g.temporaryTags + g.temporaryPosts + g.temporaryAttachments))
        g.remapped = result.remappedIdentifiers
        func saved(_ s: DefaultSnapshot) -> DefaultSnapshot {
            normalized(
                s.copy(
                    persistentIdentifier: result.remappedIdentifiers[s.persistentIdentifier] ?? s.persistentIdentifier,
                    remappedIdentifiers: result.remappedIdentifiers))
        }
        g.posts = g.temporaryPosts.map(saved)
        g.tags = g.temporaryTags.map(saved)
        g.attachments = g.temporaryAttachments.map(saved)
        return g
    }

    static func ids(_ snapshots: [DefaultSnapshot]) -> [PersistentIdentifier] { snapshots.map(\.persistentIdentifier) }

    /// `snapshot` with each to-many list sorted: the form the checks compare, since to-many
    /// relationships are unordered.
    public static func normalized(_ snapshot: DefaultSnapshot) -> DefaultSnapshot {
        DefaultSnapshot(
            persistentIdentifier: snapshot.persistentIdentifier,
            values: snapshot.values.mapValues { value in
                if case .toMany(let ids) = value { return .toMany(ids.sorted()) }
                return value
            })
    }

    static func title(_ s: DefaultSnapshot) -> String {
        if case .string(let t)? = s["title"] { return t }
        return ""
    }

    static func date(_ s: DefaultSnapshot) -> Date {
        if case .date(let d)? = s["date"] { return d }
        return .distantPast
    }

    struct Check {
        let name: String
        let body: (Context) throws -> Void
    }

    static var checks: [Check] {
        [
            Check(name: "insertGraphRemapsTemporaryIdentifiers") { c in
                let g = try saveGraph(c)
                let temporaries = ids(g.temporaryTags + g.temporaryPosts + g.temporaryAttachments)
                try c.expect(Set(g.remapped.keys) == Set(temporaries), "remappedIdentifiers must map every inserted temporary identifier")
                try c.expect(Set(g.remapped.values).count == temporaries.count, "permanent identifiers must be distinct")
                for (temporary, permanent) in g.remapped {
                    try c.expect(permanent.storeIdentifier == c.store.identifier, "\(permanent) must carry the store's identifier")
                    try c.expect(permanent.entityName == temporary.entityName, "\(permanent) must keep the entity name")
                }
                let stored = try c.all("Post") + c.all("Tag") + c.all("Attachment")
                try c.expect(Set(stored) == Set(g.posts + g.tags + g.attachments), "fetched objects must be the inserted ones, remapped")
                for snapshot in stored {
                    for id in [snapshot.persistentIdentifier] + snapshot.referencedIdentifiers {
                        try c.expect(!id.isTemporary, "\(snapshot.persistentIdentifier) still refers to the temporary \(id)")
                    }
                }
            },
            Check(name: "fetchWithPredicateSortLimitOffset") { c in
                let g = try saveGraph(c)
                let cutoff = epoch.addingTimeInterval(86_400)
                let predicate: FetchPredicate =
                    .attribute("title").contains("swift", options: .caseInsensitive) && .attribute("date") >= cutoff
                let expected = g.posts
                    .filter { title($0).lowercased().contains("swift") && date($0) >= cutoff }
                    .sorted { (date($0), title($0)) > (date($1), title($1)) }
                let sort = [FetchSortDescriptor("date", order: .reverse), FetchSortDescriptor("title", order: .reverse)]
                let every = try c.fetch(FetchDescriptor(entityName: "Post", predicate: predicate, sortBy: sort)).fetchedSnapshots
                try c.expect(every == expected, "predicate and sort: got \(every.map(title)), expected \(expected.map(title))")
                try c.expect(!expected.isEmpty, "the check's data must select something")
                for (offset, limit) in [(0, 1), (1, 2), (2, 10), (expected.count, 3), (0, 0)] {
                    let window = try c.fetch(
                        FetchDescriptor(entityName: "Post", predicate: predicate, sortBy: sort, fetchLimit: limit, fetchOffset: offset)
                    ).fetchedSnapshots
                    let want = Array(expected.dropFirst(offset).prefix(limit))
                    try c.expect(window == want, "offset \(offset) limit \(limit): got \(window.map(title)), expected \(want.map(title))")
                }
                let count = try c.store.fetchCount(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Post", predicate: predicate)))
                try c.expect(count == expected.count, "fetchCount \(count), expected \(expected.count)")
                let identifiers = try c.store.fetchIdentifiers(
                    DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Post", predicate: predicate, sortBy: sort)))
                try c.expect(identifiers == ids(expected), "fetchIdentifiers must list the fetch's objects in its order")
            },
            Check(name: "fetchThroughRelationships") { c in
                let g = try saveGraph(c)
                let swiftPosts = Set(ids(g.posts.filter { title($0).hasPrefix("Swift") }))
                let attachments = try c.fetch(FetchDescriptor(entityName: "Attachment", predicate: .attribute("post.title").beginsWith("Swift")))
                    .fetchedSnapshots
                let wantAttachments = g.attachments.filter { a in a["post"]!.referencedIdentifiers.contains(where: swiftPosts.contains) }
                try c.expect(Set(attachments) == Set(wantAttachments), "to-one path: got \(attachments.count), expected \(wantAttachments.count)")
                let newsID = g.tags[0].persistentIdentifier
                let tagged = try c.fetch(FetchDescriptor(entityName: "Post", predicate: .relationship("tags").any(.attribute("name") == "news")))
                    .fetchedSnapshots
                let wantTagged = g.posts.filter { $0["tags"]!.referencedIdentifiers.contains(newsID) }
                try c.expect(Set(tagged) == Set(wantTagged), "any of a to-many: got \(tagged.count), expected \(wantTagged.count)")
                let onlyNews = try c.fetch(FetchDescriptor(entityName: "Post", predicate: .relationship("tags").all(.attribute("name") == "news")))
                    .fetchedSnapshots
                let wantOnlyNews = g.posts.filter { $0["tags"]!.referencedIdentifiers.allSatisfy { $0 == newsID } }
                try c.expect(
                    Set(onlyNews) == Set(wantOnlyNews),
                    "all of a to-many (empty ones included): got \(onlyNews.count), expected \(wantOnlyNews.count)")
            },
            Check(name: "identifierMembership") { c in
                let g = try saveGraph(c)
                let some = Set(ids(g.posts).enumerated().filter { $0.offset % 3 == 1 }.map(\.element))
                let fetched = try c.fetch(FetchDescriptor(entityName: "Post", predicate: .identifier(in: some))).fetchedSnapshots
                try c.expect(Set(ids(fetched)) == some, "identifier membership must return exactly those objects")
            },
            Check(name: "updateAndDelete") { c in
                let g = try saveGraph(c)
                var changed = g.posts[1]
                changed["title"] = .string("Renamed")
                let before = try c.all("Post")
                _ = try c.store.save(DataStoreSaveChangesRequest(updated: [changed], deleted: [g.posts[2]]))
                let after = try c.all("Post")
                try c.expect(after.count == before.count - 1, "one post deleted: \(before.count) → \(after.count)")
                try c.expect(after.contains(changed), "the update must be stored")
                try c.expect(!ids(after).contains(g.posts[2].persistentIdentifier), "the deleted post must be gone")
            },
            Check(name: "propertiesToFetchAndPrefetch") { c in
                let g = try saveGraph(c)
                let result = try c.fetch(
                    FetchDescriptor(entityName: "Post", propertiesToFetch: ["title"], relationshipKeyPathsForPrefetching: ["tags"]))
                try c.expect(result.fetchedSnapshots.count == g.posts.count, "every post")
                try c.expect(result.fetchedSnapshots.allSatisfy { Array($0.values.keys) == ["title"] }, "only the title must be fetched")
                for tag in g.tags {
                    try c.expect(result.relatedSnapshots[tag.persistentIdentifier] == tag, "tag \(tag.persistentIdentifier) must be prefetched")
                }
            },
            Check(name: "eraseEmptiesTheStore") { c in
                _ = try saveGraph(c)
                try c.store.erase()
                try c.expect(try c.all("Post").isEmpty && c.all("Tag").isEmpty, "erase must leave nothing")
                _ = try saveGraph(c)
                try c.expect(try c.all("Post").count == titles.count, "the store must stay usable after erase")
            },
            Check(name: "batchDeleteByPredicate") { c in
                let g = try saveGraph(c)
                try c.store.delete(DataStoreBatchDeleteRequest(entityName: "Post", predicate: .attribute("content").isNil))
                let left = try c.all("Post")
                try c.expect(Set(left) == Set(g.posts.filter { $0["content"]!.isNull == false }), "only posts with content must be left")
            },
            Check(name: "oneRequestStatesEachObjectOnce") { c in
                let g = try saveGraph(c)
                let before = Set(try c.all("Post")), tags = Set(try c.all("Tag"))
                let a = BlogModel.tag(name: "a")
                try c.expectError(.conflictingChanges, "one temporary identifier on two inserts") {
                    _ = try c.store.save(
                        DataStoreSaveChangesRequest(inserted: [
                            a, DefaultSnapshot(persistentIdentifier: a.persistentIdentifier, values: ["name": "b"]),
                        ]))
                }
                var renamed = g.posts[0], other = g.posts[0]
                renamed["title"] = "one"
                other["title"] = "two"
                try c.expectError(.conflictingChanges, "one identifier twice among the updated") {
                    _ = try c.store.save(DataStoreSaveChangesRequest(updated: [renamed, other]))
                }
                try c.expectError(.conflictingChanges, "one identifier both updated and deleted") {
                    _ = try c.store.save(DataStoreSaveChangesRequest(updated: [renamed], deleted: [g.posts[0]]))
                }
                let attachment = BlogModel.attachment(imageData: Data([9]), post: g.posts[1].persistentIdentifier)
                try c.expectError(.danglingReference, "an insert referring to an object the same save deletes") {
                    _ = try c.store.save(DataStoreSaveChangesRequest(inserted: [attachment], deleted: [g.posts[1]]))
                }
                try c.expect(Set(try c.all("Post")) == before && Set(try c.all("Tag")) == tags, "refused saves must change nothing")
                // One identifier twice among the deleted is one delete.
                _ = try c.store.save(DataStoreSaveChangesRequest(deleted: [g.posts[2], g.posts[2]]))
                try c.expect(try c.all("Post").count == before.count - 1, "a post deleted twice in one save is deleted once")
                // An update states only what it changes; the rest is kept.
                _ = try c.store.save(
                    DataStoreSaveChangesRequest(updated: [
                        DefaultSnapshot(persistentIdentifier: g.posts[0].persistentIdentifier, values: ["title": "Only the title"])
                    ]))
                var expected = g.posts[0]
                expected["title"] = "Only the title"
                let stored = try c.fetch(FetchDescriptor(entityName: "Post", predicate: .identifier(in: [g.posts[0].persistentIdentifier])))
                    .fetchedSnapshots
                try c.expect(stored.map(normalized) == [normalized(expected)], "a partial update merges over the stored object: got \(stored)")
            },
            Check(name: "refusesBadRequestsAndChangesNothing") { c in
                let g = try saveGraph(c)
                let before = Set(try c.all("Post"))
                var temporary = g.temporaryPosts[0]
                temporary["title"] = "changed"
                try c.expectError(.temporaryIdentifierInUpdate, "a temporary identifier among the updated") {
                    _ = try c.store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "x")], updated: [temporary]))
                }
                let foreign = DefaultSnapshot(
                    persistentIdentifier: try .identifier(for: "another-store", entityName: "Post", primaryKey: UUID()), values: g.posts[0].values)
                try c.expectError(.foreignIdentifier, "an identifier of another store") {
                    _ = try c.store.save(DataStoreSaveChangesRequest(updated: [foreign]))
                }
                try c.expectError(.unknownEntity, "an insert of an unknown entity") {
                    _ = try c.store.save(
                        DataStoreSaveChangesRequest(inserted: [DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Comment"))]))
                }
                try c.expectError(.unknownEntity, "a fetch of an unknown entity") { _ = try c.fetch(FetchDescriptor(entityName: "Comment")) }
                try c.expectError(.invalidRequest, "a negative fetch limit") { _ = try c.fetch(FetchDescriptor(entityName: "Post", fetchLimit: -1)) }
                try c.expectError(.unknownProperty, "a predicate on an unknown property") {
                    _ = try c.fetch(FetchDescriptor(entityName: "Post", predicate: .attribute("author") == "me"))
                }
                try c.expect(Set(try c.all("Post")) == before && (try c.all("Tag")).count == 2, "refused saves must change nothing")
            },
        ]
    }
}
