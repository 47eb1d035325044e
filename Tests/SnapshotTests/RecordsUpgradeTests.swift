import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// The upgrade of a store of records format 1 (header version 3) to format 2 (header version
/// 4) at its first open, and the prefix rule of header-only migrations in format 2.
@Suite struct RecordsUpgradeTests {
    typealias F = MigrationFixture
    static let headerKey = [0x00] + Array("store".utf8)

    /// Every entry of the live generation but the records and links (which change format):
    /// assets, back references, index and uniqueness entries.
    static func kept(_ store: WALDataStore) throws -> [[UInt8]] {
        try [0x41, 0x42, 0x49, 0x55].flatMap { tag in try store.liveEntries(prefix: [UInt8(tag)]).map { $0.key + [0xFF] + $0.value } }
    }

    @Test func aFormat1StoreIsRewrittenInFormat2AtItsFirstOpen() throws {
        let home = MigrationHome()
        defer { home.temporary.remove() }
        var store = try home.open(BlogModel.schema)
        try F.fill(store)
        let dump = try F.dump(store)
        let kept = try Self.kept(store)
        let links = try store.liveEntries(prefix: [0x4D]).count
        try store.rewriteInRecordsFormat1()
        #expect(try #require(try store.engine.value(forKey: Self.headerKey))[0] == 3)
        #expect(try store.liveEntries(prefix: [0x52]).allSatisfy { $0.value.first == 1 }, "the fixture is of records format 1")
        #expect(try store.liveEntries(prefix: [0x4D]).allSatisfy { !$0.value.isEmpty }, "its links are CDMR record values")
        try store.close()

        store = try home.open(BlogModel.schema)
        #expect(try #require(try store.engine.value(forKey: Self.headerKey))[0] == 4)
        #expect(try F.dump(store) == dump, "every object, value, to-one and to-many as it was")
        #expect(try Self.kept(store) == kept, "assets, back references, index and uniqueness entries as they were")
        let records = try store.liveEntries(prefix: [0x52])
        #expect(records.count == 8 && records.allSatisfy { $0.value.first == 2 })
        let newLinks = try store.liveEntries(prefix: [0x4D])
        #expect(newLinks.count == links && newLinks.allSatisfy(\.value.isEmpty))
        #expect(try F.keyKinds(store)[0x52] == nil, "the format-1 generation is swept")
        #expect(try store.fetch(FetchDescriptor(entityName: "Tag", predicate: .attribute("name") == "misc")).fetchedSnapshots.count == 1)
        try store.close()
    }

    @Test func aFormat1StoreIsUpgradedThenMigratedInOneOpen() throws {
        let home = MigrationHome()
        defer { home.temporary.remove() }
        var store = try home.open(BlogModel.schema)
        try F.fill(store)
        try store.rewriteInRecordsFormat1()
        try store.close()
        let renamed = try F.blog {
            $0[named: "Tag"].attributes[1].name = "hue"; $0[named: "Tag"].attributes[1].originalName = "colour"
        }
        store = try home.open(renamed)
        #expect(try #require(try store.engine.value(forKey: Self.headerKey))[0] == 4)
        #expect(try store.all("Tag").compactMap { $0["hue"] }.contains(.string("red")))
        try store.close()
    }

    /// Power loss at every I/O operation of the upgrade: each time the next open finds the store
    /// whole, in format 1 or in format 2, and ends upgraded with every object as it was.
    @Test func powerLossAtEveryOperationOfTheUpgradeLeavesTheOldStoreOrTheNewOne() throws {
        let path = "/upgrade-store"
        let base = FaultInjectingFileSystem()
        let schema = BlogModel.schema
        func open(_ fs: FaultInjectingFileSystem) throws -> WALDataStore {
            try WALDataStore(F.configuration(schema, path: path), fileSystem: fs)
        }
        let dump: [String]
        do {
            let store = try open(base)
            try F.fill(store)
            dump = try F.dump(store)
            try store.rewriteInRecordsFormat1()
            try store.close()
        }
        var crashAt = 1
        var completed = false
        var sawOld = false, sawNew = false
        while !completed && crashAt < 3000 {
            let fs = base.clone()
            fs.crash(atOperation: crashAt)
            let before = fs.operationCount
            let upgraded = try? open(fs)
            // The sweep of the old generation, which runs after the open, is in the window too.
            upgraded?.sweepGenerations()
            completed = upgraded != nil && fs.operationCount - before < crashAt
            fs.powerLoss()
            try? upgraded?.close()
            let engine = try LogStore.open(at: path, options: F.configuration(schema, path: path).options, fileSystem: fs, collectingBlobs: false)
            let version = try #require(try engine.value(forKey: Self.headerKey))[0]
            try engine.close()
            #expect(version == 3 || version == 4, "power loss at operation \(crashAt)")
            if version == 3 { sawOld = true } else { sawNew = true }
            #expect(upgraded == nil || version == 4, "power loss at operation \(crashAt): an open that returned is upgraded")
            let store = try open(fs)
            #expect(try F.dump(store) == dump, "power loss at operation \(crashAt)")
            #expect(try F.keyKinds(store)[0x52] == nil, "power loss at operation \(crashAt): one generation is left")
            try store.close()
            crashAt += 1
        }
        #expect(completed && sawOld && sawNew, "the sweep reached the end of the upgrade (\(crashAt) operations)")
    }

    @Test func anAttributeAddedAfterAnEntitysLastFieldChangesOnlyTheHeader() throws {
        let home = MigrationHome()
        defer { home.temporary.remove() }
        try home.filled()
        // Tag's fields are name, colour (its only relationship is a to-many): "rank" comes last.
        let added = try F.blog { $0[named: "Tag"].attributes.append(.init("rank", .int, defaultValue: .int(7))) }
        let store = try home.open(added)
        #expect(try F.keyKinds(store)[0x01] == nil, "no new generation: the records are as they were")
        #expect(try store.all("Tag").allSatisfy { $0["rank"] == .int(7) }, "the missing field reads as the default")
        try store.close()
    }

    @Test func anAttributeAddedBeforeAnotherFieldRewritesTheRecords() throws {
        let home = MigrationHome()
        defer { home.temporary.remove() }
        let dump = try home.filled()
        // Attachment's fields are imageData, post: "caption" goes between them.
        let added = try F.blog { $0[named: "Attachment"].attributes.append(.init("caption", .string, defaultValue: "none")) }
        let store = try home.open(added)
        #expect(try F.keyKinds(store)[0x52] == nil, "the records are rewritten into a new generation")
        let attachments = try store.all("Attachment")
        #expect(attachments.count == 3 && attachments.allSatisfy { $0["caption"] == "none" && $0["post"]?.referencedIdentifiers.count == 1 })
        #expect(try F.dump(store).filter { !$0.hasPrefix("Attachment") } == dump.filter { !$0.hasPrefix("Attachment") })
        try store.close()
    }
}
