import Engine
import EngineTestSupport
import Foundation
import Snapshot
import Testing

/// `verify` finds damaged files and records that disagree with their entries, changes no byte,
/// and `salvage` repairs what it finds.
@Suite struct ToolVerifyTests {
    /// A closed store of two saves (the second one large), and its path.
    static func store(_ directory: TemporaryDirectory, compacted: Bool = false) throws -> String {
        let path = directory.path + "/store"
        let store = try ToolModel.makeStore(at: path)
        let more = (0..<50).map { i in
            DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: "Person"), values: ["name": .string("person \(i) " + String(repeating: "x", count: 200))]
            )
        }
        _ = try store.save(DataStoreSaveChangesRequest(inserted: more))
        try store.close()
        if compacted { #expect(try Tool.run("compact", path).status == 0) }
        return path
    }

    static func files(_ path: String, suffix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(suffix) }.sorted().map { path + "/" + $0 }
    }

    /// Flips the byte at `fraction` of `file`'s length.
    static func flipByte(in file: String, at fraction: Double) throws {
        var bytes = try #require(FileManager.default.contents(atPath: file))
        let offset = min(bytes.count - 1, Int(Double(bytes.count) * fraction))
        bytes[offset] ^= 0x5A
        try bytes.write(to: URL(fileURLWithPath: file))
    }

    /// Runs `verify --json` and checks that it changed no byte.
    static func verify(_ path: String) throws -> (status: Int32, report: [String: Any]) {
        let before = directoryContents(path)
        let run = try Tool.run("verify", "--json", path)
        #expect(directoryContents(path) == before, "verify changes no byte")
        return (run.status, try run.json())
    }

    @Test func aSoundStoreVerifiesCleanAndIsLeftByteIdentical() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.store(directory)
        let (status, report) = try Self.verify(path)
        #expect(status == 0)
        #expect(report["ok"] as? Bool == true && report["problemCount"] as? Int == 0)
        let records = try #require(report["records"] as? [String: Any])
        #expect(records["records"] as? Int == 64 && records["indexesChecked"] as? Bool == true)
        #expect((report["seconds"] as? Double).map { $0 > 0 } == true, "the check's time: \(report["seconds"] ?? "none")")
        let human = try Tool.run("verify", path)
        #expect(human.status == 0 && human.output.hasSuffix("verify: ok\n"))
    }

    enum Damage: String, CaseIterable {
        case segmentFrame, segmentHeader, tableBlock, tableFooter, blobContent, missingBlob, manifest
        var compacted: Bool { ![.segmentFrame, .segmentHeader].contains(self) }
    }

    /// The damage the engine's corruption tests inject, found through the tool.
    @Test(arguments: Damage.allCases)
    func verifyFindsDamagedFilesAndNamesThem(damage: Damage) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.store(directory, compacted: damage.compacted)
        let damaged: String
        switch damage {
        case .segmentFrame:
            damaged = try #require(try Self.files(path, suffix: ".wal").first)
            try Self.flipByte(in: damaged, at: 0.8)
        case .segmentHeader:
            damaged = try #require(try Self.files(path, suffix: ".wal").first)
            try Self.flipByte(in: damaged, at: 0.0)
        case .tableBlock:
            damaged = try #require(try Self.files(path, suffix: ".sst").first)
            try Self.flipByte(in: damaged, at: 0.1)
        case .tableFooter:
            damaged = try #require(try Self.files(path, suffix: ".sst").first)
            try Self.flipByte(in: damaged, at: 0.999)
        case .blobContent:
            damaged = try #require(try Self.files(path + "/blobs", suffix: ".blob").last)
            try Self.flipByte(in: damaged, at: 0.5)
        case .missingBlob:
            damaged = try #require(try Self.files(path + "/blobs", suffix: ".blob").last)
            try FileManager.default.removeItem(atPath: damaged)
        case .manifest:
            damaged = path + "/MANIFEST"
            try Self.flipByte(in: damaged, at: 0.5)
        }
        let (status, report) = try Self.verify(path)
        #expect(status == 1, "\(report)")
        #expect(report["ok"] as? Bool == false)
        let files = try #require(report["files"] as? [String: Any])
        let named = (files["damage"] as? [[String: Any]] ?? []).compactMap { $0["file"] as? String }
        let name = damaged.dropFirst(path.count + 1)
        if damage == .missingBlob {
            #expect((files["lostKeyCount"] as? Int ?? 0) >= 1, "the key whose blob is gone is reported lost")
        } else {
            #expect(named.contains(String(name)), "\(named) names \(name)")
        }
        // Commands that open the store refuse it as corrupt, and say what to do.
        if [.segmentHeader, .tableBlock, .tableFooter, .manifest].contains(damage) {
            let info = try Tool.run("info", path)
            #expect(info.status == 4 && info.error.contains("salvage"), "\(info.error)")
        }
    }

    @Test func salvageRepairsADamagedSegmentAndTheStoreThenVerifies() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.store(directory)
        try Self.flipByte(in: try #require(try Self.files(path, suffix: ".wal").first), at: 0.8)
        #expect(try Self.verify(path).status == 1)
        let salvage = try Tool.run("salvage", "--json", path)
        #expect(salvage.status == 1, "damage found and repaired")
        let report = try salvage.json()
        #expect(report["clean"] as? Bool == false && !(report["quarantined"] as? [Any] ?? []).isEmpty)
        let (status, after) = try Self.verify(path)
        #expect(status == 0, "\(after)")
        #expect(try Tool.run("salvage", path).status == 0, "a second salvage finds nothing")
    }

    @Test func aSalvagedStoreThatLostItsHeaderDoesNotVerify() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.store(directory)
        // The first commit, the one that wrote the header: salvage keeps the later ones, without
        // a header.
        let segment = try #require(try Self.files(path, suffix: ".wal").first)
        var bytes = try #require(FileManager.default.contents(atPath: segment))
        bytes[FormatTesting.segmentHeaderSize + FormatTesting.frameHeaderSize + 4] ^= 0x5A
        try bytes.write(to: URL(fileURLWithPath: segment))
        #expect(try Tool.run("salvage", path).status == 1)
        let (status, report) = try Self.verify(path)
        #expect(status == 1, "\(report)")
        #expect(report["ok"] as? Bool == false && report["headerLost"] as? Bool == true, "\(report)")
        let human = try Tool.run("verify", path)
        #expect(human.status == 1 && !human.output.contains("verify: ok"), "\(human.output)")
        #expect(human.output.contains("lost its WALDataStore header"), "\(human.output)")
        let info = try Tool.run("info", path)
        #expect(info.status == 0 && info.output.contains("lost its header"), "\(info.output)")
    }

    /// An engine store of five commits whose third and fourth are damaged: `verify` and `salvage`
    /// name exactly the commits lost, as one range, say that the kept commit after them may depend
    /// on them, and the store keeps the other commits.
    @Test func salvageAndVerifyNameTheCommitsLostBetweenKeptOnes() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/engine"
        let store = try LogStore.open(at: path)
        for round in 1...5 { try store.write { $0.put(Array("key \(round)".utf8), Array("value \(round)".utf8)) } }
        try store.close()
        let segment = try #require(try Self.files(path, suffix: ".wal").first)
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: segment)))
        var offset = FormatTesting.segmentHeaderSize
        for sequence in 1...4 {
            if sequence >= 3 { bytes[offset + FormatTesting.frameHeaderSize + 10] ^= 0x5A }
            offset += FormatTesting.frameHeaderSize + (0..<4).reduce(0) { $0 | Int(bytes[offset + 8 + $1]) << (8 * $1) }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: segment))

        let (status, verified) = try Self.verify(path)
        #expect(status == 1)
        let files = try #require(verified["files"] as? [String: Any])
        #expect((files["lostSequenceRanges"] as? [[String: Int]]) == [["first": 3, "last": 4]], "\(files)")
        #expect(files["laterCommitsMayDependOnLostOnes"] as? Bool == true)
        #expect(files["lastIntactSequence"] as? Int == 5)
        let human = try Tool.run("verify", path)
        #expect(human.output.contains("commits lost (2): 3...4"), "\(human.output)")

        let salvage = try Tool.run("salvage", "--json", path)
        #expect(salvage.status == 1)
        let report = try salvage.json()
        #expect((report["lostSequenceRanges"] as? [[String: Int]]) == [["first": 3, "last": 4]], "\(report)")
        #expect((report["lostSequences"] as? [String: Int]) == ["first": 3, "last": 4])
        #expect(report["laterCommitsMayDependOnLostOnes"] as? Bool == true)
        #expect(report["lastKeptSequence"] as? Int == 5)
        #expect(Set(report["lostKeys"] as? [String] ?? []) == ["key 3", "key 4"], "\(report)")
        let reopened = try LogStore.open(at: path)
        #expect(try reopened.contents().keys.map { String(decoding: $0, as: UTF8.self) }.sorted() == ["key 1", "key 2", "key 5"])
        try reopened.close()
    }

    /// The human output of a salvage that lost commits between kept ones.
    @Test func salvageSaysWhichCommitsWereLostAndThatLaterOnesMayDependOnThem() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/engine"
        var options = LogStore.Options()
        options.writesSegmentHints = false
        let store = try LogStore.open(at: path, options: options)
        for round in 1...3 { try store.write { $0.put(Array("key \(round)".utf8), Array("value \(round)".utf8)) } }
        try store.close()
        let segment = try #require(try Self.files(path, suffix: ".wal").first)
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: segment)))
        bytes[FormatTesting.segmentHeaderSize + FormatTesting.frameHeaderSize + 10] ^= 0x5A
        try Data(bytes).write(to: URL(fileURLWithPath: segment))
        let run = try Tool.run("salvage", path)
        #expect(run.status == 1)
        #expect(run.output.contains("commits lost (1): 1\n"), "\(run.output)")
        #expect(run.output.contains("keys unknown of commits 1 "), "\(run.output)")
        #expect(run.output.contains("may depend on the lost ones"), "\(run.output)")
    }

    /// A `WALDataStore` whose middle save of three is damaged: salvage keeps the saves around it,
    /// and then makes the derived entries (here the tags' count, which the last save wrote) agree
    /// with the records that survived, so `verify` finds nothing wrong.
    @Test func salvageOfAWALDataStoreRebuildsItsDerivedEntriesFromTheSurvivingRecords() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/store"
        let store = try ToolModel.makeStore(at: path)
        for name in ["kept-first", "lost-middle", "kept-last"] {
            let tag = DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Tag"), values: ["name": .string(name)])
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [tag]))
        }
        try store.close()
        // The frame that holds the middle tag's name.
        let segment = try #require(try Self.files(path, suffix: ".wal").last)
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: segment)))
        let name = Array("lost-middle".utf8)
        let at = try #require((0...(bytes.count - name.count)).first { Array(bytes[$0..<$0 + name.count]) == name })
        bytes[at] ^= 0x5A
        try Data(bytes).write(to: URL(fileURLWithPath: segment))

        let salvage = try Tool.run("salvage", "--json", path)
        #expect(salvage.status == 1)
        let report = try salvage.json()
        #expect((report["lostSequenceRanges"] as? [Any])?.count == 1, "\(report)")
        let records = try #require(report["records"] as? [String: Any], "\(report)")
        #expect((records["problemsFound"] as? Int ?? 0) > 0, "\(records)")
        #expect((records["entriesWritten"] as? Int ?? 0) > 0, "\(records)")
        #expect(records["problemsLeft"] as? Int == 0, "\(records)")
        let (status, verified) = try Self.verify(path)
        #expect(status == 0, "\(verified)")
        let dump = try Tool.run("dump", "--entity", "Tag", path)
        #expect(dump.output.contains("kept-first") && dump.output.contains("kept-last") && !dump.output.contains("lost-middle"))
    }

    /// Derived entries that disagree with the records (an index entry missing, a stray one):
    /// `salvage` finds no damaged file, but writes the missing entry and removes the stray one.
    @Test func salvageMakesIndexEntriesAgreeWithTheRecords() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.store(directory)
        try Self.edit(path) { engine in
            var batch = WriteBatch()
            batch.delete(try Self.firstKey(engine, prefix: "I"))
            batch.put(Array("IPost\0date\0stray".utf8), Array("Post".utf8))
            return batch
        }
        let salvage = try Tool.run("salvage", "--json", path)
        #expect(salvage.status == 1, "derived entries were repaired")
        let records = try #require(try salvage.json()["records"] as? [String: Any])
        #expect(records["problemsFound"] as? Int == 2 && records["problemsLeft"] as? Int == 0, "\(records)")
        #expect(records["entriesWritten"] as? Int == 1 && records["entriesRemoved"] as? Int == 1, "\(records)")
        #expect(try Self.verify(path).status == 0)
        let again = try Tool.run("salvage", path)
        #expect(again.status == 0 && again.output.contains("nothing damaged"), "\(again.output)")
    }

    /// A count alone wrong: every other entry agrees, so the check's single pass (no table of
    /// entries) finds it, and salvage writes the records' tally.
    @Test func salvageRepairsACountThatDisagreesWithTheRecords() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.store(directory)
        try Self.edit(path) { engine in
            var batch = WriteBatch()
            batch.put(try Self.firstKey(engine, prefix: "CPerson\0"), [0, 0, 0, 0, 0, 0, 3, 231])  // 999, 8 bytes big-endian
            return batch
        }
        let found = Self.problems(try Self.verify(path).report)
        #expect(found.count == 1 && found.first?.kind == "wrongValue" && found.first?.key == "CPerson\\x00", "\(found)")
        let salvage = try Tool.run("salvage", "--json", path)
        let records = try #require(try salvage.json()["records"] as? [String: Any])
        #expect(records["entriesWritten"] as? Int == 1 && records["problemsLeft"] as? Int == 0, "\(records)")
        #expect(try Self.verify(path).status == 0)
    }

    /// Opens the engine store under the tool model's store and applies `change`.
    static func edit(_ path: String, _ change: (LogStore) throws -> WriteBatch) throws {
        let engine = try LogStore.open(at: path)
        _ = try engine.commit(try change(engine))
        try engine.close()
    }

    static func firstKey(_ engine: LogStore, prefix: String) throws -> [UInt8] {
        var scan = try engine.scan(prefix: Array(prefix.utf8))
        return try #require(try scan.next()).key
    }

    static func problems(_ report: [String: Any]) -> [(kind: String, key: String)] {
        ((report["records"] as? [String: Any])?["problems"] as? [[String: Any]] ?? []).map {
            ($0["kind"] as? String ?? "", $0["key"] as? String ?? "")
        }
    }

    @Test func aMissingIndexEntryAndAnExtraOneAreFoundByKey() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.store(directory)
        var removed: [UInt8] = []
        try Self.edit(path) { engine in
            removed = try Self.firstKey(engine, prefix: "I")
            var batch = WriteBatch()
            batch.delete(removed)
            batch.put(Array("IPost\0date\0stray".utf8), Array("Post".utf8))
            return batch
        }
        let (status, report) = try Self.verify(path)
        #expect(status == 1)
        let found = Self.problems(report)
        #expect(found.contains { $0.kind == "missingEntry" && $0.key == KeyTextForTests.escaped(removed) }, "\(found)")
        #expect(found.contains { $0.kind == "extraEntry" && $0.key == "IPost\\x00date\\x00stray" }, "\(found)")
        #expect(found.count == 2)
    }

    /// The same keys, one value changed: only the digest of the values tells the stores apart,
    /// and the comparison entry by entry then names the entry.
    @Test func anIndexEntryHoldingAnotherValueIsFound() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.store(directory)
        var changed: [UInt8] = []
        try Self.edit(path) { engine in
            changed = try Self.firstKey(engine, prefix: "I")
            var batch = WriteBatch()
            batch.put(changed, Array("Pxst".utf8))
            return batch
        }
        let (status, report) = try Self.verify(path)
        #expect(status == 1)
        let found = Self.problems(report)
        #expect(found.count == 1 && found.first?.kind == "wrongValue" && found.first?.key == KeyTextForTests.escaped(changed), "\(found)")
    }

    @Test func aReferenceToAMissingObjectIsDangling() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/store"
        try ToolModel.makeStore(at: path).close()
        try Self.edit(path) { engine in
            var batch = WriteBatch()
            batch.delete(try Self.firstKey(engine, prefix: "RPerson\0"))
            return batch
        }
        let (status, report) = try Self.verify(path)
        #expect(status == 1)
        let found = Self.problems(report)
        #expect(found.filter { $0.kind == "danglingReference" }.count == 2, "two posts name the author: \(found)")
        // The person's count key still counts the deleted record.
        let others = found.filter { $0.kind != "danglingReference" }
        #expect(others.count == 1 && others.first?.kind == "wrongValue" && others.first?.key == "CPerson\\x00", "\(found)")
    }

    @Test func aRecordThatDoesNotDecodeAndALinkWithoutItsMirrorAreFound() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/store"
        try ToolModel.makeStore(at: path).close()
        var record: [UInt8] = []
        var mirror: [UInt8] = []
        try Self.edit(path) { engine in
            record = try Self.firstKey(engine, prefix: "RMedia\0")
            mirror = try Self.firstKey(engine, prefix: "N")
            var batch = WriteBatch()
            batch.put(record, [0xFF, 0x00, 0x13])
            batch.delete(mirror)
            return batch
        }
        let (status, report) = try Self.verify(path)
        #expect(status == 1)
        let found = Self.problems(report)
        #expect(found.contains { $0.kind == "undecodableRecord" && $0.key == KeyTextForTests.escaped(record) }, "\(found)")
        #expect(found.contains { $0.kind == "missingEntry" && $0.key == KeyTextForTests.escaped(mirror) }, "\(found)")
        let dump = try Tool.run("dump", path)
        #expect(dump.status == 4 && dump.error.contains("verify"), "dump refuses the record it cannot read: \(dump.error)")
    }

    @Test func compactKeepsEveryRecordAndTheStoreVerifies() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.store(directory)
        let dumped = try Tool.run("dump", path).output
        let compact = try Tool.run("compact", "--json", path)
        #expect(compact.status == 0)
        #expect((try compact.json()["tablesWritten"] as? Int ?? 0) >= 1)
        #expect(!(try Self.files(path, suffix: ".sst")).isEmpty)
        let after = try Tool.run("dump", path).output
        #expect(after == dumped, "\(Set(after.split(separator: "\n")).symmetricDifference(Set(dumped.split(separator: "\n"))))")
        #expect(try Self.verify(path).status == 0)
    }
}

/// The escaped key form the tool prints (docs/tool.md), for expectations.
enum KeyTextForTests {
    static func escaped(_ bytes: [UInt8]) -> String {
        bytes.map { b -> String in
            switch b {
            case 0x5C: return "\\\\"
            case 0x20...0x7E: return String(UnicodeScalar(b))
            default: return "\\x" + String(format: "%02x", b)
            }
        }.joined()
    }
}
