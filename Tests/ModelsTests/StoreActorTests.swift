import Foundation
import Models
import Snapshot
import Testing

/// A stand-in for state isolated to the actor: a ledger whose invariant (the total equals the
/// sum of the entries) breaks if two jobs ever interleave inside `record`.
@StoreActor final class Ledger {
    private(set) var entries: [Int] = []
    private(set) var total = 0
    private(set) var jobsOffQueue = 0

    func record(_ amount: Int) {
        if !StoreActor.sharedExecutor.isCurrentQueue { jobsOffQueue += 1 }
        let before = total
        entries.append(amount)
        total = before + amount
    }
}

@Suite struct StoreActorTests {
    @Test func isolatedCodeRunsOnTheExecutorsQueue() async {
        let checks = await StoreActor.run {
            StoreActor.shared.assertIsolated()
            StoreActor.shared.preconditionIsolated()
            return StoreActor.sharedExecutor.isCurrentQueue
        }
        #expect(checks)
    }

    @Test func codeOffTheActorIsNotOnTheQueue() async {
        #expect(!StoreActor.sharedExecutor.isCurrentQueue)
        let detached = await Task.detached { StoreActor.sharedExecutor.isCurrentQueue }.value
        #expect(!detached)
    }

    @Test func everyJobOfManyTasksRunsOnTheQueue() async {
        let onQueue = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<200 {
                group.addTask { @StoreActor in
                    StoreActor.shared.assertIsolated()
                    return StoreActor.sharedExecutor.isCurrentQueue
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(onQueue.count == 200)
        #expect(onQueue.allSatisfy { $0 })
    }

    @Test func codeAlreadyOnTheQueueIsIsolatedToTheActor() {
        // `assumeIsolated` asks the executor's `checkIsolated`, which accepts the queue.
        let ledger = StoreActor.sharedExecutor.queue.sync {
            StoreActor.assumeIsolated {
                let ledger = Ledger()
                ledger.record(5)
                return ledger.total
            }
        }
        #expect(ledger == 5)
    }

    @Test func manyTasksLeaveIsolatedStateConsistent() async {
        let ledger = Ledger()
        await withTaskGroup(of: Void.self) { group in
            for i in 1...500 { group.addTask { await ledger.record(i) } }
        }
        let (count, total, sum, offQueue) = await StoreActor.run {
            (ledger.entries.count, ledger.total, ledger.entries.reduce(0, +), ledger.jobsOffQueue)
        }
        #expect(count == 500)
        #expect(total == 500 * 501 / 2)
        #expect(sum == total)
        #expect(offQueue == 0)
    }

    @Test func manyTasksSavingThroughOneContextLeaveItConsistent() async throws {
        let home = try ModelsHome()
        let onTheActor = await StoreActorContext(try home.container())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<40 {
                group.addTask { @StoreActor in
                    #expect(StoreActor.sharedExecutor.isCurrentQueue)
                    let context = onTheActor.context
                    let post = Post()
                    post.title = "post \(i)"
                    post.date = Date(timeIntervalSinceReferenceDate: Double(i))
                    try context.insert(post)
                    if i.isMultiple(of: 4) { try context.save() }
                }
            }
            try await group.waitForAll()
        }
        let titles = try await StoreActor.run {
            let context = onTheActor.context
            try context.save()
            return try context.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.date)])).map(\.title)
        }
        #expect(titles == (0..<40).map { "post \($0)" })
        // What the store holds, read by a fresh context.
        let stored = try await StoreActor.run { try ModelContext(onTheActor.context.container).fetchCount(FetchDescriptor<Post>()) }
        #expect(stored == 40)
    }
}
