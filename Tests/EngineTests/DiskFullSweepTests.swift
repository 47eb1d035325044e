#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
@testable import Engine
import EngineTestSupport
import Testing

/// ENOSPC at every write of a small mixed workload (commits, a blob, a compaction, close): each
/// call either succeeds (a commit whose preallocated zeros did not fit is written without them)
/// or throws `io` with errno ENOSPC; every commit that returned stays readable; and after a power
/// loss the store reopens with exactly the acknowledged commits.
@Suite struct DiskFullSweepTests {
    static let dir = "/fullsweep"

    enum Step {
        case commit(WriteBatch)
        case compact
    }

    static func options() -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.preallocationSize = 1 << 10  // small: many commits grow the file, and compaction grows the disk past the peak before it
        options.writesSegmentHints = false  // no background writes: the write numbers are stable
        options.compaction = .manual
        return options
    }

    static func steps() -> [Step] {
        var steps = (1...5).map { Step.commit(DiskFullTests.batch($0)) }
        var blob = WriteBatch()
        blob.putExternal(bytes("blob"), [UInt8](repeating: 7, count: 5_000))
        blob.put(bytes("beside the blob"), bytes("inline"))
        steps.append(.commit(blob))
        steps += (6...8).map { Step.commit(DiskFullTests.batch($0)) }
        steps.append(.compact)
        steps += (9...11).map { Step.commit(DiskFullTests.batch($0)) }
        return steps
    }

    /// `model` with `batch` applied, as the store applies it.
    static func applying(_ batch: WriteBatch, to model: [[UInt8]: [UInt8]]) throws -> [[UInt8]: [UInt8]] {
        try DiskFullTests.contents(of: batch, over: model)
    }

    /// What happened in one run.
    struct Outcome {
        var failures = 0
        var preallocationSuspended = false
        /// Mutating operations up to the power loss (the workload's, not the reopen's).
        var workloadOperations = 0
    }

    /// Runs the workload on `fs`, checking each call as it returns; then a power loss and a reopen
    /// with room to spare.
    static func run(_ fs: FaultInjectingFileSystem, label: String) throws -> Outcome {
        var outcome = Outcome()
        func expectDiskFull(_ error: EngineError, _ call: String) {
            outcome.failures += 1
            #expect(error.code == .io && error.errno == ENOSPC, "\(label): \(call) threw \(error)")
        }
        var model: [[UInt8]: [UInt8]] = [:]
        let store: LogStore
        do {
            store = try LogStore.open(at: dir, options: options(), fileSystem: fs)
        } catch {
            expectDiskFull(error, "open")
            outcome.workloadOperations = fs.operationCount
            fs.setCapacity(nil)
            fs.powerLoss()
            let reopened = try LogStore.open(at: dir, options: options(), fileSystem: fs)
            #expect(try reopened.contents().isEmpty, "\(label)")
            try reopened.close()
            return outcome
        }
        for (index, step) in steps().enumerated() {
            var committed: WriteBatch?
            do throws(EngineError) {
                switch step {
                case .commit(let batch):
                    try store.commit(batch)
                    committed = batch
                case .compact:
                    _ = try store.compact()
                }
            } catch {
                expectDiskFull(error, "step \(index + 1)")
            }
            if let committed { model = try applying(committed, to: model) }
            outcome.preallocationSuspended = outcome.preallocationSuspended || store.statistics.preallocationSuspended
            let readable = try store.contents() == model
            #expect(readable, "\(label): after step \(index + 1), every acknowledged commit reads back and nothing else")
        }
        do throws(EngineError) {
            try store.close()
        } catch {
            expectDiskFull(error, "close")
        }
        outcome.workloadOperations = fs.operationCount
        fs.setCapacity(nil)
        fs.powerLoss()
        let reopened = try LogStore.open(at: dir, options: options(), fileSystem: fs)
        let recovered = try reopened.contents() == model
        #expect(recovered, "\(label): after a power loss, exactly the acknowledged commits")
        // Still writable where recovery left it.
        try reopened.write { $0.put(bytes("after"), bytes(label)) }
        try reopened.close()
        return outcome
    }

    /// Every write of the workload, in order: its number among the mutating operations, the bytes
    /// in use when it began and how many it added.
    static func writes() throws -> [(operation: Int, usedBefore: Int, growth: Int, peakBefore: Int)] {
        let fs = FaultInjectingFileSystem()
        let accesses = Locked<[(kind: FaultInjectingFileSystem.AccessKind, used: Int)]>([])
        fs.onEveryAccess { access in
            let used = fs.usedBytes
            accesses.withLock { $0.append((access.kind, used)) }
        }
        let workload = try run(fs, label: "probe").workloadOperations
        let log = accesses.withLock { $0 }
        let operations = fs.operationLog.enumerated().filter { $0.element.kind == .write }.map { $0.offset + 1 }
            .filter { $0 <= workload }
        let writeAccesses = log.indices.filter { log[$0].kind == .write }
        // The probe's power loss and reopen come after the workload: keep the workload's writes.
        var result: [(Int, Int, Int, Int)] = []
        var peak = 0
        var next = 0
        for index in log.indices {
            peak = max(peak, log[index].used)
            guard next < operations.count, writeAccesses[next] == index else { continue }
            let after = index + 1 < log.count ? log[index + 1].used : log[index].used
            result.append((operations[next], log[index].used, after - log[index].used, peak))
            next += 1
        }
        return result
    }

    @Test func aDiskThatFillsUpAtEveryWriteFailsCallsWithEnospcAndLosesNoAcknowledgedCommit() throws {
        let writes = try Self.writes()
        try #require(writes.count > 15, "the workload's writes")
        var tried = 0
        var fellBack = 0
        for (number, write) in writes.enumerated() where write.growth > 0 && write.peakBefore < write.usedBefore + write.growth {
            // One byte short of what write `number` needs, room for everything before it.
            let fs = FaultInjectingFileSystem()
            fs.setCapacity(write.usedBefore + write.growth - 1)
            let outcome = try Self.run(fs, label: "disk full at write \(number + 1) (operation \(write.operation))")
            #expect(outcome.failures > 0 || outcome.preallocationSuspended, "write \(number + 1) did not fit")
            if outcome.preallocationSuspended { fellBack += 1 }
            tried += 1
        }
        #expect(tried >= 8, "writes that can be the first not to fit")
        #expect(fellBack > 0, "some commit fitted once its preallocated zeros were dropped")
    }

    @Test func enospcAtAnySingleWriteFailsThatCallOrIsAbsorbedAndLosesNoAcknowledgedCommit() throws {
        let writes = try Self.writes()
        var fellBack = 0
        for (number, write) in writes.enumerated() {
            let fs = FaultInjectingFileSystem()
            fs.fail(write.operation, errno: ENOSPC)
            let outcome = try Self.run(fs, label: "ENOSPC at write \(number + 1) (operation \(write.operation))")
            #expect(fs.operationCount >= write.operation, "the workload reached write \(number + 1)")
            if outcome.preallocationSuspended { fellBack += 1 }
        }
        #expect(fellBack > 0, "a frame written again without its preallocated zeros")
    }
}
