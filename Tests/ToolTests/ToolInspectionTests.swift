import Engine
import EngineTestSupport
import Foundation
import Snapshot
import Testing

/// `info`, `stats`, `dump`, `get` and `scan` on real stores: their output, and that they leave
/// the files byte-identical.
@Suite struct ToolInspectionTests {
    static func closedStore(_ directory: TemporaryDirectory, posts: Int = 3) throws -> String {
        let path = directory.path + "/store"
        try ToolModel.makeStore(at: path, posts: posts).close()
        return path
    }

    @Test func infoNamesTheEngineFilesTheSchemaAndTheObjectsPerEntity() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.closedStore(directory)
        let before = directoryContents(path)
        let info = try Tool.run("info", "--json", path).json()
        #expect(directoryContents(path) == before, "info changes no byte")
        #expect(info["formatVersion"] as? Int == 4 && info["closedCleanly"] as? Bool == true)
        #expect((info["lastSequence"] as? Int ?? 0) >= 1 && (info["keys"] as? Int ?? 0) > 10)
        #expect(info["blobs"] as? Int == 3, "every attachment (externalStorage) is a blob")
        let files = try #require(info["files"] as? [[String: Any]]).compactMap { $0["name"] as? String }
        #expect(files.contains("LOCK") && files.contains("blobs/") && files.contains { $0.hasSuffix(".wal") })
        let dataStore = try #require(info["dataStore"] as? [String: Any])
        #expect(dataStore["objects"] as? Int == 3 + 3 + 2 + 1 + 3 + 2)
        let entities = try #require(dataStore["entities"] as? [[String: Any]])
        let counts = Dictionary(uniqueKeysWithValues: entities.map { ($0["name"] as? String ?? "", $0["objects"] as? Int ?? -1) })
        #expect(counts == ["Post": 3, "Attachment": 3, "Tag": 2, "Person": 1, "Media": 0, "Photo": 2, "Video": 1, "Sample": 2])
        let photo = try #require(entities.first { $0["name"] as? String == "Photo" })
        #expect(photo["superentity"] as? String == "Media" && photo["root"] as? String == "Media")
        let post = try #require(entities.first { $0["name"] as? String == "Post" })
        #expect((post["indexes"] as? [[String]]) == [["date"]])
        let human = try Tool.run("info", path)
        #expect(human.status == 0 && human.output.contains("entity Photo : Media, 2 objects"))
    }

    @Test func statsPrintsTheEngineStatistics() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.closedStore(directory)
        let before = directoryContents(path)
        let stats = try Tool.run("stats", "--json", path).json()
        #expect(directoryContents(path) == before)
        #expect((stats["keyCount"] as? Int ?? 0) > 10 && stats["blobCount"] as? Int == 3)
        let recovery = try #require(stats["recovery"] as? [String: Any])
        #expect(recovery["closedCleanly"] as? Bool == true)
    }

    @Test func dumpPrintsEveryRecordInCloudKitsShapeAndFilters() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.closedStore(directory)
        let before = directoryContents(path)
        let lines = try Tool.run("dump", path).jsonLines()
        #expect(directoryContents(path) == before)
        let objects = lines.filter { $0["recordType"] as? String != "CDMR" }
        #expect(objects.count == 14)
        #expect(lines.filter { $0["recordType"] as? String == "CDMR" }.count == 6, "two posts with two tags, one with one, one favourite")
        let photo = try #require(objects.first { ($0["recordName"] as? String)?.hasPrefix("Photo_") == true })
        #expect(photo["recordType"] as? String == "CD_Media")
        let fields = try #require(photo["fields"] as? [String: [String: Any]])
        #expect(fields["CD_entityName"]?["type"] as? String == "STRING" && fields["CD_entityName"]?["value"] as? String == "Photo")
        #expect(fields["CD_width"]?["type"] as? String == "INT64")
        let attachment = try #require(objects.first { ($0["fields"] as? [String: [String: Any]])?["CD_imageData_ckAsset"] != nil })
        let asset = try #require((attachment["fields"] as? [String: [String: Any]])?["CD_imageData_ckAsset"])
        #expect(asset["type"] as? String == "ASSETID")
        #expect(
            (asset["value"] as? [String: Any])?["file"] as? String
                == "assets/\(attachment["recordName"] as? String ?? "").CD_imageData_ckAsset")

        let media = try Tool.run("dump", path, "--entity", "Media").jsonLines()
        #expect(media.count == 3 && media.allSatisfy { $0["recordType"] as? String == "CD_Media" })
        let one = try Tool.run("dump", path, "--entity", "Post", "--where", "title=Post 1").jsonLines()
        #expect(one.count == 1)
        let wide = try Tool.run("dump", path, "--where", "CD_width=4032").jsonLines()
        #expect(wide.count == 1)
        let unknown = try Tool.run("dump", path, "--entity", "Comment")
        #expect(unknown.status == 2 && unknown.error.contains("no entity Comment"))
    }

    @Test func getAndScanReadRawKeysInTheEscapedOrHexForm() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.closedStore(directory)
        let before = directoryContents(path)
        let scan = try Tool.run("scan", "--json", "--prefix", "R", path).json()
        #expect(scan["count"] as? Int == 14)
        let entries = try #require(scan["entries"] as? [[String: Any]])
        let first = try #require(entries.first?["key"] as? String)
        #expect(first.hasPrefix("RAttachment\\x00"))
        let get = try Tool.run("get", "--json", path, first).json()
        #expect(get["found"] as? Bool == true && (get["bytes"] as? Int ?? 0) > 0)
        let hexKey =
            try #require(try Tool.run("scan", "--json", "--hex", "--limit", "1", "--prefix", "52", path).json()["entries"] as? [[String: Any]])
            .first?["key"] as? String
        #expect(hexKey?.hasPrefix("524174746163686d656e7400") == true)
        let raw = try Tool.run("get", "--hex", path, hexKey ?? "")
        #expect(raw.status == 0 && raw.output.hasSuffix("\n") && raw.output.allSatisfy { $0.isHexDigit || $0 == "\n" })
        let missing = try Tool.run("get", path, "no such key")
        #expect(missing.status == 1 && missing.error.contains("no such key"))
        let bad = try Tool.run("get", path, "\\xZZ")
        #expect(bad.status == 2)
        #expect(directoryContents(path) == before)
    }

    @Test func aStoreThatWasNotClosedIsReadWithoutRecoveringItOnDisk() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/store"
        let store = try ToolModel.makeStore(at: path)
        // Leave it as a crash would: copy its files while it is open.
        let copy = directory.path + "/crashed"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try store.close()
        let before = directoryContents(copy)
        let info = try Tool.run("info", "--json", copy).json()
        #expect(info["closedCleanly"] as? Bool == false)
        #expect(try Tool.run("verify", copy).status == 0)
        #expect(directoryContents(copy) == before, "recovery ran in memory only")
    }
}
