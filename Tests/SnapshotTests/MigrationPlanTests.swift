import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// The blog model in three versions: 1 as stored, 2 adds `Post.views` (lightweight), 3 makes
/// `Post.content` required (a custom stage fills the nulls first, and uppercases titles after).
enum BlogV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static var entities: [Schema.Entity] { BlogModel.schema.entities }
}

enum BlogV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static var entities: [Schema.Entity] {
        var e = BlogModel.schema.entities
        e[named: "Post"].attributes.append(.init("views", .int, defaultValue: .int(0)))
        return e
    }
}

enum BlogV3: VersionedSchema {
    static let versionIdentifier = Schema.Version(3, 0, 0)
    static var entities: [Schema.Entity] {
        var e = BlogV2.entities
        e[named: "Post"].attributes[1].isOptional = false
        return e
    }
}

enum BlogPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [BlogV1.self, BlogV2.self, BlogV3.self] }
    static var stages: [MigrationStage] {
        [
            .lightweight(fromVersion: BlogV1.self, toVersion: BlogV2.self),
            .custom(
                fromVersion: BlogV2.self, toVersion: BlogV3.self,
                willMigrate: { store in
                    // In version 2: every post gets content.
                    let posts = try store.all("Post").filter { $0["content"] == .null }
                    _ = try store.save(
                        DataStoreSaveChangesRequest(
                            updated: posts.map {
                                var p = $0; p["content"] = .string("(empty)"); return p
                            }))
                },
                didMigrate: { store in
                    // In version 3: titles uppercased, views counted from tags.
                    let posts = try store.all("Post").map { p -> DefaultSnapshot in
                        var p = p
                        if case .string(let t)? = p["title"] { p["title"] = .string(t.uppercased()) }
                        p["views"] = .int(p["tags"]?.referencedIdentifiers.count ?? 0)
                        return p
                    }
                    _ = try store.save(DataStoreSaveChangesRequest(updated: posts))
                }),
        ]
    }
}

/// A plan that fails in its custom stage, after its closure saved.
enum FailingPlan: SchemaMigrationPlan {
    struct Refusal: Error {}
    static var schemas: [any VersionedSchema.Type] { [BlogV1.self, BlogV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                fromVersion: BlogV1.self, toVersion: BlogV2.self,
                willMigrate: { store in
                    _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "half")]))
                    try store.erase()
                },
                didMigrate: { _ in throw Refusal() })
        ]
    }
}

@Suite struct MigrationPlanTests {
    typealias F = MigrationFixture

    @Test func aTwoStagePlanRunsItsStagesInOrderWithCustomClosures() throws {
        let home = MigrationHome()
        try home.filled()
        let store = try home.open(try BlogV3.schema(), plan: BlogPlan.self)
        let posts = try store.all("Post")
        let byTitle = Dictionary(
            uniqueKeysWithValues: posts.map { p -> (String, DefaultSnapshot) in
                guard case .string(let t)? = p["title"] else { return ("?", p) }
                return (t, p)
            })
        #expect(byTitle.keys.sorted() == ["ALPHA", "BETA", "GAMMA"])
        #expect(byTitle["BETA"]?["content"] == .string("(empty)"), "willMigrate ran in version 2")
        #expect(byTitle["ALPHA"]?["views"] == .int(2) && byTitle["GAMMA"]?["views"] == .int(0), "didMigrate ran in version 3")
        #expect(try store.all("Attachment").count == 3 && store.all("Tag").count == 2)
        try store.close()
        // The store records version 3: reopening runs nothing.
        let reopened = try home.open(try BlogV3.schema(), plan: BlogPlan.self)
        #expect(try reopened.all("Post").count == 3)
        try reopened.close()
        #expect(throws: DataStoreError.self, "version 1 is older than the store") { try home.open(try BlogV1.schema(), plan: BlogPlan.self) }
    }

    @Test func aFailingCustomStageLeavesTheStoreAsItWas() throws {
        let home = MigrationHome()
        let old = try home.filled()
        do {
            _ = try home.open(try BlogV2.schema(), plan: FailingPlan.self)
            Issue.record("the migration did not fail")
        } catch let error as DataStoreError {
            #expect(error.code == .migrationFailed && error.underlying is FailingPlan.Refusal, "\(error)")
        }
        let store = try home.open(BlogModel.schema)
        #expect(try F.dump(store) == old)
        #expect(try F.keyKinds(store)[0x01] == nil, "the abandoned generations are gone")
        try store.close()
    }

    @Test func keysOfOtherLayersSurviveAMigration() throws {
        let home = MigrationHome()
        try home.filled()
        let history: [UInt8] = Array("H\u{0}Post\u{0}title".utf8)
        do {
            let store = try home.open(BlogModel.schema)
            _ = try store.engine.write { $0.put(history, [1, 2, 3]) }
            try store.close()
        }
        let schema = try F.blog {
            $0[named: "Post"].name = "Article"
            $0[named: "Article"].originalName = "Post"
            $0[named: "Attachment"].relationships[0].destination = "Article"
            $0[named: "Tag"].relationships[0].destination = "Article"
        }
        let store = try home.open(schema)
        #expect(try store.engine.value(forKey: history) == [1, 2, 3])
        try store.close()
    }
}
