import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Observed fetches of a WALDataStore: the first value, values after the saves that change the
/// answer and none after those that cannot, no value before its save, no repeats, the changes
/// between values, and the end of an observation.
@Suite(.timeLimit(.minutes(10))) struct ObservationTests {
    @Test func theFirstValueIsTheCurrentAnswerAndEachSaveThatChangesItIsSeenOnceItReturns() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        try store.insertPost("avocado")
        let observation = try store.observe(postsBeginningWithA)
        var values = observation.makeAsyncIterator()
        #expect(try await values.next()?.titles == ["avocado"])
        try store.insertPost("apple")
        // The save has returned, so its answer is already there: ending the observation now
        // still delivers it (and nothing older), then the end.
        observation.cancel()
        #expect(try await values.next()?.titles == ["apple", "avocado"])
        #expect(try await values.next() == nil)

        // Two saves before the consumer looks: it gets the newest answer, never an older one.
        let second = try store.observe(postsBeginningWithA)
        var newest = second.makeAsyncIterator()
        #expect(try await newest.next()?.titles == ["apple", "avocado"])
        try store.insertPost("apricot")
        try store.insertPost("almond")
        second.cancel()
        #expect(try await newest.next()?.titles == ["almond", "apple", "apricot", "avocado"])
        #expect(try await newest.next() == nil)
        try store.close()
    }

    @Test func onlySavesThatCanChangeTheAnswerRerunTheFetch() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let inside = try store.insertPost("apple")
        let outside = try store.insertPost("banana")
        let observation = try store.observe(postsBeginningWithA)
        func reruns(_ body: () throws -> Void) rethrows -> Int {
            let before = store.observedFetchesRerun
            try body()
            return store.observedFetchesRerun - before
        }
        // Another entity; a property the fetch does not read, of an object outside the answer.
        #expect(try reruns { _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "news")])) } == 0)
        #expect(try reruns { try store.update(outside, ["content": "text"]) } == 0)
        #expect(try reruns { try store.deleteObject(outside) } == 0)
        // A property the predicate reads; an object of the answer; an insert of the entity.
        let other = try store.insertPost("cherry")
        #expect(try reruns { try store.update(other, ["title": "cranberry"]) } == 1)
        #expect(try reruns { try store.update(inside, ["content": "text"]) } == 1)
        #expect(try reruns { try store.insertPost("apricot") } == 1)
        // An insert the predicate rejects, checked on the new object without a fetch.
        #expect(try reruns { try store.insertPost("date") } == 0)
        #expect(try reruns { try store.deleteObject(inside) } == 1)
        observation.cancel()
        #expect(try reruns { try store.insertPost("apple") } == 0)
        try store.close()
    }

    @Test func aFetchThroughARelationshipRerunsWhenTheRelatedObjectsChange() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let tag = BlogModel.tag(name: "news")
        let post = BlogModel.post(title: "p", date: .distantPast, tags: [tag.persistentIdentifier])
        let saved = try await store.save(DataStoreSaveChangesRequest(inserted: [post, tag]))
        let tagID = saved.remappedIdentifiers[tag.persistentIdentifier]!
        let tagged = FetchDescriptor(entityName: "Post", predicate: .relationship("tags").any(.attribute("name") == "news"))
        var values = try store.observe(tagged).makeAsyncIterator()
        #expect(try await values.next()?.snapshots.count == 1)
        try store.update(tagID, ["name": "old"])
        let next = try #require(try await values.next())
        #expect(next.snapshots.isEmpty && next.deleted.count == 1)
        try store.close()
    }

    @Test func anAnswerEqualToTheLastOneIsNotRepeated() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let id = try store.insertPost("apple")
        var values = try store.observe(postsBeginningWithA).makeAsyncIterator()
        #expect(try await values.next()?.titles == ["apple"])
        // Re-runs the fetch (an insert of the entity) and finds the same answer: no value.
        try store.insertPost("banana")
        // Changes the answer and changes it back before the consumer looks: no value either.
        try store.update(id, ["title": "avocado"])
        try store.update(id, ["title": "apple"])
        try store.close()
        #expect(try await values.next() == nil)
    }

    @Test func eachValueNamesTheObjectsInsertedDeletedAndUpdatedSinceTheLastOne() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let apple = try store.insertPost("apple")
        let apricot = try store.insertPost("apricot")
        var values = try store.observe(postsBeginningWithA).makeAsyncIterator()
        let first = try #require(try await values.next())
        #expect(first.inserted == [apple, apricot] && first.deleted.isEmpty && first.updated.isEmpty)
        let almond = try store.insertPost("almond")
        try store.update(apple, ["content": "red"])
        try store.update(apricot, ["title": "blueberry"])
        let next = try #require(try await values.next())
        #expect(next.titles == ["almond", "apple"])
        #expect(next.inserted == [almond] && next.deleted == [apricot] && next.updated == [apple])
        try store.close()
    }

    @Test func cancellingTheIteratingTaskEndsTheObservationAndFreesItsRegistration() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let observation = try store.observe(postsBeginningWithA)
        let transactionsHome = WALHome()
        defer { transactionsHome.temporary.remove() }
        let (started, signal) = AsyncStream<Void>.makeStream()
        let task = Task {
            var count = 0
            for try await _ in observation {
                count += 1
                signal.yield()
            }
            return count
        }
        var waiting = started.makeAsyncIterator()
        await waiting.next()
        #expect(store.observerCount == 1)
        task.cancel()
        #expect(try await task.value == 1)
        #expect(store.observerCount == 0)
        // A sequence dropped without being iterated ends too.
        do { _ = try store.observe(postsBeginningWithA) }
        #expect(store.observerCount == 0)
        try store.close()
    }

    @Test func anEraseRerunsEveryObservedFetch() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        try store.insertPost("apple")
        var values = try store.observe(postsBeginningWithA).makeAsyncIterator()
        #expect(try await values.next()?.titles == ["apple"])
        try await store.erase()
        #expect(try await values.next()?.titles == [])
        try store.close()
    }

    @Test func aBatchDeleteIsSeen() async throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        try store.insertPost("apple")
        try store.insertPost("apricot")
        var values = try store.observe(postsBeginningWithA).makeAsyncIterator()
        #expect(try await values.next()?.titles == ["apple", "apricot"])
        try await store.delete(DataStoreBatchDeleteRequest(entityName: "Post", predicate: .attribute("title") == "apple"))
        #expect(try await values.next()?.titles == ["apricot"])
        try store.close()
    }

    @Test func observingAClosedStoreOrAnInvalidFetchIsRefused() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try home.open()
        let unknown = #expect(throws: DataStoreError.self) { try store.observe(FetchDescriptor(entityName: "Nope")) }
        #expect(unknown?.code == .unknownEntity)
        let noHistory = #expect(throws: DataStoreError.self) { try store.observeTransactions() }
        #expect(noHistory?.code == .invalidRequest)
        try store.close()
        let closed = #expect(throws: DataStoreError.self) { try store.observe(postsBeginningWithA) }
        #expect(closed?.code == .closed)
        #expect(store.observerCount == 0)
    }

    /// Model-based: tasks save random inserts, renames and deletes at once; the observer's
    /// last value is what a fresh fetch answers, and every transaction is streamed once.
    @Test func concurrentSavesAreNeverMissed() async throws {
        for history in [false, true] {
            let home = WALHome()
            defer { home.temporary.remove() }
            let store = try WALDataStore(history ? home.historyConfiguration() : home.configuration)
            let results = try store.observe(postsBeginningWithA)
            let transactions = history ? try store.observeTransactions() : nil
            let lastValue = Task { () -> [DefaultSnapshot]? in
                var last: [DefaultSnapshot]?
                for try await value in results { last = value.snapshots }
                return last
            }
            let streamed = Task { () -> [UInt64] in
                var tokens: [UInt64] = []
                if let transactions { for try await t in transactions { tokens.append(t.transactionIdentifier) } }
                return tokens
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        var generator = SplitMix(seed: UInt64(writer + 1) * 7919)
                        var mine: [PersistentIdentifier] = []
                        for step in 0..<15 {
                            let title = ["a", "b"][Int(generator.next() % 2)] + "\(writer)-\(step)"
                            switch generator.next() % 3 {
                            case 0 where !mine.isEmpty:
                                try store.update(mine[Int(generator.next() % UInt64(mine.count))], ["title": .string(title)])
                            case 1 where !mine.isEmpty:
                                try store.deleteObject(mine.remove(at: Int(generator.next() % UInt64(mine.count))))
                            default:
                                let post = BlogModel.post(title: title, date: .distantPast)
                                let saved = try await store.save(DataStoreSaveChangesRequest(inserted: [post]))
                                mine.append(saved.remappedIdentifiers[post.persistentIdentifier]!)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let fresh = try store.fetch(postsBeginningWithA).fetchedSnapshots
            let recorded = history ? try store.allHistory().map(\.transactionIdentifier) : []
            try store.close()
            #expect(try await lastValue.value == fresh, "history \(history)")
            #expect(try await streamed.value == recorded, "history \(history)")
            #expect(recorded.count == (history ? 60 : 0))
        }
    }
}

/// A small deterministic generator (SplitMix64) for the model-based tests.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
