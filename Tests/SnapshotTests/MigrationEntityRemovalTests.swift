import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// The blog model without `Attachment` (and `Post.attachments`), as version 2 of a plan.
enum BlogWithoutAttachments: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static var entities: [Schema.Entity] {
        var e = BlogModel.schema.entities
        e.removeAll { $0.name == "Attachment" }
        e[named: "Post"].relationships.removeAll { $0.name == "attachments" }
        return e
    }
}

/// A plan that says, with a lightweight stage, that version 2 drops the attachments.
enum DropAttachmentsPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [BlogV1.self, BlogWithoutAttachments.self] }
    static var stages: [MigrationStage] { [.lightweight(fromVersion: BlogV1.self, toVersion: BlogWithoutAttachments.self)] }
}

/// Removing an entity deletes its objects: without a stage of a plan naming the step, a
/// schema that drops an entity holding objects is refused and the files stay as they were.
@Suite struct MigrationEntityRemovalTests {
    typealias F = MigrationFixture

    @Test func removingAnEntityThatHoldsObjectsWithoutAPlanIsRefusedNamingIt() throws {
        let home = MigrationHome()
        let old = try home.filled()
        let files = try home.files()
        do {
            _ = try home.open(try BlogWithoutAttachments.schema())
            Issue.record("the removal was not refused")
        } catch let error as DataStoreError {
            #expect(error.code == .schemaMismatch && error.entityName == "Attachment", "\(error)")
            #expect(error.message.contains("no entity Attachment") && error.message.contains(".lightweight"), "\(error.message)")
            #expect((error.underlying as? SchemaDifference)?.incompatible == [.entityRemoved("Attachment")])
        }
        #expect(try home.files() == files, "the files are byte-identical")
        let store = try home.open(BlogModel.schema)
        #expect(try F.dump(store) == old)
        try store.close()
    }

    @Test func aSchemaWithNothingInCommonIsRefusedRatherThanEmptyingTheStore() throws {
        let home = MigrationHome()
        try home.filled()
        let files = try home.files()
        let unrelated = try Schema([.init("Note", attributes: [.init("text", .string)])])
        #expect(throws: DataStoreError.self) { try home.open(unrelated) }
        #expect(try home.files() == files, "the files are byte-identical")
    }

    @Test func aPlansLightweightStageRemovesTheEntityAndItsObjects() throws {
        let home = MigrationHome()
        let old = try home.filled()
        let store = try home.open(try BlogWithoutAttachments.schema(), plan: DropAttachmentsPlan.self)
        #expect(try store.all("Post").count == 3 && store.all("Tag").count == 2)
        let kept = old.filter { !$0.hasPrefix("Attachment_") }.map {
            $0.replacingOccurrences(of: #"attachments=\[[^\]]*\] "#, with: "", options: .regularExpression)
        }
        #expect(try F.dump(store) == kept)
        #expect(try F.keyKinds(store)[0x41] == nil, "the attachments' assets are gone")
        try store.close()
    }

    @Test func removingAnEntityWithoutObjectsNeedsNoPlan() throws {
        let home = MigrationHome()
        do {
            let store = try home.open(BlogModel.schema)
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.post(title: "alone", date: F.epoch)]))
            try store.close()
        }
        let store = try home.open(try BlogWithoutAttachments.schema())
        #expect(try store.all("Post").count == 1)
        try store.close()
    }
}
