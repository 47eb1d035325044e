import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Saves that arrive while another save is being written share the next commit; each keeps its
/// own outcome, as if the saves had been written one after the other in arrival order. The
/// store's lock is held by the test so that the saves queue behind it, then released, so the
/// group is exactly the saves made meanwhile.
@Suite struct WALSharedCommitTests {
    /// Runs `saves` on threads of their own while the store's lock is held, releases it once all
    /// of them wait, and returns each one's outcome (in the order given).
    static func saveQueued(
        _ store: WALDataStore, _ saves: [DataStoreSaveChangesRequest<DefaultSnapshot>], queued: Int
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
            }
            // Every save waits in the queue.
            let deadline = Date().addingTimeInterval(10)
            while store.coalescer.waiting < queued && Date() < deadline { usleep(1_000) }
            #expect(store.coalescer.waiting == queued)
        }
        group.wait()
        return outcomes.withLock { o in saves.indices.map { o[$0]! } }
    }

    static func posts(_ n: Int, tag: PersistentIdentifier) -> [DataStoreSaveChangesRequest<DefaultSnapshot>] {
        (0..<n).map { i in
            DataStoreSaveChangesRequest(inserted: [BlogModel.post(title: "p\(i)", date: Date(timeIntervalSinceReferenceDate: Double(i)), tags: [tag])]
            )
        }
    }

    @Test func queuedInsertOnlySavesShareOneCommitAndEachGetsItsOwnIdentifiers() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let tag = BlogModel.tag(name: "t")
        let tagID = try #require(try store.save(DataStoreSaveChangesRequest(inserted: [tag])).remappedIdentifiers[tag.persistentIdentifier])
        let before = store.engine.statistics.lastSequence
        let saves = Self.posts(6, tag: tagID)
        let outcomes = try Self.saveQueued(store, saves, queued: 6)
        #expect(store.engine.statistics.lastSequence == before + 1, "six saves, one commit")
        var ids: [PersistentIdentifier] = []
        for (request, outcome) in zip(saves, outcomes) {
            let result = try outcome.get()
            #expect(result.remappedIdentifiers.count == 1, "a save's result names its own inserts only")
            let id = try #require(result.remappedIdentifiers[request.inserted[0].persistentIdentifier])
            #expect(try store.snapshot(id)?["title"] == request.inserted[0]["title"])
            ids.append(id)
        }
        #expect(Set(ids).count == 6)
        #expect(Set(try store.snapshot(tagID)?["posts"]?.referencedIdentifiers ?? []) == Set(ids), "every link of the group is written")
        try store.close()
        let reopened = try home.open()
        #expect(try reopened.all("Post").count == 6)
    }

    @Test func anInvalidSaveInAGroupFailsAloneAndTheOthersShareTheCommit() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let tag = BlogModel.tag(name: "t")
        let tagID = try #require(try store.save(DataStoreSaveChangesRequest(inserted: [tag])).remappedIdentifiers[tag.persistentIdentifier])
        var saves = Self.posts(5, tag: tagID)
        // A post naming a tag the store does not hold.
        let missing = try PersistentIdentifier.identifier(for: store.identifier, entityName: "Tag", primaryKey: UUID())
        saves.insert(
            DataStoreSaveChangesRequest(inserted: [BlogModel.post(title: "bad", date: Date(timeIntervalSinceReferenceDate: 0), tags: [missing])]),
            at: 2)
        let before = store.engine.statistics.lastSequence
        let outcomes = try Self.saveQueued(store, saves, queued: 6)
        for (i, outcome) in outcomes.enumerated() {
            if i == 2 {
                #expect(throws: DataStoreError.self) { try outcome.get() }
                if case .failure(let error as DataStoreError) = outcome { #expect(error.code == .danglingReference) }
            } else {
                #expect(try outcome.get().remappedIdentifiers.count == 1)
            }
        }
        #expect(store.engine.statistics.lastSequence == before + 1, "the five others share one commit")
        #expect(try store.all("Post").map { $0["title"] }.contains(.string("bad")) == false)
        #expect(try store.all("Post").count == 5)
    }

    @Test func savesOfAStoreWithHistoryShareACommitEachAsATransactionOfItsOwn() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        var configuration = home.configuration
        configuration.history = .enabled()
        let store = try WALDataStore(configuration)
        let tag = BlogModel.tag(name: "t")
        let tagID = try #require(try store.save(DataStoreSaveChangesRequest(inserted: [tag])).remappedIdentifiers[tag.persistentIdentifier])
        let before = store.engine.statistics.lastSequence
        let outcomes = try Self.saveQueued(store, Self.posts(4, tag: tagID), queued: 4)
        for outcome in outcomes { _ = try outcome.get() }
        #expect(store.engine.statistics.lastSequence == before + 1, "four saves, one commit")
        #expect(try store.fetchHistory(HistoryDescriptor()).count == 5, "one transaction a save")
    }

    @Test func manyTasksSavingAtOnceLoseNothing() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let tag = BlogModel.tag(name: "t")
        let tagID = try #require(try await store.save(DataStoreSaveChangesRequest(inserted: [tag])).remappedIdentifiers[tag.persistentIdentifier])
        let ids = try await withThrowingTaskGroup(of: [PersistentIdentifier].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var mine: [PersistentIdentifier] = []
                    for i in 0..<25 {
                        let post = BlogModel.post(title: "t\(task)-\(i)", date: Date(timeIntervalSinceReferenceDate: Double(i)), tags: [tagID])
                        let result = try await store.save(DataStoreSaveChangesRequest(inserted: [post]))
                        mine.append(try #require(result.remappedIdentifiers[post.persistentIdentifier]))
                    }
                    return mine
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(Set(ids).count == 200)
        #expect(try store.all("Post").count == 200)
        #expect(try store.snapshot(tagID)?["posts"]?.referencedIdentifiers.count == 200)
    }
}
