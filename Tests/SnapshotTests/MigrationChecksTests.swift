import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// What a migration checks before it writes: an unknown stored version, every object a new
/// uniqueness rule or a newly required attribute refuses, and that a refused open leaves every
/// file (leftovers of an earlier migration included) byte-identical.
@Suite struct MigrationChecksTests {
    typealias F = MigrationFixture

    enum V1: VersionedSchema {
        static let versionIdentifier = Schema.Version(1, 0, 0)
        static var entities: [Schema.Entity] { BlogModel.schema.entities }
    }

    enum V2: VersionedSchema {
        static let versionIdentifier = Schema.Version(2, 0, 0)
        static var entities: [Schema.Entity] {
            var e = BlogModel.schema.entities
            e[named: "Tag"].attributes.append(.init("rank", .int, isOptional: true))
            return e
        }
    }

    enum V3: VersionedSchema {
        static let versionIdentifier = Schema.Version(3, 0, 0)
        static var entities: [Schema.Entity] {
            var e = V2.entities
            e[named: "Post"].uniquenessConstraints = [.init(["date"])]
            e[named: "Post"].attributes[2].defaultValue = nil
            return e
        }
    }

    /// V2 → V3 through a custom stage (so the rule is checked by the rewrite itself).
    enum CustomPlan: SchemaMigrationPlan {
        static var schemas: [any VersionedSchema.Type] { [V2.self, V3.self] }
        static var stages: [MigrationStage] {
            [.custom(fromVersion: V2.self, toVersion: V3.self, willMigrate: { _ in }, didMigrate: nil)]
        }
    }

    enum LaterPlan: SchemaMigrationPlan {
        static var schemas: [any VersionedSchema.Type] { [V2.self, V3.self] }
        static var stages: [MigrationStage] { [] }
    }

    enum FirstPlan: SchemaMigrationPlan {
        static var schemas: [any VersionedSchema.Type] { [V1.self] }
        static var stages: [MigrationStage] { [] }
    }

    /// The error `body` throws.
    func refusal(_ body: () throws -> Any) -> DataStoreError? {
        do {
            _ = try body()
            Issue.record("not refused")
            return nil
        } catch let error as DataStoreError {
            return error
        } catch {
            Issue.record("not a DataStoreError: \(error)")
            return nil
        }
    }

    /// A store of `schema` with the fixture's three posts and `extra` posts on the given minutes
    /// after the epoch; the identifiers of every post by title.
    func store(
        _ home: MigrationHome, _ schema: Schema, plan: (any SchemaMigrationPlan.Type)? = nil, extra: [(String, Double)] = []
    ) throws -> [String: PersistentIdentifier] {
        let store = try home.open(schema, plan: plan)
        try F.fill(store)
        let posts = extra.map { BlogModel.post(title: $0.0, date: F.epoch.addingTimeInterval($0.1 * 60)) }
        if !posts.isEmpty { _ = try store.save(DataStoreSaveChangesRequest(inserted: posts)) }
        var ids: [String: PersistentIdentifier] = [:]
        for post in try store.all("Post") {
            if case .string(let title)? = post["title"] { ids[title] = post.persistentIdentifier }
        }
        try store.close()
        return ids
    }

    // MARK: Uniqueness

    @Test func aNewUniquenessRuleOverCollisionsNamesEveryCollidingObject() throws {
        for plan: (any SchemaMigrationPlan.Type)? in [nil, CustomPlan.self] {
            let home = MigrationHome()
            // alpha, delta and zeta share the epoch; beta and epsilon a minute after it.
            let ids = try store(home, try V2.schema(), plan: plan == nil ? nil : CustomPlan.self, extra: [("delta", 0), ("epsilon", 1), ("zeta", 0)])
            let files = try home.files()
            let error = refusal { try home.open(try V3.schema(), plan: plan) }
            #expect(error?.code == .uniqueness, "\(error.map { "\($0)" } ?? "")")
            let named = Set([error?.identifier].compactMap { $0 } + (error?.relatedIdentifiers ?? []))
            #expect(
                named == Set(["alpha", "beta", "delta", "epsilon", "zeta"].compactMap { ids[$0] }),
                "plan \(plan.map { "\($0)" } ?? "none"): \(error.map { "\($0)" } ?? "")")
            #expect(error.map { 1 + $0.relatedIdentifiers.count } == 5, "each object once")
            #expect(error?.constraint == ["date"] && error?.entityName == "Post" && error?.propertyName == "date")
            #expect(error?.message.contains(ids["gamma"].map { "\($0)" } ?? "?") == false, "gamma collides with nothing")
            if plan == nil { #expect(try home.files() == files, "the files are byte-identical") }
            let reopened = try home.open(try V2.schema(), plan: plan == nil ? nil : LaterPlan.self)
            #expect(try reopened.all("Post").count == 6)
            try reopened.close()
        }
    }

    // MARK: Versions

    @Test func aStoredVersionThePlanDoesNotListIsRefusedNamingTheVersions() throws {
        let home = MigrationHome()
        let ids = try store(home, try V1.schema(), plan: FirstPlan.self)
        let files = try home.files()
        let error = refusal { try home.open(try V3.schema(), plan: LaterPlan.self) }
        #expect(error?.code == .schemaMismatch)
        #expect(
            error?.message.contains("version 1.0.0") == true && error?.message.contains("(2.0.0, 3.0.0)") == true, "\(error.map { "\($0)" } ?? "")")
        #expect(try home.files() == files, "the files are byte-identical")
        let reopened = try home.open(try V1.schema(), plan: FirstPlan.self)
        #expect(Set(try reopened.all("Post").map(\.persistentIdentifier)) == Set(ids.values))
        try reopened.close()
    }

    @Test func aStoreWithoutAVersionWhoseSchemaThePlanDoesNotListIsRefused() throws {
        let home = MigrationHome()
        var entities = BlogModel.schema.entities
        entities[named: "Tag"].attributes.append(.init("weight", .double, isOptional: true))
        _ = try store(home, try Schema(entities))
        let files = try home.files()
        let error = refusal { try home.open(try V3.schema(), plan: LaterPlan.self) }
        #expect(error?.code == .schemaMismatch && error?.message.contains("(no version)") == true, "\(error.map { "\($0)" } ?? "")")
        #expect(try home.files() == files)
    }

    @Test func aVersionWhoseSchemaWasEditedIsRefusedSayingSo() throws {
        let home = MigrationHome()
        _ = try store(home, try V1.schema(), plan: FirstPlan.self)
        // A plan whose 1.0.0 declares another schema than the store's.
        enum EditedV1: VersionedSchema {
            static let versionIdentifier = Schema.Version(1, 0, 0)
            static var entities: [Schema.Entity] { V2.entities }
        }
        enum EditedPlan: SchemaMigrationPlan {
            static var schemas: [any VersionedSchema.Type] { [EditedV1.self, V3.self] }
            static var stages: [MigrationStage] { [] }
        }
        let error = refusal { try home.open(try V3.schema(), plan: EditedPlan.self) }
        #expect(error?.code == .schemaMismatch && error?.message.contains("declares another schema") == true, "\(error.map { "\($0)" } ?? "")")
    }

    // MARK: An attribute made required

    static func requiredContent() throws -> Schema { try F.blog { $0[named: "Post"].attributes[1].isOptional = false } }

    @Test func makingAnAttributeRequiredIsLightweightWhenNoObjectHoldsANull() throws {
        let home = MigrationHome()
        do {
            let store = try home.open(BlogModel.schema)
            try F.fill(store)
            var beta = try #require(try store.all("Post").first { $0["title"] == .string("beta") })
            beta["content"] = .string("now written")
            _ = try store.save(DataStoreSaveChangesRequest(updated: [beta]))
            try store.close()
        }
        let before = try home.open(BlogModel.schema).closing { try F.dump($0) }
        let store = try home.open(try Self.requiredContent())
        #expect(try F.dump(store) == before, "the objects are as they were")
        #expect(try F.keyKinds(store)[0x01] == nil, "nothing was rewritten")
        let error = refusal { try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.post(title: "no content", date: F.epoch)])) }
        #expect(error?.code == .missingValue && error?.propertyName == "content", "the new schema is in force")
        try store.close()
    }

    @Test func makingAnAttributeRequiredOverNullsIsRefusedNamingEveryObjectThatHoldsOne() throws {
        let home = MigrationHome()
        let ids = try store(home, BlogModel.schema, extra: [("delta", 5), ("epsilon", 6)])  // delta and epsilon have no content either
        let files = try home.files()
        let error = refusal { try home.open(try Self.requiredContent()) }
        #expect(error?.code == .missingValue && error?.entityName == "Post" && error?.propertyName == "content", "\(error.map { "\($0)" } ?? "")")
        let named = Set([error?.identifier].compactMap { $0 } + (error?.relatedIdentifiers ?? []))
        #expect(named == Set(["beta", "delta", "epsilon"].compactMap { ids[$0] }))
        #expect(try home.files() == files, "the files are byte-identical")
    }

    @Test func anAttributeAddedLaterAndThenMadeRequiredNamesTheObjectsWrittenBeforeIt() throws {
        let home = MigrationHome()
        _ = try store(home, BlogModel.schema)
        var withRank = BlogModel.schema.entities
        withRank[named: "Tag"].attributes.append(.init("rank", .int, isOptional: true))
        do {
            let store = try home.open(try Schema(withRank))
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "ranked").with("rank", .int(1))]))
            try store.close()
        }
        let tags = try home.open(try Schema(withRank)).closing { try $0.all("Tag") }
        withRank[named: "Tag"].attributes[2].isOptional = false
        let files = try home.files()
        let error = refusal { try home.open(try Schema(withRank)) }
        let named = Set([error?.identifier].compactMap { $0 } + (error?.relatedIdentifiers ?? []))
        #expect(error?.code == .missingValue && error?.propertyName == "rank")
        #expect(named == Set(tags.filter { $0["rank"] == nil || $0["rank"] == .null }.map(\.persistentIdentifier)) && named.count == 2)
        #expect(try home.files() == files)
    }

    @Test func powerLossWhileMakingAnAttributeRequiredLeavesTheOldStoreOrTheNewOne() throws {
        let path = "/required-store"
        let base = FaultInjectingFileSystem()
        func open(_ schema: Schema, _ fs: FaultInjectingFileSystem) throws -> WALDataStore {
            try WALDataStore(F.configuration(schema, path: path), fileSystem: fs)
        }
        let required = try Self.requiredContent()
        do {
            let store = try open(BlogModel.schema, base)
            try F.fill(store)
            var beta = try #require(try store.all("Post").first { $0["title"] == .string("beta") })
            beta["content"] = .string("filled")
            _ = try store.save(DataStoreSaveChangesRequest(updated: [beta]))
            try store.close()
        }
        let old = try F.dump(try open(BlogModel.schema, base.clone()))
        var crashAt = 1
        var completed = false
        var sawOld = false, sawNew = false
        while !completed && crashAt < 1000 {
            let fs = base.clone()
            fs.crash(atOperation: crashAt)
            let before = fs.operationCount
            let migrated = try? open(required, fs)
            completed = migrated != nil && fs.operationCount - before < crashAt
            fs.powerLoss()
            try? migrated?.close()
            // Which schema the header names (either is migrated to the other lightweight).
            let isNew = try Self.headerNames(required, not: BlogModel.schema, path: path, fs)
            if isNew { sawNew = true } else { sawOld = true }
            if migrated != nil { #expect(isNew, "power loss at operation \(crashAt): a migration that returned is durable") }
            let store = try open(isNew ? required : BlogModel.schema, fs)
            #expect(try F.dump(store) == old, "power loss at operation \(crashAt): the same objects, under either schema")
            try store.close()
            crashAt += 1
        }
        #expect(completed && sawOld && sawNew, "the crashes reached the end of the migration (\(crashAt) operations)")
    }

    /// Whether the store's header holds `schema` (and not `other`), read from the engine
    /// without opening (and so without migrating) the store.
    static func headerNames(_ schema: Schema, not other: Schema, path: String, _ fs: FaultInjectingFileSystem) throws -> Bool {
        let engine = try LogStore.open(at: path, options: LogStore.Options(), fileSystem: fs)
        defer { try? engine.close() }
        let header = try #require(try engine.value(forKey: [0x00] + Array("store".utf8)))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let (mine, theirs) = (Array(try encoder.encode(schema)), Array(try encoder.encode(other)))
        func holds(_ json: [UInt8]) -> Bool {
            header.count >= json.count && (0...(header.count - json.count)).contains { header[$0..<$0 + json.count].elementsEqual(json) }
        }
        #expect(holds(mine) != holds(theirs), "the header names one of the two schemas")
        return holds(mine)
    }

    // MARK: Leftovers

    struct Refusal: Error {}

    /// V2 → V3 through a custom stage whose willMigrate saves a large attachment, then throws.
    enum FailingPlan: SchemaMigrationPlan {
        static var schemas: [any VersionedSchema.Type] { [V2.self, V3.self] }
        static var stages: [MigrationStage] {
            [
                .custom(
                    fromVersion: V2.self, toVersion: V3.self,
                    willMigrate: { store in
                        _ = try store.save(
                            DataStoreSaveChangesRequest(inserted: [
                                BlogModel.attachment(imageData: Data((0..<6000).map { UInt8($0 % 251) }), post: nil)
                            ]))
                        throw Refusal()
                    }, didMigrate: nil)
            ]
        }
    }

    @Test func aRefusedOpenAfterAFailedMigrationLeavesItsBlobFilesInPlace() throws {
        let home = MigrationHome()
        _ = try store(home, try V2.schema(), plan: CustomPlan.self)
        #expect(refusal { try home.open(try V3.schema(), plan: FailingPlan.self) }?.code == .migrationFailed)
        let files = try home.files()
        // A refused open: the blob files the failed migration left (unreferenced) stay.
        #expect(
            refusal {
                try home.open(
                    try F.blog {
                        $0[named: "Post"].attributes[0].valueType = .int; $0[named: "Post"].indexes = []
                    })
            }?.code == .schemaMismatch)
        #expect(try home.files() == files, "the files are byte-identical")
        var required = V2.entities
        required[named: "Post"].attributes[1].isOptional = false
        #expect(refusal { try home.open(try Schema(required)) }?.code == .missingValue)
        #expect(try home.files() == files, "the files are byte-identical")
        // An open that goes ahead collects them (in the background, once it has returned).
        let store = try home.open(try V2.schema(), plan: LaterPlan.self)
        store.engine.collectBlobsFoundAtOpen()
        try store.close()
        let after = try home.files()
        #expect(after.keys.filter { $0.hasPrefix("blobs/") }.count < files.keys.filter { $0.hasPrefix("blobs/") }.count)
    }

    @Test func aRefusedOpenLeavesTheLeftoversOfAnEarlierMigrationAndTheirBlobsInPlace() throws {
        let home = MigrationHome()
        _ = try store(home, BlogModel.schema)
        // What a migration interrupted by a crash leaves: keys of generation 1, one of them a blob.
        let leftover: [UInt8] = [0x01, 0, 0, 0, 1] + Array("R leftover".utf8)
        do {
            let store = try home.open(BlogModel.schema)
            try store.engine.write { $0.putExternal(leftover, [UInt8](repeating: 7, count: 5000)) }
            // A second alpha, for a uniqueness rule over titles to refuse.
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.post(title: "alpha", content: "dup", date: F.epoch)]))
            try store.close()
        }
        let files = try home.files()
        #expect(files.keys.contains { $0.hasPrefix("blobs/") }, "the leftover is a blob file")
        let refusals: [(String, Schema, (any SchemaMigrationPlan.Type)?)] = [
            (
                "a type change",
                try F.blog {
                    $0[named: "Post"].attributes[0].valueType = .int; $0[named: "Post"].indexes = []
                }, nil
            ),
            ("a new rule over collisions", try F.blog { $0[named: "Post"].uniquenessConstraints = [.init(["title"])] }, nil),
            ("nulls in a required attribute", try Self.requiredContent(), nil),
            ("an unknown version", try V3.schema(), LaterPlan.self),
            (
                "an entity removed without a plan",
                try F.blog {
                    $0.removeAll { $0.name == "Attachment" }; $0[named: "Post"].relationships.removeAll { $0.name == "attachments" }
                }, nil
            ),
        ]
        for (label, schema, plan) in refusals {
            _ = refusal { try home.open(schema, plan: plan) }
            #expect(try home.files() == files, "\(label): the files are byte-identical, the leftover blob too")
        }
        // A history state that does not decode is found before the sweep, too.
        do {
            let store = try home.open(BlogModel.schema)
            try store.engine.write { $0.put([0x00] + Array("history".utf8), [1, 0, 0]) }
            try store.close()
        }
        let damaged = try home.files()
        #expect(refusal { try home.open(BlogModel.schema) }?.code == .corrupted)
        let after = try home.files()
        #expect(
            after == damaged,
            "a damaged history state: the files are byte-identical, the leftovers too: \(Set(after.keys).symmetricDifference(damaged.keys)) \(after.keys.filter { after[$0] != damaged[$0] })"
        )
        do {
            let engine = try LogStore.open(at: home.path, options: F.configuration(BlogModel.schema, path: home.path).options)
            try engine.write { $0.delete([0x00] + Array("history".utf8)) }
            try engine.close()
        }
        // An open that goes ahead sweeps the leftovers (in the background: here, to its end).
        let store = try home.open(BlogModel.schema)
        store.sweepGenerations()
        #expect(try store.engine.value(forKey: leftover) == nil)
        try store.close()
    }
}

extension WALDataStore {
    /// Closes the store after `body` has read it.
    func closing<T>(_ body: (WALDataStore) throws -> T) throws -> T {
        defer { try? close() }
        return try body(self)
    }
}

extension DefaultSnapshot {
    func with(_ name: String, _ value: PropertyValue) -> DefaultSnapshot {
        var copy = self
        copy[name] = value
        return copy
    }
}
