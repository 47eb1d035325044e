import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Power loss at every I/O operation of a save with history (and of a deleteHistory): after
/// reopening, the objects and their history agree — the save and its transaction (and the
/// deletion retention makes in the same commit) are all there, or none of it.
@Suite struct WALHistoryPowerLossTests {
    static var configuration: WALStoreConfiguration {
        var c = WALPowerLossTests.configuration
        c.history = .enabled(maximumCount: 2)
        return c
    }

    struct Shape: Equatable, CustomStringConvertible {
        var objects: WALPowerLossTests.Shape
        var history: [String]
        var historyKeys: [UInt64]
        var description: String { "\(objects) history \(history) keys \(historyKeys)" }
    }

    /// The objects, and the history with identifiers replaced by titles and names (each
    /// attempt makes new identifiers).
    static func shape(_ store: WALDataStore) throws -> Shape {
        var names: [PersistentIdentifier: String] = [:]
        for p in try store.all("Post") { if case .string(let t)? = p["title"] { names[p.persistentIdentifier] = "post \(t)" } }
        for t in try store.all("Tag") { if case .string(let n)? = t["name"] { names[t.persistentIdentifier] = "tag \(n)" } }
        let history = try store.allHistory().map { t in
            "\(t.token.value) \(t.author ?? "-"): "
                + t.summaries.map { s in
                    switch s {
                    case .insert(let id): "insert \(names[id] ?? id.entityName)"
                    case .update(let id, let n): "update \(names[id] ?? id.entityName) \(n)"
                    case .delete(let id, _): "delete \(names[id] ?? id.entityName)"
                    }
                }.joined(separator: ", ")
        }
        return Shape(objects: try WALPowerLossTests.shape(store), history: history, historyKeys: try store.historyKeyTokens())
    }

    static func prepared(_ base: FaultInjectingFileSystem) throws {
        let store = try WALDataStore(configuration, fileSystem: base)
        let tag = BlogModel.tag(name: "news")
        var post = BlogModel.post(title: "first", date: WALPowerLossTests.epoch, tags: [tag.persistentIdentifier])
        post["tags"] = .toMany([tag.persistentIdentifier])
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [post, tag], editingState: EditingState(author: "setup")))
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.tag(name: "second")], editingState: EditingState(author: "setup")))
        try store.close()
    }

    /// Runs `operation` with power lost at each of its I/O operations in turn; every reopened
    /// store must have the shape before or after it, and the one after when it returned.
    static func sweep(_ base: FaultInjectingFileSystem, _ operation: (WALDataStore) throws -> Void) throws {
        let old = try shape(try WALDataStore(configuration, fileSystem: base.clone()))
        let new: Shape = try {
            let store = try WALDataStore(configuration, fileSystem: base.clone())
            try operation(store)
            return try shape(store)
        }()
        #expect(old != new)
        var crashAt = 1
        var completed = false
        var sawOld = false, sawNew = false
        while !completed && crashAt < 500 {
            let fs = base.clone()
            let store = try WALDataStore(configuration, fileSystem: fs)
            fs.crash(atOperation: crashAt)
            let before = fs.operationCount
            let acknowledged = (try? operation(store)) != nil
            completed = acknowledged && fs.operationCount - before < crashAt
            fs.powerLoss()
            try? store.close()
            let s = try shape(try WALDataStore(configuration, fileSystem: fs))
            #expect(s == old || s == new, "power loss at operation \(crashAt): \(s)")
            if acknowledged { #expect(s == new, "power loss at operation \(crashAt): an acknowledged change is lost") }
            if s == old { sawOld = true } else if s == new { sawNew = true }
            crashAt += 1
        }
        #expect(completed && sawOld && sawNew, "the sweep reached the end (\(crashAt) operations)")
    }

    @Test func powerLossAtEveryOperationOfASaveKeepsObjectsAndHistoryTogether() throws {
        let base = FaultInjectingFileSystem()
        try Self.prepared(base)
        try Self.sweep(base) { store in
            var request = try WALPowerLossTests.request(store)
            request.editingState = EditingState(author: "crash")
            _ = try store.save(request)
        }
    }

    @Test func powerLossAtEveryOperationOfADeleteHistoryLeavesItDoneOrNot() throws {
        let base = FaultInjectingFileSystem()
        try Self.prepared(base)
        try Self.sweep(base) { store in
            try store.deleteHistory(HistoryDescriptor(before: DefaultHistoryToken(storeIdentifier: store.identifier, value: 2)))
        }
    }
}
