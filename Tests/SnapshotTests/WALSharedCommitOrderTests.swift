import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Saves of every kind that share commits end as the same saves written one by one in arrival
/// order; a group planned while the one before it is being written reads that group's writes,
/// and fails with it when its commit fails.
@Suite struct WALSharedCommitOrderTests {
    /// Starts `saves` on threads of their own while the store's lock is held, one at a time so
    /// that they queue in the order given, then releases the lock; each one's outcome.
    static func saveInOrder(
        _ store: WALDataStore, _ saves: [DataStoreSaveChangesRequest<DefaultSnapshot>]
    ) throws -> [Result<DataStoreSaveChangesResult<DefaultSnapshot>, any Error>] {
        let outcomes = Locked<[Int: Result<DataStoreSaveChangesResult<DefaultSnapshot>, any Error>]>([:])
        let group = DispatchGroup()
        try store.exclusively {
            for (i, request) in saves.enumerated() {
                group.enter()
                Thread.detachNewThread {
                    let outcome = Result { try store.save(request) }
                    outcomes.withLock { $0[i] = outcome }
                    group.leave()
                }
                let deadline = Date().addingTimeInterval(10)
                while store.coalescer.waiting < i + 1 && Date() < deadline { usleep(200) }
                #expect(store.coalescer.waiting == i + 1)
            }
        }
        group.wait()
        return outcomes.withLock { o in saves.indices.map { o[$0]! } }
    }

    /// The outcome's error code, or nil for a success.
    static func code(_ outcome: Result<DataStoreSaveChangesResult<DefaultSnapshot>, any Error>) -> DataStoreError.Code? {
        guard case .failure(let error) = outcome else { return nil }
        return (error as? DataStoreError)?.code ?? .engine
    }

    /// Tags a and b; post p1 (tag a) and p2 (tags a and b, one attachment).
    static func fill(_ store: WALDataStore) throws {
        let a = BlogModel.tag(name: "a"), b = BlogModel.tag(name: "b")
        let p1 = BlogModel.post(title: "p1", date: Date(timeIntervalSinceReferenceDate: 1), tags: [a.persistentIdentifier])
        var p2 = BlogModel.post(title: "p2", date: Date(timeIntervalSinceReferenceDate: 2), tags: [a.persistentIdentifier, b.persistentIdentifier])
        let attachment = BlogModel.attachment(imageData: Data([1, 2, 3]), post: p2.persistentIdentifier)
        p2["attachments"] = .toMany([attachment.persistentIdentifier])
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [a, b, p1, p2, attachment]))
    }

    /// Inserts, updates and deletes of overlapping objects, some refused because of an earlier
    /// save of the list (an update of a deleted post, a link to a deleted tag).
    static func mixedSaves(_ store: WALDataStore) throws -> [DataStoreSaveChangesRequest<DefaultSnapshot>] {
        func named(_ entity: String, _ key: String, _ value: String) throws -> DefaultSnapshot {
            try #require(try store.all(entity).first { $0[key] == .string(value) })
        }
        let p1 = try named("Post", "title", "p1"), p2 = try named("Post", "title", "p2")
        let a = try named("Tag", "name", "a"), b = try named("Tag", "name", "b")
        var renamed = p1
        renamed["title"] = "p1-renamed"
        var final = p1
        final["title"] = "p1-final"
        final["tags"] = .toMany([b.persistentIdentifier])
        var p2Edit = p2
        p2Edit["title"] = "p2-edited"
        let date = Date(timeIntervalSinceReferenceDate: 9)
        return [
            DataStoreSaveChangesRequest(updated: [renamed]),
            DataStoreSaveChangesRequest(deleted: [p2]),
            DataStoreSaveChangesRequest(inserted: [BlogModel.post(title: "new", date: date, tags: [a.persistentIdentifier, b.persistentIdentifier])]),
            DataStoreSaveChangesRequest(updated: [final]),
            DataStoreSaveChangesRequest(updated: [p2Edit]),
            DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "a", colour: "red")]),
            DataStoreSaveChangesRequest(deleted: [b]),
            DataStoreSaveChangesRequest(inserted: [BlogModel.post(title: "late", date: date, tags: [b.persistentIdentifier])]),
        ]
    }

    @Test func mixedSavesSharingACommitEndAsTheSameSavesWrittenOneByOne() throws {
        let grouped = WALHome(), serial = WALHome()
        defer { grouped.temporary.remove(); serial.temporary.remove() }
        let groupedStore = try grouped.open(), serialStore = try serial.open()
        try Self.fill(groupedStore)
        try Self.fill(serialStore)

        let before = groupedStore.engine.statistics.lastSequence
        let groupedOutcomes = try Self.saveInOrder(groupedStore, try Self.mixedSaves(groupedStore))
        #expect(groupedStore.engine.statistics.lastSequence == before + 1, "eight saves, one commit")
        let serialOutcomes = try Self.mixedSaves(serialStore).map { request in Result { try serialStore.save(request) } }

        let codes = groupedOutcomes.map(Self.code)
        #expect(codes == [nil, nil, nil, nil, .danglingReference, nil, nil, .danglingReference])
        #expect(codes == serialOutcomes.map(Self.code))
        #expect(try WALPowerLossTests.shape(groupedStore) == WALPowerLossTests.shape(serialStore))
        let tags = try groupedStore.all("Tag")
        #expect(tags.map { $0["colour"] } == [.string("red")], "the insert of a merged into it; b is deleted")
        // The upsert's result names the stored tag.
        let upsert = try groupedOutcomes[5].get()
        #expect(Array(upsert.remappedIdentifiers.values) == tags.map(\.persistentIdentifier))
        try groupedStore.close()
        let reopened = try grouped.open()
        #expect(try WALPowerLossTests.shape(reopened) == WALPowerLossTests.shape(serialStore))
    }

    @Test func observersOfASharedCommitEndWithItsAnswer() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        try Self.fill(store)
        let observation = try store.observe(FetchDescriptor(entityName: "Post"))
        let p2 = try #require(try store.all("Post").first { $0["title"] == .string("p2") })
        let before = store.observedFetchesRerun
        let date = Date(timeIntervalSinceReferenceDate: 5)
        let outcomes = try Self.saveInOrder(
            store,
            [
                DataStoreSaveChangesRequest(inserted: [BlogModel.post(title: "x", date: date)]),
                DataStoreSaveChangesRequest(deleted: [p2]),
                DataStoreSaveChangesRequest(inserted: [BlogModel.post(title: "y", date: date)]),
            ])
        for outcome in outcomes { _ = try outcome.get() }
        // Each save is published once, after the commit: a save whose change the answer read
        // after an earlier one already shows needs no rerun.
        #expect((1...3).contains(store.observedFetchesRerun - before))
        let titles = observation.newestAnswer?.compactMap { if case .string(let t)? = $0["title"] { t } else { nil } }
        #expect(titles?.sorted() == ["p1", "x", "y"])
        observation.cancel()
    }

    @Test func aGroupPlannedWhileTheOneBeforeIsWrittenReadsItsWrites() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        store.coalescer.limitGroups(to: 1)
        let before = store.engine.statistics.lastSequence
        // One save a group: the second is planned while the first is being written, and
        // merges into the tag the first inserts (its uniqueness entry is not committed yet).
        let outcomes = try Self.saveInOrder(
            store,
            [
                DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "x")]),
                DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "x", colour: "blue")]),
                DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "y")]),
            ])
        let results = try outcomes.map { try $0.get() }
        #expect(store.engine.statistics.lastSequence == before + 3, "a commit a group")
        let tags = try store.all("Tag")
        #expect(tags.count == 2)
        let x = try #require(tags.first { $0["name"] == .string("x") })
        #expect(x["colour"] == .string("blue"))
        #expect(Array(results[0].remappedIdentifiers.values) == [x.persistentIdentifier])
        #expect(Array(results[1].remappedIdentifiers.values) == [x.persistentIdentifier])
    }

    static var faultConfiguration: WALStoreConfiguration {
        WALStoreConfiguration(name: "Blog", schema: BlogModel.schema, path: "/shared-commit-store")
    }

    @Test func aFailedSyncFailsItsGroupAndTheGroupPlannedOnTopOfIt() throws {
        let fs = FaultInjectingFileSystem()
        let store = try WALDataStore(Self.faultConfiguration, fileSystem: fs)
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "kept")]))
        store.coalescer.limitGroups(to: 1)
        fs.failNext(.sync, errno: EIO)
        let outcomes = try Self.saveInOrder(
            store,
            [
                DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "x")]),
                DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "x", colour: "blue")]),
            ])
        #expect(outcomes.map(Self.code) == [.engine, .engine], "the second was planned on the first's writes")
        #expect(try store.all("Tag").map { $0["name"] } == [.string("kept")])
        try? store.close()
        fs.powerLoss()
        let reopened = try WALDataStore(Self.faultConfiguration, fileSystem: fs)
        #expect(try reopened.all("Tag").map { $0["name"] } == [.string("kept")])
        // The uniqueness entry of the failed insert is not there: a new x inserts.
        let again = try reopened.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "x")]))
        #expect(again.remappedIdentifiers.count == 1)
        #expect(try reopened.all("Tag").count == 2)
    }

    @Test func aFailedWriteFailsTheGroupsOnItAndTheNextGroupIsPlannedOnTheStoreAsItIs() throws {
        let fs = FaultInjectingFileSystem()
        let store = try WALDataStore(Self.faultConfiguration, fileSystem: fs)
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "kept")]))
        store.coalescer.limitGroups(to: 1)
        fs.failNext(.write, errno: EIO)
        let outcomes = try Self.saveInOrder(
            store,
            [
                DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "x")]),
                DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "x", colour: "blue")]),
                DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "x", colour: "green")]),
            ])
        #expect(outcomes.map(Self.code) == [.engine, .engine, nil])
        let tags = try store.all("Tag")
        #expect(Set(tags.map { $0["colour"] }) == [.null, .string("green")], "kept, and the third save's new x")
        try store.close()
        let reopened = try WALDataStore(Self.faultConfiguration, fileSystem: fs)
        #expect(try reopened.all("Tag").count == 2)
    }

    @Test func concurrentTasksUpdatingAndDeletingLoseNothing() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let tag = BlogModel.tag(name: "shared")
        let tagID = try #require(try await store.save(DataStoreSaveChangesRequest(inserted: [tag])).remappedIdentifiers[tag.persistentIdentifier])
        let kept = try await withThrowingTaskGroup(of: [String].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var mine: [String] = []
                    for i in 0..<6 {
                        let post = BlogModel.post(title: "t\(task)-\(i)", date: Date(timeIntervalSinceReferenceDate: Double(i)), tags: [tagID])
                        let result = try await store.save(DataStoreSaveChangesRequest(inserted: [post]))
                        let id = try #require(result.remappedIdentifiers[post.persistentIdentifier])
                        var edited = post.copy(persistentIdentifier: id, remappedIdentifiers: [:])
                        edited["title"] = .string("edited-t\(task)-\(i)")
                        _ = try await store.save(DataStoreSaveChangesRequest(updated: [edited]))
                        if i % 2 == 0 {
                            _ = try await store.save(DataStoreSaveChangesRequest(deleted: [edited]))
                        } else {
                            mine.append("edited-t\(task)-\(i)")
                        }
                    }
                    return mine
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let titles = try store.all("Post").compactMap { if case .string(let t)? = $0["title"] { t } else { nil } }
        #expect(titles.sorted() == kept.sorted())
        #expect(try store.snapshot(tagID)?["posts"]?.referencedIdentifiers.count == kept.count)
    }
}
