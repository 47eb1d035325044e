import Engine
import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// Fetches through a context include its pending changes as SwiftData's context does, sorted
/// and windowed as the store would.
@Suite struct ContextPendingFetchTests {
    static let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)

    static var descriptors: [Snapshot.FetchDescriptor] {
        let predicates: [FetchPredicate?] = [nil, .attribute("title").contains("1"), .attribute("date") >= epoch.addingTimeInterval(5)]
        let sorts: [[FetchSortDescriptor]] = [
            [], [FetchSortDescriptor("date")], [FetchSortDescriptor("date", order: .reverse)], [FetchSortDescriptor("title")],
        ]
        let windows: [(Int?, Int?)] = [(nil, nil), (5, nil), (5, 3), (nil, 4), (1, 0), (50, 10)]
        var result: [Snapshot.FetchDescriptor] = []
        for p in predicates {
            for s in sorts {
                for (limit, offset) in windows {
                    result.append(Snapshot.FetchDescriptor(entityName: "Post", predicate: p, sortBy: s, fetchLimit: limit, fetchOffset: offset))
                }
            }
        }
        return result
    }

    @Test func pendingInsertsUpdatesAndDeletesAreIncludedAsSwiftDataIncludesThem() throws {
        let home = ContainerHome()
        defer { home.temporary.remove() }
        let container = try home.open()
        var posts: [DefaultSnapshot] = []
        for i in 0..<20 { posts.append(BlogModel.post(title: "post \(i)", date: Self.epoch.addingTimeInterval(Double(i)))) }
        let saved = try container.save(DataStoreSaveChangesRequest(inserted: posts))
        let ids = posts.map { saved.remappedIdentifiers[$0.persistentIdentifier]! }
        let context = StoreContext(container)
        // Updates: one starts matching "1", one stops, two move in date order.
        try context.update(ids[2], ["title": "post 12b"])
        try context.update(ids[11], ["title": "renamed"])
        try context.update(ids[0], ["date": .date(Self.epoch.addingTimeInterval(100))])
        try context.update(ids[19], ["date": .date(Self.epoch.addingTimeInterval(-5))])
        try context.delete(ids[1])
        try context.delete(ids[13])
        let inserted = [
            BlogModel.post(title: "new 1", date: Self.epoch.addingTimeInterval(7.5)),
            BlogModel.post(title: "new 2", date: Self.epoch.addingTimeInterval(-1)),
            BlogModel.post(title: "new 10", date: Self.epoch.addingTimeInterval(30)),
        ]
        for p in inserted { try context.insert(p) }
        #expect(context.hasChanges)
        #expect(Set(context.changedIdentifiers) == [ids[2], ids[11], ids[0], ids[19]])
        #expect(context.deletedIdentifiers == [ids[1], ids[13]])
        #expect(context.insertedIdentifiers == inserted.map(\.persistentIdentifier))

        let stored = try container.fetch(Snapshot.FetchDescriptor(entityName: "Post")).fetchedSnapshots
        var updated: [PersistentIdentifier: DefaultSnapshot] = [:]
        for id in context.changedIdentifiers { updated[id] = context.registeredSnapshot(for: id) }
        let full = try context.insertedIdentifiers.map { try #require(context.registeredSnapshot(for: $0)) }
        for descriptor in Self.descriptors {
            let expected = try referenceFetch(
                descriptor, stored: stored, updated: updated, deleted: [ids[1], ids[13]], inserted: full, schema: container.schema)
            let got = try context.fetch(descriptor)
            #expect(got.map(\.persistentIdentifier) == expected.map(\.persistentIdentifier), "\(descriptor)")
            #expect(got == expected, "values of \(descriptor)")
            #expect(try context.fetchCount(descriptor) == expected.count)
        }
        // Without pending changes: the store's answer as it is.
        let plain = try context.fetch(
            Snapshot.FetchDescriptor(entityName: "Post", sortBy: [.init("date")], fetchLimit: 2), includePendingChanges: false)
        #expect(plain.map(\.persistentIdentifier) == [ids[0], ids[1]])
        // A fetch of another entity is the store's answer.
        #expect(try context.fetch(Snapshot.FetchDescriptor(entityName: "Tag")).isEmpty)
    }

    @Test func aPendingChangeToARelatedObjectIsJudgedThroughTheRelationship() throws {
        let home = ContainerHome()
        defer { home.temporary.remove() }
        let container = try home.open()
        let post = BlogModel.post(title: "old title", date: Self.epoch)
        let attachment = BlogModel.attachment(imageData: Data([1]), post: post.persistentIdentifier)
        let saved = try container.save(DataStoreSaveChangesRequest(inserted: [post, attachment]))
        let context = StoreContext(container)
        let byTitle = Snapshot.FetchDescriptor(entityName: "Attachment", predicate: .attribute("post.title") == "new title")
        #expect(try context.fetch(byTitle).isEmpty)
        try context.update(saved.remappedIdentifiers[post.persistentIdentifier]!, ["title": "new title"])
        #expect(try context.fetch(byTitle).map(\.persistentIdentifier) == [saved.remappedIdentifiers[attachment.persistentIdentifier]!])
        #expect(try context.fetch(byTitle, includePendingChanges: false).isEmpty)
    }
}
