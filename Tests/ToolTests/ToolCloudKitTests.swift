import Engine
import EngineTestSupport
import Foundation
import Snapshot
import Testing

/// `export --cloudkit` and `import --cloudkit`: the round trip, the request bodies' shape and
/// limits, a golden export, and refused input.
@Suite struct ToolCloudKitTests {
    static func open(_ path: String) throws -> WALDataStore {
        try WALDataStore(WALStoreConfiguration(name: "Tool", schema: ToolModel.schema, path: path))
    }

    @Test func anExportImportedIntoANewStoreHoldsEveryObjectLinkAndAsset() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.path + "/source", export = directory.path + "/export", copy = directory.path + "/copy"
        try ToolModel.makeStore(at: source).close()
        let exported = try Tool.run("export", "--json", "--cloudkit", export, source)
        #expect(exported.status == 0, "\(exported.error)")
        let summary = try exported.json()
        #expect(summary["records"] as? Int == 14 && summary["links"] as? Int == 6 && summary["assets"] as? Int == 3)
        #expect(summary["zoneName"] as? String == "com.apple.coredata.cloudkit.zone")
        let imported = try Tool.run("import", "--json", "--cloudkit", export, copy)
        #expect(imported.status == 0, "\(imported.error)")
        #expect(try imported.json()["records"] as? Int == 14)
        #expect(try Tool.run("verify", copy).status == 0)
        let original = try Self.open(source), reread = try Self.open(copy)
        defer {
            try? original.close()
            try? reread.close()
        }
        let a = try ToolModel.contents(of: original), b = try ToolModel.contents(of: reread)
        #expect(a.count == 14)
        #expect(a == b)
        #expect(original.identifier != reread.identifier, "the import is a new store")
    }

    @Test func theSwiftAPIExportsAndImportsTheSameRecords() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try ToolModel.makeStore(at: directory.path + "/source")
        defer { try? store.close() }
        let export = try CloudKitExport(store: store)
        var types: [String: Int] = [:]
        var assetBytes = 0
        try export.forEachRecord { record, assets in
            types[record.recordType, default: 0] += 1
            assetBytes += assets.reduce(0) { $0 + $1.bytes.count }
        }
        #expect(types == ["CD_Post": 3, "CD_Attachment": 3, "CD_Tag": 2, "CD_Person": 1, "CD_Media": 3, "CD_Sample": 2, "CDMR": 6])
        #expect(assetBytes == 70_000 + 40 + 40)
        let summary = try export.write(to: directory.path + "/export")
        #expect(summary.records == 14 && summary.links == 6)
        let imported = try CloudKitImport.makeStore(from: directory.path + "/export", at: directory.path + "/copy")
        #expect(imported == CloudKitImport.Summary(records: 14, links: 6, assets: 3))
        let copy = try Self.open(directory.path + "/copy")
        defer { try? copy.close() }
        #expect(try ToolModel.contents(of: copy) == ToolModel.contents(of: store))
    }

    @Test func requestsStayWithinTheServicesLimits() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try ToolModel.makeStore(at: directory.path + "/source", posts: 0)
        let people = (0..<450).map { i in
            DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: "Person"),
                values: ["name": .string("person \(i) " + String(repeating: "y", count: i % 40 == 7 ? 400_000 : 10))])
        }
        _ = try store.save(DataStoreSaveChangesRequest(inserted: people))
        var options = CloudKitExport.Options()
        options.maximumRequestBytes = 1_200_000
        let summary = try CloudKitExport(store: store, options: options).write(to: directory.path + "/export")
        try store.close()
        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory.path + "/export/manifest.json"))) as? [String: Any]
        )
        let requests = try #require(manifest["requests"] as? [String])
        #expect(requests.count == summary.requests && requests.count >= 6, "12 records of 400 KB: at most 2 in a request of 1.2 MB")
        var operations = 0
        for name in requests {
            let data = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/export/" + name))
            #expect(data.count <= 1_200_000)
            let body = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let ops = try #require(body["operations"] as? [[String: Any]])
            #expect(ops.count <= 200)
            operations += ops.count
        }
        #expect(operations == 450 + 2 + 1 + 3 + 2 + 1, "every record once: people, tags, author, media, samples, a favourite link")
    }

    @Test func aRecordOverTheServicesLimitIsRefusedByName() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try ToolModel.makeStore(at: directory.path + "/source", posts: 0)
        _ = try store.save(
            DataStoreSaveChangesRequest(inserted: [
                DefaultSnapshot(
                    persistentIdentifier: .temporary(entityName: "Person"), values: ["name": .string(String(repeating: "z", count: 1_100_000))])
            ]))
        try store.close()
        let run = try Tool.run("export", "--cloudkit", directory.path + "/export", directory.path + "/source")
        #expect(run.status == 6)
        #expect(run.error.contains("over CloudKit's 1000000") && run.error.contains("record Person_"))
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/export"), "the refused export left nothing")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["source"])
    }

    @Test func aNonFiniteDoubleIsRefusedByRecordAndFieldAndTheDirectoryIsLeftAsItWas() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try ToolModel.makeStore(at: directory.path + "/source", posts: 1)
        _ = try store.save(
            DataStoreSaveChangesRequest(inserted: [
                DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Video"), values: ["caption": "loop", "seconds": .double(.infinity)])
            ]))
        try store.close()
        let empty = directory.path + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        for destination in [empty, directory.path + "/missing"] {
            let run = try Tool.run("export", "--json", "--cloudkit", destination, directory.path + "/source")
            #expect(run.status == 6, "\(run.error)")
            #expect(run.error.contains("CD_seconds") && run.error.contains("record Video_") && run.error.contains("not finite"), "\(run.error)")
            let error = try #require(try run.json()["error"] as? [String: Any])
            #expect(error["code"] as? String == "refused")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty, "the empty directory is still empty")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/missing"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["empty", "source"], "no temporary left")

        let source = try Self.open(directory.path + "/source")
        defer { try? source.close() }
        #expect(throws: CloudKitTransferError.self) { try CloudKitExport(store: source).forEachRecord { _, _ in } }
        do {
            try CloudKitExport(store: source).forEachRecord { _, _ in }
        } catch let error as CloudKitTransferError {
            #expect(error.code == .unsendableValue && error.fieldName == "CD_seconds" && error.recordName?.hasPrefix("Video_") == true)
        }
    }

    @Test func timestampsAreWholeMillisecondsRoundedToTheNearest() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try ToolModel.makeStore(at: directory.path + "/source", posts: 0)
        _ = try store.save(
            DataStoreSaveChangesRequest(inserted: [
                DefaultSnapshot(
                    persistentIdentifier: .temporary(entityName: "Post"),
                    values: ["title": "late", "date": .date(Date(timeIntervalSince1970: 1_700_000_000.123_6))])
            ]))
        try store.close()
        let lines = try Tool.run("dump", directory.path + "/source", "--entity", "Post").jsonLines()
        let date = try #require((lines.first?["fields"] as? [String: [String: Any]])?["CD_date"]?["value"] as? NSNumber)
        #expect(String(cString: date.objCType) == "q" && date.int64Value == 1_700_000_000_124)
        #expect(try Tool.run("dump", directory.path + "/source", "--where", "date=1700000000124").jsonLines().count == 1)
    }

    @Test func theOperationTypeIsAnOptionSoARetriedUploadCanReplace() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try ToolModel.makeStore(at: directory.path + "/source", posts: 1).close()
        for type in ["forceReplace", "forceUpdate"] {
            let run = try Tool.run("export", "--json", "--operation", type, "--cloudkit", directory.path + "/" + type, directory.path + "/source")
            #expect(run.status == 0, "\(run.error)")
            #expect(try run.json()["operationType"] as? String == type)
            let body = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory.path + "/\(type)/requests/000001.json")))
                    as? [String: Any])
            let operations = try #require(body["operations"] as? [[String: Any]])
            #expect(!operations.isEmpty && operations.allSatisfy { $0["operationType"] as? String == type })
            #expect(try Tool.run("import", "--cloudkit", directory.path + "/" + type, directory.path + "/copy-" + type).status == 0)
        }
        let bad = try Tool.run("export", "--operation", "delete", "--cloudkit", directory.path + "/bad", directory.path + "/source")
        #expect(bad.status == 2 && bad.error.contains("forceReplace"))
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/bad"))
    }

    @Test func anExportOrImportIntoADirectoryThatIsNotEmptyIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.path + "/source"
        try ToolModel.makeStore(at: source).close()
        try FileManager.default.createDirectory(atPath: directory.path + "/busy", withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: directory.path + "/busy/keep.txt", contents: Data("x".utf8))
        let export = try Tool.run("export", "--cloudkit", directory.path + "/busy", source)
        #expect(export.status == 6 && export.error.contains("not empty"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/busy") == ["keep.txt"])
        #expect(try Tool.run("export", "--cloudkit", directory.path + "/export", source).status == 0)
        let into = try Tool.run("import", "--cloudkit", directory.path + "/export", source)
        #expect(into.status == 6)
        let missing = try Tool.run("import", "--cloudkit", directory.path + "/nothing", directory.path + "/new")
        #expect(missing.status == 6 && missing.error.contains("manifest.json"))
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/new"))
    }

    @Test func anImportWhoseRecordsDoNotFitTheSchemaLeavesNothingBehind() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cases: [(String, String, String)] = [
            ("\"CD_title\":{\"value\":\"Hello\",\"type\":\"STRING\"}", "\"CD_title\":{\"value\":12,\"type\":\"INT64\"}", "does not hold a string"),
            (
                "\"value\":\"Person_44444444-4444-4444-8444-444444444444\"", "\"value\":\"Person_99999999-4444-4444-8444-444444444444\"",
                "which is no Person of the export"
            ),
            (
                "\"CD_title\":{\"value\":\"Hello\",\"type\":\"STRING\"}",
                "\"CD_title\":{\"value\":\"Hello\",\"type\":\"STRING\"},\"CD_colour\":{\"value\":\"red\",\"type\":\"STRING\"}",
                "CD_colour is no property of Post"
            ),
            ("\"recordType\":\"CD_Media\"", "\"recordType\":\"CD_Photo\"", "is stored as CD_Media"),
            ("\"CD_name\":{\"value\":\"swift\",\"type\":\"STRING\"}", "\"CD_nom\":{\"value\":\"swift\",\"type\":\"STRING\"}", "CD_name is missing"),
            ("\"CD_width\":{\"value\":4032,\"type\":\"INT64\"}", "\"CD_width\":{\"value\":4032,\"type\":\"LOCATION\"}", "a field of type LOCATION"),
            ("{\"zoneID\"", "[{\"zoneID\"", "not a records/modify request body"),
        ]
        for (i, (original, replacement, message)) in cases.enumerated() {
            let export = directory.path + "/golden\(i)"
            try Golden.write(to: export, request: Golden.request.replacingOccurrences(of: original, with: replacement))
            let run = try Tool.run("import", "--cloudkit", export, directory.path + "/new\(i)")
            #expect(run.status == 6, "case \(i): \(run.error)")
            #expect(run.error.contains(message), "case \(i): \(run.error)")
            #expect(!FileManager.default.fileExists(atPath: directory.path + "/new\(i)"))
        }
    }

    /// The field types CloudKit Web Services' record field dictionary names (Types and
    /// Dictionaries: STRING, INT64, DOUBLE, TIMESTAMP, BYTES, REFERENCE, ASSET, ASSETID,
    /// LOCATION, and the lists).
    static let referenceTypes: Set<String> = [
        "STRING", "INT64", "DOUBLE", "TIMESTAMP", "BYTES", "REFERENCE", "ASSET", "ASSETID", "LOCATION",
        "STRING_LIST", "INT64_LIST", "DOUBLE_LIST", "TIMESTAMP_LIST", "BYTES_LIST", "REFERENCE_LIST", "ASSET_LIST", "ASSETID_LIST", "LOCATION_LIST",
    ]

    @Test func theExportOfASmallStoreMatchesTheGoldenRequestFieldByField() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try Golden.write(to: directory.path + "/golden", request: Golden.request)
        #expect(try Tool.run("import", "--cloudkit", directory.path + "/golden", directory.path + "/store").status == 0)
        let run = try Tool.run("export", "--cloudkit", directory.path + "/export", directory.path + "/store")
        #expect(run.status == 0, "\(run.error)")
        let written = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/export/requests/000001.json"))
        let body = try #require(try JSONSerialization.jsonObject(with: written) as? [String: Any])
        let golden = try #require(try JSONSerialization.jsonObject(with: Data(Golden.request.utf8)) as? [String: Any])
        // The records/modify request: operations and the zone, nothing else; the keys a request
        // may have are operations, zoneID, atomic, desiredKeys, numbersAsStrings.
        #expect(Set(body.keys) == ["operations", "zoneID"])
        #expect(Set(body.keys).isSubset(of: ["operations", "zoneID", "atomic", "desiredKeys", "numbersAsStrings"]))
        #expect((body["zoneID"] as? [String: String]) == ["zoneName": "com.apple.coredata.cloudkit.zone"])
        let operations = try #require(body["operations"] as? [[String: Any]])
        let expected = try #require(golden["operations"] as? [[String: Any]])
        #expect(operations.count == expected.count)
        for (operation, wanted) in zip(operations, expected) {
            // The record operation dictionary and the record dictionary.
            #expect(Set(operation.keys) == ["operationType", "record"] && operation["operationType"] as? String == "create")
            let record = try #require(operation["record"] as? [String: Any])
            let goldenRecord = try #require(wanted["record"] as? [String: Any])
            #expect(Set(record.keys) == ["recordName", "recordType", "fields"])
            // The record dictionary's keys (recordName, recordType, recordChangeTag, fields,
            // created, modified, deleted, zoneID, …): those a new record sends.
            #expect(Set(record.keys).isSubset(of: ["recordName", "recordType", "recordChangeTag", "fields", "zoneID"]))
            #expect(record["recordName"] as? String == goldenRecord["recordName"] as? String)
            #expect(record["recordType"] as? String == goldenRecord["recordType"] as? String)
            let fields = try #require(record["fields"] as? [String: [String: Any]])
            let goldenFields = try #require(goldenRecord["fields"] as? [String: [String: Any]])
            #expect(Set(fields.keys) == Set(goldenFields.keys), "\(record["recordName"] ?? "")")
            for (name, field) in fields {
                // The record field dictionary: a value and a type the reference names.
                #expect(Set(field.keys) == ["value", "type"], "\(name)")
                let type = try #require(field["type"] as? String)
                #expect(Self.referenceTypes.contains(type), "\(name): \(type)")
                #expect(type == goldenFields[name]?["type"] as? String, "\(name)")
                #expect(
                    NSDictionary(dictionary: field).isEqual(to: goldenFields[name] ?? [:]), "\(name): \(field) is not \(goldenFields[name] ?? [:])")
                if type == "TIMESTAMP" {
                    // Types and Dictionaries: a TIMESTAMP is a number of milliseconds, whole.
                    let number = try #require(field["value"] as? NSNumber)
                    #expect(String(cString: number.objCType) == "q", "\(name): \(number) is an integer in the JSON")
                }
            }
        }
        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory.path + "/export/manifest.json")))
                as? [String: Any])
        #expect(manifest["database"] as? String == "private" && manifest["operationType"] as? String == "create")
        let uploads = try #require(manifest["assetUploads"] as? [[String: Any]])
        #expect(uploads.count == 1)
        #expect(uploads.first?["recordName"] as? String == "Attachment_22222222-2222-4222-8222-222222222222")
        #expect(uploads.first?["recordType"] as? String == "CD_Attachment" && uploads.first?["fieldName"] as? String == "CD_imageData_ckAsset")
        #expect(uploads.first?["file"] as? String == "assets/Attachment_22222222-2222-4222-8222-222222222222.CD_imageData_ckAsset")
        #expect(uploads.first?["size"] as? Int == 4 && uploads.first?["request"] as? String == "requests/000001.json")
        // sha256sum of the 4 bytes "PNG!".
        #expect(uploads.first?["sha256"] as? String == "24501919c367725c2a5d4811c95045b78bb0a3c4529f9bd7381c800152792afe")
        let asset = try Data(
            contentsOf: URL(fileURLWithPath: directory.path + "/export/assets/Attachment_22222222-2222-4222-8222-222222222222.CD_imageData_ckAsset"))
        #expect(asset == Golden.asset)
    }
}

/// A small store's export, checked by hand against the CloudKit Web Services reference's record
/// dictionary: a post with an author (to-one without inverse) and a tag (a CDMR link), an
/// attachment whose image is an asset, a photo (a sub-entity: record type of its root, Media).
enum Golden {
    static let asset = Data("PNG!".utf8)
    static let request = """
        {"zoneID":{"zoneName":"com.apple.coredata.cloudkit.zone"},"operations":[\
        {"operationType":"create","record":{"recordName":"Post_11111111-1111-4111-8111-111111111111","recordType":"CD_Post","fields":{\
        "CD_entityName":{"value":"Post","type":"STRING"},\
        "CD_author":{"value":"Person_44444444-4444-4444-8444-444444444444","type":"STRING"},\
        "CD_date":{"value":1700000000000,"type":"TIMESTAMP"},\
        "CD_title":{"value":"Hello","type":"STRING"}}}},\
        {"operationType":"create","record":{"recordName":"Attachment_22222222-2222-4222-8222-222222222222","recordType":"CD_Attachment","fields":{\
        "CD_entityName":{"value":"Attachment","type":"STRING"},\
        "CD_imageData_ckAsset":{"value":{"size":4,"file":"assets/Attachment_22222222-2222-4222-8222-222222222222.CD_imageData_ckAsset"},"type":"ASSETID"},\
        "CD_post":{"value":"Post_11111111-1111-4111-8111-111111111111","type":"STRING"}}}},\
        {"operationType":"create","record":{"recordName":"Tag_33333333-3333-4333-8333-333333333333","recordType":"CD_Tag","fields":{\
        "CD_entityName":{"value":"Tag","type":"STRING"},\
        "CD_name":{"value":"swift","type":"STRING"}}}},\
        {"operationType":"create","record":{"recordName":"Person_44444444-4444-4444-8444-444444444444","recordType":"CD_Person","fields":{\
        "CD_entityName":{"value":"Person","type":"STRING"},\
        "CD_name":{"value":"Ada","type":"STRING"}}}},\
        {"operationType":"create","record":{"recordName":"Photo_55555555-5555-4555-8555-555555555555","recordType":"CD_Media","fields":{\
        "CD_entityName":{"value":"Photo","type":"STRING"},\
        "CD_caption":{"value":"sunrise","type":"STRING"},\
        "CD_width":{"value":4032,"type":"INT64"}}}},\
        {"operationType":"create","record":{"recordName":"CDMR_9BC87F25-EF0F-890F-A3FB-A80DE0780926","recordType":"CDMR","fields":{\
        "CD_entityNames":{"value":"Post:Tag","type":"STRING"},\
        "CD_recordNames":{"value":"Post_11111111-1111-4111-8111-111111111111:Tag_33333333-3333-4333-8333-333333333333","type":"STRING"},\
        "CD_relationships":{"value":"tags:posts","type":"STRING"}}}}\
        ]}
        """

    /// Writes the export directory: the manifest (the tool model's schema), the request, the asset.
    static func write(to directory: String, request: String) throws {
        let files = FileManager.default
        try files.createDirectory(atPath: directory + "/requests", withIntermediateDirectories: true)
        try files.createDirectory(atPath: directory + "/assets", withIntermediateDirectories: true)
        try Data(request.utf8).write(to: URL(fileURLWithPath: directory + "/requests/000001.json"))
        try asset.write(to: URL(fileURLWithPath: directory + "/assets/Attachment_22222222-2222-4222-8222-222222222222.CD_imageData_ckAsset"))
        let schema = try JSONSerialization.jsonObject(with: JSONEncoder().encode(ToolModel.schema))
        let manifest: [String: Any] = [
            "format": "walstore-cloudkit-export", "version": 1, "zoneID": ["zoneName": "com.apple.coredata.cloudkit.zone"],
            "requests": ["requests/000001.json"], "schema": schema,
        ]
        try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: directory + "/" + "manifest.json"))
    }
}
