import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Power loss at every I/O operation of a migration (an entity renamed and an attribute added
/// with a default, through a plan whose custom stage saves): after each, the store opens under
/// the old schema with the old data exactly, or under the new one with the migration complete.
@Suite struct MigrationPowerLossTests {
    typealias F = MigrationFixture
    static let path = "/migration-store"

    enum Old: VersionedSchema {
        static let versionIdentifier = Schema.Version(1, 0, 0)
        static var entities: [Schema.Entity] { BlogModel.schema.entities }
    }

    enum New: VersionedSchema {
        static let versionIdentifier = Schema.Version(2, 0, 0)
        static var entities: [Schema.Entity] {
            var e = BlogModel.schema.entities
            e[named: "Post"].name = "Article"
            e[named: "Article"].originalName = "Post"
            e[named: "Article"].attributes.append(.init("views", .int, defaultValue: .int(3)))
            e[named: "Attachment"].relationships[0].destination = "Article"
            e[named: "Tag"].relationships[0].destination = "Article"
            return e
        }
    }

    enum Plan: SchemaMigrationPlan {
        static var schemas: [any VersionedSchema.Type] { [Old.self, New.self] }
        static var stages: [MigrationStage] {
            [
                .custom(
                    fromVersion: Old.self, toVersion: New.self,
                    willMigrate: { store in
                        var tag = try #require(try store.all("Tag").first { $0["name"] == .string("misc") })
                        tag["colour"] = .string("blue")
                        _ = try store.save(DataStoreSaveChangesRequest(updated: [tag]))
                    }, didMigrate: nil)
            ]
        }
    }

    static func open(_ schema: Schema, _ fs: FaultInjectingFileSystem, plan: (any SchemaMigrationPlan.Type)? = nil) throws -> WALDataStore {
        try WALDataStore(F.configuration(schema, path: path), migrationPlan: plan, fileSystem: fs)
    }

    @Test func powerLossAtEveryOperationOfAMigrationLeavesTheOldStoreOrTheNewOne() throws {
        let base = FaultInjectingFileSystem()
        let oldSchema = try Old.schema(), newSchema = try New.schema()
        do {
            let store = try Self.open(oldSchema, base, plan: Plan.self)
            try F.fill(store)
            try store.close()
        }
        let old = try F.dump(try Self.open(oldSchema, base.clone()))
        let new = try F.dump(try Self.open(newSchema, base.clone(), plan: Plan.self))
        #expect(old != new && new.contains { $0.contains("blue") })

        var crashAt = 1
        var completed = false
        var sawOld = false, sawNew = false
        while !completed && crashAt < 3000 {
            let fs = base.clone()
            fs.crash(atOperation: crashAt)
            let before = fs.operationCount
            let migrated = try? Self.open(newSchema, fs, plan: Plan.self)
            // The sweep of the old generation, which runs after the open, is in the window too.
            migrated?.sweepGenerations()
            completed = migrated != nil && fs.operationCount - before < crashAt
            fs.powerLoss()
            try? migrated?.close()
            do {
                let store = try Self.open(oldSchema, fs)
                #expect(migrated == nil, "power loss at operation \(crashAt): a migration that returned is undone")
                #expect(try F.dump(store) == old, "power loss at operation \(crashAt)")
                #expect(try F.keyKinds(store)[0x01] == nil, "power loss at operation \(crashAt): the unfinished generation is swept")
                try store.close()
                sawOld = true
            } catch let error as DataStoreError where error.code == .schemaMismatch {
                let store = try Self.open(newSchema, fs)
                #expect(try F.dump(store) == new, "power loss at operation \(crashAt)")
                #expect(try F.keyKinds(store)[0x52] == nil, "power loss at operation \(crashAt): the old generation is swept")
                try store.close()
                sawNew = true
            }
            crashAt += 1
        }
        #expect(completed && sawOld && sawNew, "the sweep reached the end of the migration (\(crashAt) operations)")
    }
}
