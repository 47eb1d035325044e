import Engine
import Foundation

/// A `WALDataStore`'s objects as CloudKit records, in the shape Core Data's CloudKit mirroring
/// gives them (``CloudKitRecord``), and written as CloudKit Web Services `records/modify`
/// request bodies an uploader can send as they are.
///
/// ``write(to:progress:)`` makes a directory of:
/// - `requests/000001.json`, …: one `records/modify` body each, `{"zoneID":{"zoneName":…},
///   "operations":[{"operationType":"create","record":{…}}, …]}`, in Core Data's zone
///   (``coreDataZoneName``) of the private database, within the service's documented limits
///   (``Options``); the operation type is ``Options/operationType``;
/// - `assets/<recordName>.<field>`: the bytes of each asset field. The field's value is a
///   placeholder, `{"size", "file"}` (the file relative to the directory): CloudKit takes an
///   asset only as the dictionary `assets/upload` returns, so a client uploads each file the
///   manifest lists under `assetUploads` and puts what the upload returned in the field before
///   it sends the request;
/// - `manifest.json`, written last: the database, the schema, its version, the counts, the
///   request files in order and the asset uploads (``CloudKitImport`` reads the directory back
///   into a new store).
///
/// A `TIMESTAMP` is whole milliseconds, as the reference has it: a date's fraction of a
/// millisecond is rounded off (so an export and import keeps dates to the millisecond). A record
/// holding a non-finite double, which CloudKit cannot take, is refused by name
/// (``CloudKitTransferError/Code/unsendableValue``).
///
/// The directory is written beside its final place, under a temporary name, and moved into
/// place once whole: a refused or failed export leaves the destination as it found it.
///
/// Limits used, from the CloudKit Web Services Reference, "Data Size Limits": at most 200
/// operations per request, a record at most 1 MB not counting its assets, an asset file at
/// most 50 MB; and a request body at most 2 MB, CloudKit's guideline for a request
/// (`CKError.Code.limitExceeded`).
public struct CloudKitExport {
    /// The zone Core Data's CloudKit mirroring keeps its records in.
    public static let coreDataZoneName = "com.apple.coredata.cloudkit.zone"

    /// How the records are batched and laid out.
    public struct Options: Sendable, Equatable {
        /// The zone every request names.
        public var zoneName = CloudKitExport.coreDataZoneName
        /// The database the requests are for: Core Data's zone is in the user's private one.
        public var database = "private"
        /// Every operation's `operationType`.
        public var operationType = OperationType.create
        /// Operations per request: the service accepts at most 200.
        public var maximumOperationsPerRequest = 200
        /// Bytes per request body.
        public var maximumRequestBytes = 2_000_000
        /// Bytes of one record's JSON (its assets not counted): the service's limit is 1 MB.
        public var maximumRecordBytes = 1_000_000
        /// A `data` value longer than this is written as an asset even when its attribute is
        /// not `externalStorage`, so that records stay within ``maximumRecordBytes``.
        public var inlineDataLimit = 256 << 10
        public init() {}
    }

    /// A record operation's `operationType` (CloudKit Web Services Reference, "Modifying Records"):
    /// those that need no `recordChangeTag`.
    public enum OperationType: String, Sendable, CaseIterable {
        /// Creates the record; fails (`CONFLICT`) when one of that name exists, so a retried
        /// upload fails on the records the first attempt saved.
        case create
        /// Replaces the record whatever the server holds: a retried upload is safe.
        case forceReplace
        /// Updates the record's fields whatever the server holds, creating it when missing: a
        /// retried upload is safe.
        case forceUpdate
    }

    /// What ``write(to:progress:)`` wrote.
    public struct Summary: Sendable, Equatable {
        /// Object records (`CD_<Root>`).
        public var records = 0
        /// Link records (`CDMR`).
        public var links = 0
        /// Asset files, and their bytes.
        public var assets = 0
        public var assetBytes = 0
        /// Request files, and their bytes.
        public var requests = 0
        public var requestBytes = 0
    }

    let inspector: StoreInspector
    public let options: Options

    /// The export of `store`'s objects. Reads the store as it is when each record is read.
    public init(store: WALDataStore, options: Options = Options()) throws {
        try self.init(inspector: StoreInspector(engine: store.engine), options: options)
    }

    package init(inspector: StoreInspector, options: Options = Options()) {
        self.inspector = inspector
        self.options = options
    }

    /// The schema the records are in.
    public var schema: Schema { inspector.schema }

    /// How many object records there are (links not counted).
    public func objectCount() throws -> Int {
        try inspector.roots.reduce(0) { $0 + (try inspector.recordCount(root: $1.name)) }
    }

    /// Calls `body` with every object's record and its assets' bytes (keyed by the asset's
    /// `file`), root by root in key order, then every link record (`CDMR`).
    ///
    /// - Throws: ``CloudKitTransferError`` `.unreadableRecord` naming a record that does not
    ///   decode (`walstore verify` lists them all); `body`'s errors; engine errors.
    ///   ``CloudKitTransferError/Code/unsendableValue`` naming a record and field CloudKit cannot
    ///   take (a non-finite double).
    public func forEachRecord(_ body: (CloudKitRecord, [(path: String, bytes: Data)]) throws -> Void) throws {
        try forEachObject { snapshot in
            let (record, assets) = self.record(of: snapshot)
            try Self.check(record)
            try body(record, assets)
        }
        try forEachLink { try body($0, []) }
    }

    package func forEachObject(root: String? = nil, _ body: (DefaultSnapshot) throws -> Void) throws {
        for entity in inspector.roots where root == nil || entity.name == root {
            try inspector.forEachObject(root: entity.name, toMany: false) { key, object in
                switch object {
                case .success(let snapshot): try body(snapshot)
                case .failure(let error):
                    throw CloudKitTransferError(.unreadableRecord, "a record does not decode (\(error)); run walstore verify", key: key)
                }
            }
        }
    }

    package func forEachLink(_ body: (CloudKitRecord) throws -> Void) throws {
        let joins = Self.joinRelationships(inspector)
        guard joins.values.contains(where: { !$0.isEmpty }) else { return }
        for entity in inspector.roots {
            let entities = [entity.name] + inspector.schema.subentities(of: entity.name).map(\.name)
            guard entities.contains(where: { !(joins[$0] ?? []).isEmpty }) else { continue }
            try inspector.forEachIdentifier(root: entity.name) { id in
                for relationship in joins[id.entityName] ?? [] {
                    let symmetric = inspector.isSymmetric(relationship, of: id.entityName)
                    for target in try inspector.targets(of: id, through: relationship) {
                        // A relationship that is its own inverse lists each link at both ends:
                        // the link is one record, sent from the end whose name comes first.
                        if symmetric && StoreInspector.recordName(of: target) < StoreInspector.recordName(of: id) { continue }
                        try body(linkRecord(from: id, through: relationship, to: target))
                    }
                }
            }
        }
    }

    static func joinRelationships(_ inspector: StoreInspector) -> [String: [Schema.Relationship]] {
        var result: [String: [Schema.Relationship]] = [:]
        for entity in inspector.schema.entities {
            result[entity.name] = inspector.schema.allProperties(of: entity.name).compactMap { property in
                guard case .relationship(let r) = property, r.isToMany, inspector.writesJoinRecords(r, of: entity.name) else { return nil }
                return r
            }
        }
        return result
    }

    /// Refuses a record with a field CloudKit cannot take, naming it.
    static func check(_ record: CloudKitRecord) throws {
        if let (field, reason) = record.unsendableField {
            throw CloudKitTransferError(
                .unsendableValue, "field \(field) cannot be sent: \(reason)", recordName: record.recordName, fieldName: field)
        }
    }

    /// The record of one object, and the bytes of its asset fields.
    package func record(of snapshot: DefaultSnapshot) -> (CloudKitRecord, [(path: String, bytes: Data)]) {
        let id = snapshot.persistentIdentifier
        let recordName = StoreInspector.recordName(of: id)
        var fields: [(name: String, value: CloudKitField)] = []
        var assets: [(path: String, bytes: Data)] = []
        for property in inspector.schema.allProperties(of: id.entityName) {
            switch property {
            case .attribute(let attribute):
                if attribute.options.contains(.ephemeral) { continue }
                let value = snapshot.values[attribute.name] ?? .null
                if case .data(let bytes) = value, inspector.isExternal(attribute) || bytes.count > options.inlineDataLimit {
                    let name = "CD_\(attribute.name)_ckAsset"
                    let path = "assets/\(recordName).\(name)"
                    fields.append((name, .asset(path: path, size: bytes.count)))
                    assets.append((path, bytes))
                } else if let field = CloudKitValueMapping.field(value, type: attribute.valueType) {
                    fields.append(("CD_\(attribute.name)", field))
                }
            case .relationship(let relationship) where !relationship.isToMany:
                if case .toOne(let target?) = snapshot.values[relationship.name] {
                    fields.append(("CD_\(relationship.name)", .string(StoreInspector.recordName(of: target))))
                }
            case .relationship:
                continue
            }
        }
        fields.sort { $0.name < $1.name }
        fields.insert(("CD_entityName", .string(id.entityName)), at: 0)
        return (CloudKitRecord(recordType: "CD_\(inspector.root(of: id.entityName))", recordName: recordName, fields: fields), assets)
    }

    /// The `CDMR` record of one link; its name is `CDMR_` and a UUID derived from its fields, so
    /// that an export of the same store names it alike.
    func linkRecord(from source: PersistentIdentifier, through relationship: Schema.Relationship, to target: PersistentIdentifier) -> CloudKitRecord {
        let join = inspector.joinFields(of: source, through: relationship, to: target)
        let name = "CDMR_" + Self.derivedUUID(join.entityNames + "\u{0}" + join.relationships + "\u{0}" + join.recordNames).uuidString
        return CloudKitRecord(
            recordType: CloudKitRecord.linkRecordType, recordName: name,
            fields: [
                ("CD_entityNames", .string(join.entityNames)), ("CD_recordNames", .string(join.recordNames)),
                ("CD_relationships", .string(join.relationships)),
            ])
    }

    /// Two FNV-1a 64 hashes of `text` (different offsets) as a version-8 UUID.
    static func derivedUUID(_ text: String) -> UUID {
        func fnv(_ offset: UInt64) -> UInt64 {
            var hash = offset
            for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return hash
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        let (a, b) = (fnv(0xcbf2_9ce4_8422_2325), fnv(0x8422_2325_cbf2_9ce4))
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: a >> (56 - 8 * UInt64(i)))
            bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (56 - 8 * UInt64(i)))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return RecordKeys.uuid(from: bytes)
    }

    /// Writes the export into `directory`, which must be missing or empty (it is made, with
    /// missing parents). `progress` gets (objects done, objects in all). The export is written
    /// into a temporary directory beside `directory` and moved into place when whole.
    ///
    /// - Throws: ``CloudKitTransferError``: `.destinationNotEmpty` (nothing is written),
    ///   `.recordTooLarge` naming a record over ``Options/maximumRecordBytes``,
    ///   `.unsendableValue` naming a record and field CloudKit cannot take, `.unreadableRecord`,
    ///   `.io`. After a throw `directory` is as it was (missing, or empty).
    @discardableResult
    public func write(to directory: String, progress: ((Int, Int) -> Void)? = nil) throws -> Summary {
        let files = FileManager.default
        if let names = try? files.contentsOfDirectory(atPath: directory), !names.isEmpty {
            throw CloudKitTransferError(.destinationNotEmpty, "the export directory is not empty; choose a new or empty one", path: directory)
        }
        var isDirectory: ObjCBool = false
        let existed = files.fileExists(atPath: directory, isDirectory: &isDirectory)
        if existed, !isDirectory.boolValue {
            throw CloudKitTransferError(.destinationNotEmpty, "the export path is a file; choose a new or empty directory", path: directory)
        }
        let url = URL(fileURLWithPath: directory).standardizedFileURL
        let parent = url.deletingLastPathComponent().path
        let temporary = parent + "/." + url.lastPathComponent + ".export-" + UUID().uuidString
        do {
            try files.createDirectory(atPath: parent, withIntermediateDirectories: true)
            try files.createDirectory(atPath: temporary + "/requests", withIntermediateDirectories: true)
            try files.createDirectory(atPath: temporary + "/assets", withIntermediateDirectories: true)
        } catch {
            try? files.removeItem(atPath: temporary)
            throw CloudKitTransferError(.io, "cannot make the export directory: \(error.localizedDescription)", path: directory)
        }
        do {
            let summary = try write(into: temporary, progress: progress)
            // rename(2) replaces an empty directory in one step.
            guard rename(temporary, url.path) == 0 else {
                throw CloudKitTransferError(.io, "cannot move the export into place (errno \(errno))", path: directory)
            }
            return summary
        } catch {
            try? files.removeItem(atPath: temporary)
            throw error
        }
    }

    private func write(into directory: String, progress: ((Int, Int) -> Void)?) throws -> Summary {
        let total = progress == nil ? 0 : try objectCount()
        var summary = Summary()
        var requestNames: [String] = []
        var uploads = JSONWriter()
        var batch = JSONWriter()
        var operations = 0
        let opening = "{\"zoneID\":{\"zoneName\":\(Self.quoted(options.zoneName))},\"operations\":["
        let closing = "]}\n"
        func flush() throws {
            guard operations > 0 else { return }
            batch.raw(closing)
            let name = String(format: "requests/%06d.json", requestNames.count + 1)
            try Self.writeFile(directory + "/" + name, batch.bytes)
            summary.requests += 1
            summary.requestBytes += batch.bytes.count
            requestNames.append(name)
            batch = JSONWriter()
            operations = 0
        }
        func add(_ record: CloudKitRecord) throws {
            try Self.check(record)
            var one = JSONWriter()
            one.raw("{\"operationType\":")
            one.string(options.operationType.rawValue)
            one.raw(",\"record\":")
            one.record(record)
            one.raw("}")
            guard one.bytes.count <= options.maximumRecordBytes else {
                throw CloudKitTransferError(
                    .recordTooLarge,
                    "the record is \(one.bytes.count) bytes, over CloudKit's \(options.maximumRecordBytes); mark its large attributes externalStorage",
                    recordName: record.recordName)
            }
            if operations > 0
                && (operations >= options.maximumOperationsPerRequest
                    || batch.bytes.count + one.bytes.count + 1 + closing.utf8.count > options.maximumRequestBytes)
            {
                try flush()
            }
            if operations == 0 { batch.raw(opening) } else { batch.bytes.append(0x2C) }
            batch.bytes.append(contentsOf: one.bytes)
            operations += 1
        }
        try forEachObject { snapshot in
            let (record, assets) = self.record(of: snapshot)
            try add(record)
            for asset in assets {
                try Self.writeFile(directory + "/" + asset.path, Array(asset.bytes))
                summary.assets += 1
                summary.assetBytes += asset.bytes.count
                let field = record.fields.first { if case .asset(let path, _) = $0.value { path == asset.path } else { false } }?.name ?? ""
                if summary.assets > 1 { uploads.bytes.append(0x2C) }
                uploads.raw("{\"request\":")
                uploads.string(String(format: "requests/%06d.json", requestNames.count + 1))
                uploads.raw(",\"recordName\":")
                uploads.string(record.recordName)
                uploads.raw(",\"recordType\":")
                uploads.string(record.recordType)
                uploads.raw(",\"fieldName\":")
                uploads.string(field)
                uploads.raw(",\"file\":")
                uploads.string(asset.path)
                uploads.raw(",\"size\":")
                uploads.int(asset.bytes.count)
                uploads.raw(",\"sha256\":")
                uploads.string(SHA256.hex(asset.bytes))
                uploads.raw("}")
            }
            summary.records += 1
            if let progress, summary.records % 2048 == 0 { progress(summary.records, total) }
        }
        try forEachLink { link in
            try add(link)
            summary.links += 1
        }
        try flush()
        progress?(summary.records, total)
        try Self.writeFile(
            directory + "/" + CloudKitImport.manifestName, manifest(summary: summary, requests: requestNames, uploads: uploads.bytes))
        return summary
    }

    private func manifest(summary: Summary, requests: [String], uploads: [UInt8]) throws -> [UInt8] {
        var w = JSONWriter()
        w.raw("{\"format\":\"walstore-cloudkit-export\",\"version\":1,\"database\":")
        w.string(options.database)
        w.raw(",\"request\":")
        w.string("POST /database/1/<container>/<environment>/\(options.database)/records/modify")
        w.raw(",\"operationType\":")
        w.string(options.operationType.rawValue)
        w.raw(",\"zoneID\":{\"zoneName\":")
        w.string(options.zoneName)
        w.raw("},\"storeIdentifier\":")
        w.string(inspector.identifier)
        w.raw(",\"schemaVersion\":")
        if let version = inspector.schemaVersion { w.string(version.description) } else { w.raw("null") }
        w.raw(",\"records\":")
        w.int(summary.records)
        w.raw(",\"links\":")
        w.int(summary.links)
        w.raw(",\"assets\":")
        w.int(summary.assets)
        w.raw(",\"requests\":")
        w.array(requests) { $0.string($1) }
        w.raw(",\"assetUpload\":")
        w.string(
            "for each of assetUploads: POST /database/1/<container>/<environment>/\(options.database)/assets/upload with tokens [{recordName, recordType, fieldName}], POST the file to the url returned, and put the singleFile dictionary returned as the field's value in the request named"
        )
        w.raw(",\"assetUploads\":[")
        w.bytes.append(contentsOf: uploads)
        w.raw("]")
        w.raw(",\"schema\":")
        w.bytes.append(contentsOf: try StoreHeader.json(inspector.schema))
        w.raw("}\n")
        return w.bytes
    }

    static func quoted(_ text: String) -> String {
        var w = JSONWriter()
        w.string(text)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    static func writeFile(_ path: String, _ bytes: [UInt8]) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw CloudKitTransferError(.io, "cannot write the file", path: path)
        }
    }
}

/// Why a CloudKit export or import failed.
public struct CloudKitTransferError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The destination (export directory, new store) is not new or empty.
        public static let destinationNotEmpty = Code("destinationNotEmpty")
        /// A record's JSON is over the service's limit.
        public static let recordTooLarge = Code("recordTooLarge")
        /// A stored record does not decode.
        public static let unreadableRecord = Code("unreadableRecord")
        /// The directory is not a whole export (no or a damaged `manifest.json`, a missing request
        /// or asset file).
        public static let notAnExport = Code("notAnExport")
        /// A record of the export does not fit the schema the export names (an unknown record
        /// type, entity or field, a value of the wrong type, a missing required value, a
        /// reference to a record the export does not hold, two records sharing a unique value).
        public static let invalidRecord = Code("invalidRecord")
        /// A record has a field CloudKit cannot take (a non-finite double); ``fieldName`` names it.
        public static let unsendableValue = Code("unsendableValue")
        /// A file could not be read or written.
        public static let io = Code("io")
        public var description: String { name }
    }
    public var code: Code
    public var message: String
    /// The file concerned, when one is.
    public var path: String?
    /// The record concerned, when one is.
    public var recordName: String?
    /// The field concerned, when one is.
    public var fieldName: String?
    /// The engine key concerned (a stored record that does not decode).
    public var key: [UInt8]?

    public init(
        _ code: Code, _ message: String, path: String? = nil, recordName: String? = nil, fieldName: String? = nil, key: [UInt8]? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.recordName = recordName
        self.fieldName = fieldName
        self.key = key
    }

    public var description: String {
        var text = "CloudKitTransferError.\(code): \(message)"
        if let recordName { text += " [record \(recordName)]" }
        if let path { text += " [file \(path)]" }
        return text
    }
}
