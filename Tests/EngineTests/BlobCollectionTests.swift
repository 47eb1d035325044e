@testable import Engine
import Dispatch
import EngineTestSupport
import Foundation
import Testing

/// The removal of the blob files open finds unreferenced: after open has returned, on the
/// engine's threads, with one directory sync; never a blob a key references, even one a commit
/// racing the collector writes; stopped by close; safe against a power loss at each of its
/// operations.
@Suite struct BlobCollectionTests {
    static let dir = "/collect"
    static let blobDir = dir + "/blobs"

    static func options() -> LogStore.Options {
        var options = LogStore.Options()
        options.blobThreshold = 100
        options.compaction = .manual
        options.writesSegmentHints = false
        return options
    }

    static func open(_ fs: FaultInjectingFileSystem, _ hooks: LogStore.TestHooks = .init()) throws -> LogStore {
        try LogStore.open(at: dir, options: options(), fileSystem: fs, testHooks: hooks)
    }

    static func blobFiles(_ fs: FaultInjectingFileSystem) -> Set<String> {
        Set(fs.names(in: blobDir))
    }

    /// A closed store whose `keep/…` keys hold blobs and whose `gone/…` keys held blobs that were
    /// overwritten or deleted (their files left for a collection), plus a temporary blob file a
    /// crash left. The garbage has the highest blob ids. Returns the contents and the garbage.
    static func storeWithGarbage(keep: Int = 2, garbage: Int = 5) throws -> (FaultInjectingFileSystem, [[UInt8]: [UInt8]], Set<String>) {
        let fs = FaultInjectingFileSystem()
        let store = try open(fs)
        var model: [[UInt8]: [UInt8]] = [:]
        for i in 0..<keep {
            let value = [UInt8](repeating: UInt8(i), count: 500)
            try store.write { $0.put(bytes("keep/\(i)"), value) }
            model[bytes("keep/\(i)")] = value
        }
        let kept = blobFiles(fs)
        for i in 0..<garbage {
            try store.write { $0.put(bytes("gone/\(i)"), [UInt8](repeating: 9, count: 300 + i)) }
        }
        try store.write { batch in
            for i in 0..<garbage {
                if i % 2 == 0 { batch.delete(bytes("gone/\(i)")) } else { batch.put(bytes("gone/\(i)"), bytes("inline")) }
            }
        }
        for i in 0..<garbage where i % 2 == 1 { model[bytes("gone/\(i)")] = bytes("inline") }
        try store.close()
        let temporary = blobDir + "/" + String(repeating: "0", count: 14) + "ff.blob-tmp"
        _ = try fs.openFile(temporary, create: true)
        fs.setContents(bytes("half written"), of: temporary)
        try fs.syncDirectory(blobDir)
        return (fs, model, blobFiles(fs).subtracting(kept))
    }

    @Test func openRemovesNothingAndTheCollectionAfterItRemovesTheGarbageWithOneDirectorySync() throws {
        let (fs, model, garbage) = try Self.storeWithGarbage()
        #expect(garbage.count == 6)
        let before = fs.operationCount
        let store = try Self.open(fs, .init(startsBlobCollection: false))
        let openOperations = fs.operationLog[before...].filter { $0.path.hasPrefix(Self.blobDir) }
        #expect(openOperations.isEmpty, "open touched blob files: \(openOperations)")
        #expect(Self.blobFiles(fs).isSuperset(of: garbage))
        #expect(store.statistics.blobCollection == .init(found: 6, removed: 0, pending: true))
        #expect(try store.contents() == model)

        let start = fs.operationCount
        store.collectBlobsFoundAtOpen()
        let operations = Array(fs.operationLog[start...])
        #expect(operations.filter { $0.kind == .remove }.map { String($0.path.dropFirst(Self.blobDir.count + 1)) }.sorted() == garbage.sorted())
        #expect(operations.filter { $0.kind == .syncDirectory }.count == 1)
        #expect(operations.last?.kind == .syncDirectory, "the sync comes after every removal")
        #expect(Self.blobFiles(fs).isDisjoint(with: garbage))
        #expect(Self.blobFiles(fs).count == store.statistics.blobCount)
        #expect(store.statistics.blobCollection == .init(found: 6, removed: 6, pending: false))
        #expect(store.statistics.recovery.removedBlobs == 6)
        #expect(try store.contents() == model)
        for (key, value) in model { #expect(try store.value(forKey: key) == value) }
        try store.close()

        let reopened = try Self.open(fs)
        #expect(reopened.statistics.blobCollection == .init(found: 0, removed: 0, pending: false))
        try reopened.close()
    }

    @Test func theCollectionRunsByItselfOnAnEngineThreadAfterOpenReturns() throws {
        let (fs, model, garbage) = try Self.storeWithGarbage()
        let opened = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let threads = Locked<[Bool]>([])
        let store = try Self.open(
            fs,
            .init(willRemoveBlob: { _ in
                opened.wait()  // open has returned
                opened.signal()
                threads.withLock { $0.append(LogStore.isEngineIOThread) }
                started.signal()
            }))
        #expect(Self.blobFiles(fs).isSuperset(of: garbage), "open removed blobs itself")
        opened.signal()
        started.wait()  // the job has begun
        store.collectBlobsFoundAtOpen()  // waits for the job to finish
        #expect(Self.blobFiles(fs).isDisjoint(with: garbage))
        #expect(!threads.withLock { $0 }.isEmpty && threads.withLock { $0 }.first == true, "the first removal ran on the engine's thread")
        #expect(try store.contents() == model)
        try store.close()
    }

    /// The collector stops before its first removal; meanwhile a commit writes new blobs (which
    /// must not take a garbage file's name) and overwrites a key whose blob open saw referenced
    /// (which is not the collector's to remove: a compaction collects it). Then the collector
    /// goes on: nothing the store references is lost.
    @Test func aCommitRacingTheCollectorKeepsItsBlobs() throws {
        let (fs, model, garbage) = try Self.storeWithGarbage()
        let keptBefore = Self.blobFiles(fs).subtracting(garbage)
        let reached = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let first = Locked(true)
        let store = try Self.open(
            fs,
            .init(willRemoveBlob: { _ in
                guard
                    first.withLock({ f in
                        defer { f = false }; return f
                    })
                else { return }
                reached.signal()
                proceed.wait()
            }))
        reached.wait()
        #expect(store.statistics.blobCollection.pending)
        var expected = model
        var batch = WriteBatch()
        for i in 0..<8 {
            let value = [UInt8](repeating: UInt8(100 + i), count: 400 + i)
            batch.put(bytes("new/\(i)"), value)
            expected[bytes("new/\(i)")] = value
        }
        batch.putExternal(bytes("new/external"), bytes("small but external"))
        expected[bytes("new/external")] = bytes("small but external")
        batch.put(bytes("keep/0"), bytes("now inline"))
        expected[bytes("keep/0")] = bytes("now inline")
        try store.commit(batch)
        let written = Self.blobFiles(fs).subtracting(garbage).subtracting(keptBefore)
        #expect(written.count == 9)
        proceed.signal()
        store.collectBlobsFoundAtOpen()

        #expect(store.statistics.blobCollection == .init(found: garbage.count, removed: garbage.count, pending: false))
        #expect(Self.blobFiles(fs) == keptBefore.union(written), "only the garbage open found is gone")
        #expect(try store.contents() == expected)
        for (key, value) in expected { #expect(try store.value(forKey: key) == value, "\(String(decoding: key, as: UTF8.self))") }
        try store.close()
        let reopened = try Self.open(fs, .init(startsBlobCollection: false))
        #expect(try reopened.contents() == expected)
        #expect(reopened.statistics.blobCollection.found == 1, "keep/0's old blob, unreferenced since the commit")
        try reopened.close()
    }

    /// close() stops the collector after the removal in hand; the next open finds the rest.
    @Test func closeStopsTheCollectorAndTheNextOpenFindsTheRest() throws {
        let (fs, model, garbage) = try Self.storeWithGarbage()
        let reached = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let first = Locked(true)
        let store = try Self.open(
            fs,
            .init(willRemoveBlob: { _ in
                guard
                    first.withLock({ f in
                        defer { f = false }; return f
                    })
                else { return }
                reached.signal()
                proceed.wait()
            }))
        reached.wait()
        let closed = DispatchSemaphore(value: 0)
        let closing = Thread {
            try? store.close(); closed.signal()
        }
        closing.start()
        // close() marks the collection stopped before it waits for the removal in hand.
        while store.statistics.blobCollection.pending { Thread.sleep(forTimeInterval: 0.001) }
        proceed.signal()
        closed.wait()
        let left = Self.blobFiles(fs).intersection(garbage)
        #expect(left.count == garbage.count - 1, "the collector removed the file in hand and no other")

        let reopened = try Self.open(fs, .init(startsBlobCollection: false))
        #expect(reopened.statistics.blobCollection == .init(found: left.count, removed: 0, pending: true))
        reopened.collectBlobsFoundAtOpen()
        #expect(Self.blobFiles(fs).isDisjoint(with: garbage))
        #expect(try reopened.contents() == model)
        try reopened.close()
    }

    enum Crash: String, CaseIterable, Sendable { case powerLoss, processCrash }

    /// A crash at every I/O operation of the collection: no referenced blob is lost, and the
    /// garbage is collected after the next open.
    @Test(arguments: Crash.allCases)
    func aCrashAtEveryOperationOfTheCollectionLosesNoReferencedBlob(crash: Crash) throws {
        let (base, model, garbage) = try Self.storeWithGarbage()
        let probe = base.clone()
        let probeStore = try Self.open(probe, .init(startsBlobCollection: false))
        let start = probe.operationCount
        probeStore.collectBlobsFoundAtOpen()
        let total = probe.operationCount - start
        try probeStore.close()
        #expect(total == garbage.count + 1, "one removal per file and one directory sync")

        for crashAt in 1...total {
            let label = "\(crash) at operation \(crashAt) of \(total)"
            let fs = base.clone()
            let store = try Self.open(fs, .init(startsBlobCollection: false))
            fs.crash(atOperation: crashAt)
            store.collectBlobsFoundAtOpen()
            switch crash {
            case .powerLoss: fs.powerLoss()
            case .processCrash: fs.processCrash()
            }
            try? store.close()

            let reopened = try Self.open(fs, .init(startsBlobCollection: false))
            #expect(try reopened.contents() == model, "\(label)")
            for (key, value) in model { #expect(try reopened.value(forKey: key) == value, "\(label)") }
            let left = Self.blobFiles(fs).intersection(garbage)
            if crash == .powerLoss {
                #expect(left == garbage, "\(label): removals not yet synced come back")
            }
            #expect(reopened.statistics.blobCollection.found == left.count, "\(label)")
            reopened.collectBlobsFoundAtOpen()
            #expect(Self.blobFiles(fs).isDisjoint(with: garbage), "\(label): garbage left")
            #expect(Self.blobFiles(fs).count == reopened.statistics.blobCount, "\(label)")
            try reopened.close()
        }
    }
}
