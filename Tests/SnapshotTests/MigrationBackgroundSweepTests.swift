import Engine
import EngineTestSupport
import Foundation
@testable import Snapshot
import SnapshotTestSupport
import Testing

/// The sweep of the generation a migration replaced runs after the open, in the background:
/// the store is whole and usable before it, a close stops it, the next open goes on with it,
/// and it deletes nothing of the live generation while saves go on.
@Suite struct MigrationBackgroundSweepTests {
    typealias F = MigrationFixture

    /// The keys of generation 0 (the blog model's first layout): record-layer kinds `R A B C M N I U`.
    static func oldGenerationKeys(_ store: WALDataStore) throws -> Int {
        try F.storedKeyKinds(store).filter { $0.key != 0x00 && $0.key != 0x01 }.values.reduce(0, +)
    }

    @Test func aMigratedStoreIsWholeBeforeTheOldGenerationIsSweptAndTheSweepDeletesOnlyIt() throws {
        let home = MigrationHome()
        let old = try home.filled()
        let expected = old.map { $0.replacingOccurrences(of: "Post_", with: "Article_") }.sorted()
        let store = try home.open(try F.renamedPost(), sweepsInBackground: false)
        let left = try Self.oldGenerationKeys(store)
        #expect(left > 10, "the open itself swept nothing")
        #expect(try F.dump(store) == expected)
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "later")]))
        store.sweepGenerations()
        #expect(try Self.oldGenerationKeys(store) == 0)
        #expect(try F.dump(store).count == expected.count + 1)
        try store.close()
    }

    @Test func aCloseStopsTheSweepAndTheNextOpenGoesOnWithIt() throws {
        let home = MigrationHome()
        try home.filled()
        let schema = try F.renamedPost()
        let first = try home.open(schema, sweepsInBackground: false)
        let left = try Self.oldGenerationKeys(first)
        try first.close()
        first.sweepGenerations()  // stopped by the close: deletes nothing
        let second = try home.open(schema, sweepsInBackground: false)
        #expect(try Self.oldGenerationKeys(second) == left, "neither the stopped sweep nor the open deleted a key")
        second.sweepGenerations()
        #expect(try Self.oldGenerationKeys(second) == 0)
        try second.close()
        // An open that finds nothing to sweep starts nothing; the store stays as it is.
        let third = try home.open(schema)
        #expect(try Self.oldGenerationKeys(third) == 0 && Set(try F.storedKeyKinds(third).keys) == [0x00, 0x01])
        try third.close()
    }

    @Test func aSweepStoppedBetweenCommitsLeavesTheRestAndTheLiveGenerationAlone() throws {
        let directory = TemporaryDirectory("walstore-sweep")
        let engine = try LogStore.open(at: directory.path + "/store", options: LogStore.Options())
        defer { try? engine.close() }
        let dead = RecordSpace.prefix(of: 3), live = RecordSpace.prefix(of: 4)
        try engine.write { batch in
            for i in 0..<10 { batch.put(dead + [0x52, UInt8(i)], [1]) }
            for i in 0..<3 { batch.put(live + [0x52, UInt8(i)], [2]) }
        }
        func count(_ prefix: [UInt8]) throws -> Int {
            var n = 0
            var cursor = try engine.scan(prefix: prefix)
            while try cursor.next() != nil { n += 1 }
            return n
        }
        var asked = 0
        let finished = try GenerationSweeper.discardAll(except: 4, in: engine, chunk: 4) {
            asked += 1
            return asked > 1
        }
        #expect(!finished && asked == 2)
        #expect(try count(dead) == 6, "one commit of 4 deletes, then stopped")
        try engine.write { $0.put([0x52, 9], [3]) }  // a key of generation 0
        #expect(try GenerationSweeper.holdsOtherGenerations(than: 4, in: engine))
        #expect(try GenerationSweeper.discardAll(except: 4, in: engine, chunk: 4))
        #expect(try count(dead) == 0 && count([0x52]) == 0)
        #expect(try count(live) == 3, "the live generation is untouched")
        #expect(try !GenerationSweeper.holdsOtherGenerations(than: 4, in: engine))
    }

    @Test func savesGoOnWhileTheSweepDeletesTheOldGeneration() throws {
        let home = MigrationHome()
        try home.filled()
        let store = try home.open(try F.renamedPost(), sweepsInBackground: false)
        // Leftovers of a later generation too, and commits of 50 deletes: the sweep makes many
        // commits, between the saves'.
        try store.engine.write { batch in
            for i in 0..<3000 { batch.put(RecordSpace.prefix(of: 7) + [0x52] + withUnsafeBytes(of: UInt32(i).bigEndian, Array.init), []) }
        }
        let sweep = BackgroundSweep(engine: store.engine, live: 1, chunk: 50)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            sweep.run()
            done.signal()
        }
        var names: [String] = []
        for i in 0..<20 {
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "t\(i)")]))
            names.append("t\(i)")
        }
        done.wait()
        #expect(try Self.oldGenerationKeys(store) == 0 && !GenerationSweeper.holdsOtherGenerations(than: 1, in: store.engine))
        let tags = try store.fetch(FetchDescriptor(entityName: "Tag")).fetchedSnapshots.compactMap { s -> String? in
            if case .string(let name) = s["name"] { return name }
            return nil
        }
        #expect(Set(names).isSubset(of: tags) && tags.count == names.count + 2)
        try store.close()
    }
}

/// A rewrite writes each group of objects on another thread while it maps the next; a
/// uniqueness entry is found taken wherever the first claim is: in the group being mapped, in
/// the one being written, or in one committed before.
@Suite struct MigrationPipelinedCommitTests {
    typealias F = MigrationFixture

    /// Posts of the given titles, rewritten under a new uniqueness rule on the title in groups
    /// of `group` objects and commits of 2 operations: the refusal, and the posts saved.
    static func rewrite(titles: [String], group: Int) throws -> (DataStoreError?, Set<PersistentIdentifier>) {
        let home = MigrationHome()
        let store = try home.open(BlogModel.schema)
        defer { try? store.close() }
        let posts = titles.enumerated().map { BlogModel.post(title: $1, content: nil, date: F.epoch.addingTimeInterval(Double($0))) }
        let saved = try store.save(DataStoreSaveChangesRequest(inserted: posts))
        let ids = Set(posts.map { saved.remappedIdentifiers[$0.persistentIdentifier]! })
        let header = try #require(try StoreHeader.read(from: store.engine))
        let unique = try F.blog { $0[named: "Post"].uniquenessConstraints = [.init(["title"])] }
        var rewriter = GenerationRewriter(
            mapping: SchemaMapping(from: BlogModel.schema, to: unique), source: RecordSpace(engine: store.engine, generation: header.generation),
            destination: RecordSpace(engine: store.engine, generation: header.generation + 1), storeIdentifier: header.identifier,
            assetThreshold: store.engine.options.blobThreshold)
        rewriter.objectsPerGroup = group
        rewriter.operationsPerCommit = 2
        do { try rewriter.run() } catch let error as DataStoreError { return (error, ids) }
        return (nil, ids)
    }

    @Test func aRewriteInManySmallCommitsNamesEveryObjectOfEveryCollision() throws {
        // 30 posts, each title held by 3 of them; records are read in primary-key order, so the
        // claims of one title fall in the same, the adjacent and earlier groups.
        let (refusal, ids) = try Self.rewrite(titles: (0..<30).map { "title \($0 % 10)" }, group: 2)
        let error = try #require(refusal)
        #expect(error.code == .uniqueness && error.constraint == ["title"])
        let named = [error.identifier].compactMap { $0 } + error.relatedIdentifiers
        #expect(Set(named) == ids && named.count == 30, "every claimant of every title, once: \(named.count)")
    }

    @Test func aRewriteFindsTheFirstClaimInTheGroupBeingWritten() throws {
        // One object per group: the second post's claim is checked while the first one's group
        // is being written (its commit is synced), before it is committed.
        let (refusal, ids) = try Self.rewrite(titles: ["same", "same"], group: 1)
        let error = try #require(refusal)
        #expect(error.code == .uniqueness && Set([error.identifier].compactMap { $0 } + error.relatedIdentifiers) == ids)
    }
}
