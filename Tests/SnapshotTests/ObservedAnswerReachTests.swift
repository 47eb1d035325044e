import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Observed fetches against the writes whose effect on an answer reaches beyond the objects a
/// request names: links written at the other end of a relationship, delete rules, upserts and
/// batch deletes. After each write, the answer an observation holds equals a fresh fetch.
@Suite(.timeLimit(.minutes(10))) struct ObservedAnswerReachTests {
    /// Opens a store with a post "a" (tagged "news") holding one attachment.
    static func seeded(_ home: WALHome) throws -> (WALDataStore, post: PersistentIdentifier, tag: PersistentIdentifier) {
        let store = try home.open()
        let post = try store.insertPost("a")
        let tag = BlogModel.tag(name: "news", posts: [post])
        let attachment = BlogModel.attachment(imageData: Data([1]), post: post)
        let result = try store.save(DataStoreSaveChangesRequest(inserted: [tag, attachment]))
        return (store, post, result.remappedIdentifiers[tag.persistentIdentifier]!)
    }

    static let everyPost = FetchDescriptor(entityName: "Post", sortBy: [FetchSortDescriptor("title")])
    static let everyTag = FetchDescriptor(entityName: "Tag", sortBy: [FetchSortDescriptor("name")])
    static let everyAttachment = FetchDescriptor(entityName: "Attachment")

    /// Observes `descriptors`, runs `write`, and checks every observation holds a fresh fetch's answer.
    static func expectFollowed(_ store: WALDataStore, _ descriptors: [FetchDescriptor], _ comment: Comment, write: () throws -> Void) throws {
        let observations = try descriptors.map { try store.observe($0) }
        try write()
        for (descriptor, observation) in zip(descriptors, observations) {
            #expect(observation.newestAnswer == (try store.fetch(descriptor).fetchedSnapshots), comment)
            observation.cancel()
        }
    }

    @Test func linksWrittenAtTheOtherEndOfARelationshipChangeTheAnswersThatHoldThem() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let (store, post, tag) = try Self.seeded(home)
        let all = [Self.everyPost, Self.everyTag, Self.everyAttachment]
        try Self.expectFollowed(store, all, "a new tag listing the post") {
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "swift", posts: [post])]))
        }
        try Self.expectFollowed(store, all, "a new attachment of the post") {
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.attachment(imageData: Data([2]), post: post)]))
        }
        try Self.expectFollowed(store, all, "the tag's posts emptied") { try store.update(tag, ["posts": .toMany([])]) }
        try Self.expectFollowed(store, all, "a new post with the tag") {
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.post(title: "b", date: .distantPast, tags: [tag])]))
        }
        try store.close()
    }

    @Test func deleteRulesUpsertsAndBatchDeletesChangeTheAnswersTheyReach() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let (store, post, tag) = try Self.seeded(home)
        let all = [
            Self.everyPost, Self.everyTag, Self.everyAttachment,
            FetchDescriptor(entityName: "Tag", predicate: .attribute("colour") == "red"),
            FetchDescriptor(entityName: "Tag", predicate: .relationship("posts").any(.attribute("title") == "a")),
        ]
        try Self.expectFollowed(store, all, "an upsert merging into the stored tag") {
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "news", colour: "red")]))
        }
        try Self.expectFollowed(store, all, "the tag deleted (its post's link nullified)") { try store.deleteObject(tag) }
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "swift", posts: [post])]))
        try Self.expectFollowed(store, all, "the post deleted (its attachment cascaded, its tag's link nullified)") {
            try store.deleteObject(post)
        }
        let other = try store.insertPost("a")
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "more", posts: [other])]))
        try Self.expectFollowed(store, all, "a batch delete of the posts") {
            try store.delete(DataStoreBatchDeleteRequest(entityName: "Post"))
        }
        try store.close()
    }

    @Test func subEntityInsertsDefaultsAndUpsertsOfAHierarchyChangeTheAnswersTheyReach() throws {
        let home = WALHome(RulesModel.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        let all = [
            FetchDescriptor(entityName: "Animal", predicate: .attribute("name").beginsWith("r"), sortBy: [FetchSortDescriptor("name")]),
            FetchDescriptor(entityName: "Dog", predicate: .attribute("breed") == "lab"),
            FetchDescriptor(entityName: "Kid", predicate: .attribute("age") == 0),
        ]
        try Self.expectFollowed(store, all, "a sub-entity inserted") {
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [RulesModel.make("Dog", ["name": "rex"])]))
        }
        try Self.expectFollowed(store, all, "an upsert of the sub-entity merging into the stored one") {
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [RulesModel.make("Dog", ["name": "rex", "breed": "lab"])]))
        }
        try Self.expectFollowed(store, all, "an insert given its default") {
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [RulesModel.make("Kid", ["first": "a", "last": "b"])]))
        }
        try Self.expectFollowed(store, all, "an upsert on a compound constraint") {
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [RulesModel.make("Kid", ["first": "a", "last": "b", "age": 3])]))
        }
        try store.close()
    }
}
