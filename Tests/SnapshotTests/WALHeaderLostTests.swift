import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// A directory that shows a store was there but holds no `WALDataStore` header (salvage dropped
/// the commit that held it, or keys were written through the engine) never opens as a new,
/// empty store: the open is refused, writing nothing, unless the configuration asks for a new
/// store on purpose.
@Suite struct WALHeaderLostTests {
    /// The store's error for `body`, or `nil` when it throws something else or nothing.
    func storeError(_ body: () throws -> Void) -> DataStoreError? {
        do { try body() } catch let error as DataStoreError { return error } catch { return nil }
        return nil
    }

    /// Every name under `path`, directories included (a refused open must not make one).
    func names(_ path: String) -> Set<String> {
        Set((FileManager.default.enumerator(atPath: path)?.allObjects as? [String]) ?? [])
    }

    /// A store of one saved tag whose every commit (the first wrote the header) is damaged,
    /// then salvaged: salvage keeps no commit and moves the log's bytes into `quarantine/`.
    func salvagedStoreWithoutHeader(_ home: WALHome) throws -> LogStore.SalvageReport {
        let store = try home.open()
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "news")]))
        try store.close()
        let segment = try #require(
            try FileManager.default.contentsOfDirectory(atPath: home.path).filter { $0.hasSuffix(".wal") }.sorted().first)
        let file = URL(fileURLWithPath: home.path + "/" + segment)
        // Inside every commit frame's payload (salvage keeps every intact commit), the first's,
        // which wrote the header, too.
        try Data(FormatTesting.damagingEveryCommit(of: [UInt8](try Data(contentsOf: file)))).write(to: file)
        let report = try LogStore.salvage(at: home.path)
        #expect(report.lastKeptSequence == 0 && !report.quarantined.isEmpty, "\(report)")
        return report
    }

    @Test func aSalvagedStoreThatLostItsHeaderIsRefusedAsHeaderLostAndLeftByteIdentical() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        _ = try salvagedStoreWithoutHeader(home)
        let before = try home.files()
        let namesBefore = names(home.path)
        let error = try #require(storeError { _ = try home.open() })
        #expect(error.code == .headerLost, "\(error)")
        #expect(error.message.contains("walstore verify") && error.message.contains("missingHeader"), "\(error.message)")
        #expect(try home.files() == before)
        #expect(names(home.path) == namesBefore)
        // Refused again, as often as it is asked: nothing was written that would let it through.
        #expect(storeError { _ = try home.open() }?.code == .headerLost)
    }

    @Test func engineKeysBesideQuarantineButNoHeaderAreRefusedAsHeaderLost() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        _ = try salvagedStoreWithoutHeader(home)
        let engine = try LogStore.open(at: home.path)
        _ = try engine.write { $0.put(Array("R-left-over".utf8), Array("kept".utf8)) }
        try engine.close()
        let before = try home.files()
        let error = try #require(storeError { _ = try home.open() })
        #expect(error.code == .headerLost, "\(error)")
        #expect(try home.files() == before)
    }

    @Test func aRefusedOpenWritesNoHintFileTheEngineWouldHaveWritten() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.compaction = .manual
        let engine = try LogStore.open(at: home.path, options: options)
        // Values that do not compress, so that the commits fill several segments.
        var random = SystemRandomNumberGenerator()
        for i in 0..<200 {
            _ = try engine.write { $0.put(Array("key \(i)".utf8), (0..<1000).map { _ in UInt8.random(in: 0...255, using: &random) }) }
        }
        try engine.close()
        // A sealed segment without its hint: any open of the engine writes it again, in the
        // background or at close, unless the open is given up without writing.
        let hint = try #require(
            try FileManager.default.contentsOfDirectory(atPath: home.path).filter { $0.hasSuffix(".walhint") }.sorted().first)
        try FileManager.default.removeItem(atPath: home.path + "/" + hint)
        let before = try home.files()
        let error = try #require(storeError { _ = try home.open() })
        #expect(error.code == .notAStore, "\(error)")
        #expect(try home.files() == before)
    }

    @Test func aRefusedOpenRemovesNoLeftoverOfAnInterruptedFlushAndAnOpenThatGoesAheadDoes() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let engine = try LogStore.open(at: home.path)
        _ = try engine.write { $0.put(Array("user:1".utf8), Array("Ada".utf8)) }
        try engine.close()
        // What a flush a crash interrupted leaves: a temporary manifest and a table no manifest
        // lists. Any open of the engine removes them, once it knows it succeeds.
        let leftovers = ["MANIFEST-tmp", "00000000000000ff.sst"]
        for name in leftovers { try Data("left by a crash".utf8).write(to: URL(fileURLWithPath: home.path + "/" + name)) }
        let before = try home.files()
        let error = try #require(storeError { _ = try home.open() })
        #expect(error.code == .notAStore, "\(error)")
        #expect(try home.files() == before)
        var configuration = home.configuration
        configuration.missingHeader = .createStore
        let store = try WALDataStore(configuration)
        try store.close()
        for name in leftovers { #expect(!FileManager.default.fileExists(atPath: home.path + "/" + name), "\(name) is removed") }
    }

    @Test func theMissingHeaderOptionStartsANewStoreWhereTheHeaderWasLost() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        _ = try salvagedStoreWithoutHeader(home)
        var configuration = home.configuration
        configuration.missingHeader = .createStore
        let store = try WALDataStore(configuration)
        #expect(try store.all("Tag").isEmpty)
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "again")]))
        try store.close()
        #expect(FileManager.default.fileExists(atPath: home.path + "/quarantine"), "what salvage set aside stays")
        // It has a header now: the default configuration opens it.
        let reopened = try home.open()
        defer { try? reopened.close() }
        #expect(try reopened.all("Tag").map { $0.values["name"] } == [.string("again")])
    }

    @Test func theMissingHeaderOptionStartsAStoreBesideEngineKeysAndKeepsThem() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let engine = try LogStore.open(at: home.path)
        _ = try engine.write { $0.put(Array("user:1".utf8), Array("Ada".utf8)) }
        try engine.close()
        var configuration = home.configuration
        configuration.missingHeader = .createStore
        let store = try WALDataStore(configuration)
        #expect(try store.all("Tag").isEmpty)
        try store.close()
        let reopened = try LogStore.open(at: home.path)
        defer { try? reopened.close() }
        #expect(try reopened.value(forKey: Array("user:1".utf8)) == Array("Ada".utf8))
    }
}
