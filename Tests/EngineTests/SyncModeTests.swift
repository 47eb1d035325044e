import Engine
import EngineTestSupport
import Testing

/// What each sync mode promises, checked against the fault-injecting file system's power loss.
@Suite struct SyncModeTests {
    static let dir = "/sync"

    static func store(_ mode: LogStore.SyncMode, _ fs: FaultInjectingFileSystem) throws -> LogStore {
        var options = LogStore.Options()
        options.syncMode = mode
        return try LogStore.open(at: dir, options: options, fileSystem: fs)
    }

    static func syncs(_ fs: FaultInjectingFileSystem) -> Int {
        fs.count(of: .sync)
    }

    @Test func durableCommitIsSyncedBeforeItReturns() throws {
        let fs = FaultInjectingFileSystem()
        let store = try Self.store(.durable, fs)
        try store.write { $0.put(bytes("a"), bytes("1")) }
        #expect(fs.operationLog.last?.kind == .sync)
        fs.powerLoss()
        #expect(try Self.store(.durable, fs).value(forKey: bytes("a")) == bytes("1"))
    }

    @Test func noneModeCommitIsLostOnPowerLossUnlessSynced() throws {
        let fs = FaultInjectingFileSystem()
        let store = try Self.store(.none, fs)
        let before = fs.count(of: .sync)
        try store.write { $0.put(bytes("a"), bytes("1")) }
        #expect(fs.count(of: .sync) == before, "no sync per commit")
        try store.sync()
        try store.write { $0.put(bytes("b"), bytes("2")) }
        fs.powerLoss()
        let reopened = try Self.store(.none, fs)
        #expect(try reopened.contents() == [bytes("a"): bytes("1")])
    }

    @Test(arguments: [LogStore.SyncMode.none, .deferred(interval: .seconds(3600))])
    func closeMakesEveryCommitDurable(mode: LogStore.SyncMode) throws {
        let fs = FaultInjectingFileSystem()
        let store = try Self.store(mode, fs)
        for i in 0..<10 { try store.write { $0.put(bytes("k\(i)"), bytes("v\(i)")) } }
        try store.close()
        fs.powerLoss()
        #expect(try Self.store(mode, fs).contents().count == 10)
    }

    @Test func deferredModeSyncsInTheBackground() async throws {
        let fs = FaultInjectingFileSystem()
        let store = try Self.store(.deferred(interval: .milliseconds(10)), fs)
        let before = fs.count(of: .sync)
        try store.write { $0.put(bytes("a"), bytes("1")) }
        #expect(fs.count(of: .sync) == before, "the commit itself does not sync")
        // Wait (up to a generous bound, not a timing assertion) for the background sync.
        for _ in 0..<1000 where fs.count(of: .sync) == before {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(fs.count(of: .sync) == before + 1)
        fs.powerLoss()
        #expect(try await Self.store(.durable, fs).value(forKey: bytes("a")) == bytes("1"))
    }
}
