import Engine
import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// A context's save, rollback and delete rules.
@Suite struct ContextSaveTests {
    static let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)

    @Test func rollbackDiscardsEveryPendingChangeAndKeepsWhatWasSaved() throws {
        let home = ContainerHome()
        defer { home.temporary.remove() }
        let context = StoreContext(try home.open())
        let post = try context.insert(BlogModel.post(title: "kept", date: Self.epoch))
        let kept = try #require(try context.save()[post])
        try context.update(kept, ["title": "changed"])
        try context.delete(try context.insert(ContainerModel.setting("a", "b")))
        let dropped = try context.insert(ContainerModel.note("dropped"))
        #expect(context.hasChanges)
        context.rollback()
        #expect(!context.hasChanges)
        #expect(context.insertedIdentifiers.isEmpty && context.changedIdentifiers.isEmpty && context.deletedIdentifiers.isEmpty)
        #expect(context.registeredSnapshot(for: kept)?["title"] == .string("kept"))
        #expect(context.registeredSnapshot(for: dropped) == nil)
        #expect(try context.fetch(Snapshot.FetchDescriptor(entityName: "Note")).isEmpty)
        #expect(try context.fetch(Snapshot.FetchDescriptor(entityName: "Post")).map { $0["title"] } == [.string("kept")])
        #expect(try context.save().isEmpty, "nothing is pending")
    }

    @Test func saveRemapsTemporaryIdentifiersInEverythingTheContextHoldsAndRegistersWhatTheStoreChanged() throws {
        let home = ContainerHome()
        defer { home.temporary.remove() }
        let container = try home.open()
        let context = StoreContext(container)
        let stored = try context.insert(BlogModel.post(title: "stored", date: Self.epoch))
        let storedID = try #require(try context.save()[stored])

        let tag = try context.insert(BlogModel.tag(name: "news"))
        let post = try context.insert(BlogModel.post(title: "new", date: Self.epoch, tags: [tag]))
        let attachment = try context.insert(BlogModel.attachment(imageData: Data([7]), post: storedID))
        try context.update(storedID, ["tags": .toMany([tag])])
        try context.insert(ContainerModel.setting("k", "v"))
        let map = try context.save()
        #expect(map.count == 4)
        let tagID = try #require(map[tag]), postID = try #require(map[post]), attachmentID = try #require(map[attachment])
        #expect(context.permanentIdentifier(for: post) == postID)
        #expect(!context.hasChanges)
        // The saved objects under their permanent identifiers, with permanent references.
        #expect(context.registeredSnapshot(for: postID)?["tags"] == .toMany([tagID]))
        #expect(context.registeredSnapshot(for: storedID)?["tags"] == .toMany([tagID]))
        #expect(context.registeredSnapshot(for: post) == context.registeredSnapshot(for: postID), "a saved temporary identifier still resolves")
        // What the store changed on the other sides: the tag lists both posts, the stored post
        // its new attachment.
        #expect(Set(context.registeredSnapshot(for: tagID)?["posts"]?.referencedIdentifiers ?? []) == [postID, storedID])
        #expect(context.registeredSnapshot(for: storedID)?["attachments"] == .toMany([attachmentID]))
        // The context agrees with the store.
        for id in [tagID, postID, storedID, attachmentID] {
            #expect(context.registeredSnapshot(for: id) == (try container.snapshots(for: [id])[id]), "\(id)")
        }
    }

    @Test func deletingStagesCascadesAndNullifiedInversesAndTheStoreAcceptsThem() throws {
        let home = ContainerHome()
        defer { home.temporary.remove() }
        let container = try home.open()
        let tag = BlogModel.tag(name: "news")
        let post = BlogModel.post(title: "doomed", date: Self.epoch, tags: [tag.persistentIdentifier])
        let other = BlogModel.post(title: "other", date: Self.epoch, tags: [tag.persistentIdentifier])
        let a1 = BlogModel.attachment(imageData: Data([1]), post: post.persistentIdentifier)
        let a2 = BlogModel.attachment(imageData: Data([2]), post: post.persistentIdentifier)
        let saved = try container.save(DataStoreSaveChangesRequest(inserted: [post, other, tag, a1, a2])).remappedIdentifiers
        let (postID, otherID, tagID) = (saved[post.persistentIdentifier]!, saved[other.persistentIdentifier]!, saved[tag.persistentIdentifier]!)
        let attachments = Set([a1, a2].map { saved[$0.persistentIdentifier]! })

        let context = StoreContext(container)
        // A pending attachment of the doomed post goes with it too.
        let pending = try context.insert(BlogModel.attachment(imageData: Data([3]), post: postID))
        try context.delete(postID)
        #expect(Set(context.deletedIdentifiers) == attachments.union([postID]), "cascade: the stored attachments are deleted")
        #expect(context.insertedIdentifiers.isEmpty, "cascade: the pending attachment is discarded")
        #expect(context.changedIdentifiers == [tagID], "nullify: the tag loses the post")
        #expect(context.registeredSnapshot(for: tagID)?["posts"] == .toMany([otherID]))
        #expect(context.changedProperties(of: tagID) == ["posts"])
        #expect(context.registeredSnapshot(for: pending) == nil)
        #expect(try context.fetch(Snapshot.FetchDescriptor(entityName: "Attachment")).isEmpty)

        // The adapter accepts a request that already holds the cascaded children and the
        // nullified inverse.
        try context.save()
        #expect(try container.fetch(Snapshot.FetchDescriptor(entityName: "Attachment")).fetchedSnapshots.isEmpty)
        #expect(try container.fetch(Snapshot.FetchDescriptor(entityName: "Post")).fetchedSnapshots.map(\.persistentIdentifier) == [otherID])
        #expect(try container.snapshots(for: [tagID])[tagID]?["posts"] == .toMany([otherID]))
        #expect(context.registeredSnapshot(for: tagID) == (try container.snapshots(for: [tagID])[tagID]))
    }

    @Test func aDenyRuleWithATargetRefusesTheDeleteAndStagesNothing() throws {
        let schema = try Schema([
            .init(
                "Folder", attributes: [.init("name", .string)],
                relationships: [.init("files", destination: "File", .toMany, inverse: "folder", deleteRule: .deny)]),
            .init(
                "File", attributes: [.init("name", .string)],
                relationships: [.init("folder", destination: "Folder", inverse: "files", deleteRule: .nullify)]),
        ])
        let home = TemporaryDirectory("walstore-models")
        defer { home.remove() }
        let container = try StoreContainer(schema: schema, configurations: [.init(name: "Local", entityNames: nil, path: home.path + "/s")])
        let context = StoreContext(container)
        let folder = try context.insert(DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Folder"), values: ["name": "docs"]))
        let file = try context.insert(
            DefaultSnapshot(persistentIdentifier: .temporary(entityName: "File"), values: ["name": "a", "folder": .toOne(folder)]))
        let map = try context.save()
        let (folderID, fileID) = (map[folder]!, map[file]!)
        let error = try #require(throws: DataStoreError.self) { try context.delete(folderID) }
        #expect(error.code == .deleteDenied)
        #expect(error.identifier == folderID && error.propertyName == "files")
        #expect(!context.hasChanges)
        // Once the file is gone, the folder can go: its deletion nullifies nothing left.
        try context.delete(fileID)
        #expect(context.changedIdentifiers == [folderID], "nullify: the folder loses the file")
        try context.delete(folderID)
        #expect(Set(context.deletedIdentifiers) == [fileID, folderID])
        #expect(context.changedIdentifiers.isEmpty)
        try context.save()
        #expect(try container.fetch(Snapshot.FetchDescriptor(entityName: "Folder")).fetchedSnapshots.isEmpty)
    }
}
