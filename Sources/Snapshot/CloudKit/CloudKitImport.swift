import Engine
import Foundation

/// Reads a directory that ``CloudKitExport/write(to:progress:)`` made (or any directory of
/// `records/modify` bodies with such a `manifest.json`) into a new `WALDataStore` of the
/// schema the manifest names: every object under its record name's primary key, its assets,
/// to-one references and `CDMR` links.
///
/// The whole directory is read and checked before the store is made: every record's type,
/// entity and fields against the schema, every reference and link against the records, every
/// uniqueness rule across them. A refused import leaves nothing at the store's path.
public enum CloudKitImport {
    /// The manifest's file name.
    public static let manifestName = "manifest.json"

    /// What ``makeStore(from:at:options:progress:)`` read.
    public struct Summary: Sendable, Equatable {
        /// Object records read.
        public var records = 0
        /// `CDMR` link records read.
        public var links = 0
        /// Asset files read.
        public var assets = 0

        public init(records: Int = 0, links: Int = 0, assets: Int = 0) {
            self.records = records
            self.links = links
            self.assets = assets
        }
    }

    /// One object of the export, checked.
    struct Object {
        var entity: String
        var primaryKey: UUID
        var values: [String: PropertyValue]
        var references: [String: String]
        var links: [String: [String]] = [:]
    }

    /// Makes a new store at `path` (missing, or an empty directory) holding the export in
    /// `directory`. `progress` gets (objects written, objects in all).
    ///
    /// - Throws: ``CloudKitTransferError``: `.destinationNotEmpty`, `.notAnExport`,
    ///   `.invalidRecord` (naming the record and what does not fit), `.io`; a
    ///   ``DataStoreError`` when the new store cannot be made. Nothing is left at `path`.
    @discardableResult
    public static func makeStore(
        from directory: String, at path: String, options: LogStore.Options = LogStore.Options(),
        progress: ((Int, Int) -> Void)? = nil
    ) throws -> Summary {
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        let existed = files.fileExists(atPath: path, isDirectory: &isDirectory)
        if existed && (!isDirectory.boolValue || !((try? files.contentsOfDirectory(atPath: path))?.isEmpty ?? false)) {
            throw CloudKitTransferError(.destinationNotEmpty, "the new store's path is not missing or an empty directory", path: path)
        }
        let (schema, requests) = try readManifest(directory)
        var objects: [String: Object] = [:]
        var order: [String] = []
        var linkRecords: [(recordName: String, fields: [String: CloudKitField])] = []
        var summary = Summary()
        for request in requests {
            for (recordType, recordName, fields) in try readRequest(directory, request) {
                if recordType == CloudKitRecord.linkRecordType {
                    linkRecords.append((recordName, fields))
                    continue
                }
                guard objects[recordName] == nil else {
                    throw CloudKitTransferError(.invalidRecord, "two records have this name", path: request, recordName: recordName)
                }
                objects[recordName] = try object(
                    recordType: recordType, recordName: recordName, fields: fields, schema: schema, directory: directory, summary: &summary)
                order.append(recordName)
            }
        }
        try resolve(&objects, links: linkRecords, schema: schema)
        summary.records = order.count
        summary.links = linkRecords.count

        var configuration = WALStoreConfiguration(name: "import", schema: schema, path: path, options: options)
        configuration.options.creation = .always
        let store = try WALDataStore(configuration)
        do {
            try write(objects, order: order, into: store, progress: progress)
            try store.close()
        } catch {
            try? store.close()
            if existed {
                for name in (try? files.contentsOfDirectory(atPath: path)) ?? [] { try? files.removeItem(atPath: path + "/" + name) }
            } else {
                try? files.removeItem(atPath: path)
            }
            throw error
        }
        return summary
    }

    /// The schema and the request files the manifest names.
    static func readManifest(_ directory: String) throws -> (Schema, [String]) {
        let path = directory + "/" + manifestName
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CloudKitTransferError(.notAnExport, "no manifest.json: not a whole export (walstore export --cloudkit makes one)", path: path)
        }
        guard let manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            manifest["format"] as? String == "walstore-cloudkit-export", manifest["version"] as? Int == 1,
            let requests = manifest["requests"] as? [String], let schemaObject = manifest["schema"],
            let schemaData = try? JSONSerialization.data(withJSONObject: schemaObject),
            let schema = try? JSONDecoder().decode(Schema.self, from: schemaData)
        else {
            throw CloudKitTransferError(
                .notAnExport, "manifest.json is not a walstore-cloudkit-export of version 1 with a schema and its requests", path: path)
        }
        for request in requests where !isSafeRelativePath(request) {
            throw CloudKitTransferError(.notAnExport, "the manifest names a request file outside the directory", path: request)
        }
        return (schema, requests)
    }

    static func isSafeRelativePath(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.split(separator: "/").contains("..")
    }

    /// The records of one `records/modify` body.
    static func readRequest(_ directory: String, _ name: String) throws -> [(String, String, [String: CloudKitField])] {
        let path = directory + "/" + name
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CloudKitTransferError(.notAnExport, "a request file the manifest names is missing", path: name)
        }
        let body: RequestBody
        do {
            body = try JSONDecoder().decode(RequestBody.self, from: data)
        } catch let error as CloudKitTransferError {
            var error = error
            error.path = name
            throw error
        } catch {
            throw CloudKitTransferError(
                .notAnExport, "not a records/modify request body of operations with records (recordType, recordName, fields): \(error)", path: name)
        }
        return body.operations.map { ($0.record.recordType, $0.record.recordName, $0.record.fields.mapValues(\.field)) }
    }

    /// A `records/modify` body, as far as an import reads it.
    struct RequestBody: Decodable {
        struct Operation: Decodable {
            var record: Record
        }
        struct Record: Decodable {
            var recordType: String
            var recordName: String
            var fields: [String: Field]
        }
        var operations: [Operation]
    }

    /// A record field dictionary `{"value":…, "type":…}`.
    struct Field: Decodable {
        var field: CloudKitField

        enum Keys: String, CodingKey { case value, type }
        /// `{"size", "file"}` (`downloadURL` in exports before the upload placeholder).
        struct Asset: Decodable {
            var size: Int?
            var file: String?
            var downloadURL: String?
        }
        struct Reference: Decodable {
            var recordName: String
        }
        /// A double, or the strings a non-finite one is written as.
        struct Number: Decodable {
            var value: Double
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let d = try? container.decode(Double.self) {
                    value = d
                    return
                }
                switch try container.decode(String.self) {
                case "NaN": value = .nan
                case "Infinity": value = .infinity
                case "-Infinity": value = -.infinity
                default: throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a number")
                }
            }
        }
        struct Bytes: Decodable {
            var value: Data
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                guard let data = Data(base64Encoded: try container.decode(String.self)) else {
                    throw DecodingError.dataCorruptedError(in: container, debugDescription: "not base64")
                }
                value = data
            }
        }

        /// A `TIMESTAMP`'s milliseconds: whole, as CloudKit writes them (an older export's
        /// fraction is rounded off).
        static func milliseconds(_ value: Double) throws -> Int64 {
            guard let ms = Int64(exactly: value.rounded()) else {
                throw CloudKitTransferError(.invalidRecord, "a TIMESTAMP of \(value), which is no date")
            }
            return ms
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            let type = try c.decode(String.self, forKey: .type)
            switch type {
            case "STRING": field = .string(try c.decode(String.self, forKey: .value))
            case "INT64": field = .int64(try c.decode(Int64.self, forKey: .value))
            case "DOUBLE": field = .double(try c.decode(Number.self, forKey: .value).value)
            case "TIMESTAMP": field = .timestamp(try Self.milliseconds(c.decode(Number.self, forKey: .value).value))
            case "BYTES": field = .bytes(try c.decode(Bytes.self, forKey: .value).value)
            case "REFERENCE": field = .string(try c.decode(Reference.self, forKey: .value).recordName)
            case "ASSETID", "ASSET":
                let asset = try c.decode(Asset.self, forKey: .value)
                guard let file = asset.file ?? asset.downloadURL else {
                    throw CloudKitTransferError(.notAnExport, "an asset field names no file")
                }
                guard CloudKitImport.isSafeRelativePath(file) else {
                    throw CloudKitTransferError(.notAnExport, "an asset's file is outside the directory: \(file)")
                }
                field = .asset(path: file, size: asset.size ?? -1)
            case "STRING_LIST": field = .stringList(try c.decode([String].self, forKey: .value))
            case "INT64_LIST": field = .int64List(try c.decode([Int64].self, forKey: .value))
            case "DOUBLE_LIST": field = .doubleList(try c.decode([Number].self, forKey: .value).map(\.value))
            case "TIMESTAMP_LIST": field = .timestampList(try c.decode([Number].self, forKey: .value).map { try Self.milliseconds($0.value) })
            case "BYTES_LIST": field = .bytesList(try c.decode([Bytes].self, forKey: .value).map(\.value))
            default:
                throw CloudKitTransferError(.invalidRecord, "a field of type \(type), which no attribute is written as")
            }
        }
    }

    /// One object record checked against the schema.
    static func object(
        recordType: String, recordName: String, fields: [String: CloudKitField], schema: Schema, directory: String, summary: inout Summary
    ) throws -> Object {
        func refuse(_ message: String) -> CloudKitTransferError {
            CloudKitTransferError(.invalidRecord, message, recordName: recordName)
        }
        guard case .string(let entityName)? = fields["CD_entityName"], let entity = schema.entity(named: entityName), !entity.isAbstract else {
            throw refuse("no CD_entityName naming a concrete entity of the schema")
        }
        guard recordType == "CD_\(schema.rootEntity(of: entityName)?.name ?? entityName)" else {
            throw refuse(
                "record type \(recordType), but entity \(entityName) is stored as CD_\(schema.rootEntity(of: entityName)?.name ?? entityName)")
        }
        guard let (named, primaryKey) = RecordName.parse(recordName), named == entityName else {
            throw refuse("the record name is not \(entityName)_<UUID>")
        }
        var object = Object(entity: entityName, primaryKey: primaryKey, values: [:], references: [:])
        var known: Set<String> = ["CD_entityName"]
        for property in schema.allProperties(of: entityName) {
            switch property {
            case .attribute(let attribute):
                let name = "CD_\(attribute.name)", assetName = "CD_\(attribute.name)_ckAsset"
                known.insert(name)
                known.insert(assetName)
                if attribute.options.contains(.ephemeral) { continue }
                var field = fields[name]
                if case .asset(let path, let size)? = fields[assetName] {
                    guard let data = FileManager.default.contents(atPath: directory + "/" + path) else {
                        throw CloudKitTransferError(.notAnExport, "the asset file of \(assetName) is missing", path: path, recordName: recordName)
                    }
                    guard size < 0 || size == data.count else {
                        throw CloudKitTransferError(
                            .notAnExport, "the asset file of \(assetName) is \(data.count) bytes, the record says \(size)", path: path,
                            recordName: recordName)
                    }
                    summary.assets += 1
                    field = .bytes(data)
                }
                guard let field else {
                    guard attribute.isOptional else { throw refuse("\(name) is missing, and \(entityName).\(attribute.name) is not optional") }
                    object.values[attribute.name] = .null
                    continue
                }
                guard let value = CloudKitValueMapping.value(field, type: attribute.valueType) else {
                    throw refuse("\(name) is a \(field.typeName) that does not hold a \(attribute.valueType)")
                }
                object.values[attribute.name] = value
            case .relationship(let relationship) where !relationship.isToMany:
                let name = "CD_\(relationship.name)"
                known.insert(name)
                switch fields[name] {
                case nil: break
                case .string(let target)?: object.references[relationship.name] = target
                case let field?: throw refuse("\(name) is a \(field.typeName), not a record name (STRING)")
                }
            case .relationship:
                continue
            }
        }
        if let unknown = fields.keys.filter({ $0.hasPrefix("CD_") && !known.contains($0) }).sorted().first {
            throw refuse("the field \(unknown) is no property of \(entityName)")
        }
        return object
    }

    /// Checks every reference and link against the records, and puts each link on the side(s)
    /// it belongs to.
    static func resolve(
        _ objects: inout [String: Object], links linkRecords: [(recordName: String, fields: [String: CloudKitField])], schema: Schema
    ) throws {
        func isA(_ entity: String, _ destination: String) -> Bool {
            var current: String? = entity
            while let name = current {
                if name == destination { return true }
                current = schema.entity(named: name)?.superentityName
            }
            return false
        }
        for (name, object) in objects {
            for (relationship, target) in object.references {
                guard let destination = schema.relationship(named: relationship, in: object.entity)?.destination,
                    let other = objects[target], isA(other.entity, destination)
                else {
                    throw CloudKitTransferError(
                        .invalidRecord,
                        "CD_\(relationship) names \(target), which is no \(schema.relationship(named: relationship, in: object.entity)?.destination ?? "object") of the export",
                        recordName: name)
                }
            }
        }
        var links: [LinkEnd: [String]] = [:]
        for (linkName, fields) in linkRecords {
            func refuse(_ message: String) -> CloudKitTransferError {
                CloudKitTransferError(.invalidRecord, message, recordName: linkName)
            }
            guard case .string(let recordNames)? = fields["CD_recordNames"], case .string(let relationships)? = fields["CD_relationships"] else {
                throw refuse("a CDMR record without CD_recordNames and CD_relationships strings")
            }
            let names = recordNames.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            let rels = relationships.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard names.count == 2, rels.count == 2, let a = objects[names[0]], let b = objects[names[1]] else {
                throw refuse("CD_recordNames \(recordNames) does not name two records of the export")
            }
            // A link of an object to itself through a relationship that is its own inverse
            // names one end twice: it is one target.
            let ends =
                names[0] == names[1] && rels[0] == rels[1]
                ? [(a, b, names[0], names[1], rels[0])]
                : [(a, b, names[0], names[1], rels[0]), (b, a, names[1], names[0], rels[1])]
            for (here, there, hereName, thereName, rel) in ends where !rel.isEmpty {
                guard let relationship = schema.relationship(named: rel, in: here.entity), relationship.isToMany,
                    isA(there.entity, relationship.destination)
                else {
                    throw refuse("\(here.entity) has no to-many relationship \(rel) to \(there.entity)")
                }
                links[LinkEnd(recordName: hereName, relationship: rel), default: []].append(thereName)
            }
        }
        // Set apart from `objects` while collected: appending to an array inside a dictionary's
        // struct value would copy the array every time.
        for (end, targets) in links { objects[end.recordName]?.links[end.relationship] = targets }
    }

    /// One side of links: an object and its to-many relationship.
    struct LinkEnd: Hashable {
        var recordName: String
        var relationship: String
    }

    /// Writes the checked objects, a batch of commits at a time.
    static func write(_ objects: [String: Object], order: [String], into store: WALDataStore, progress: ((Int, Int) -> Void)?) throws {
        let mapper = store.mapper
        func identifier(_ recordName: String) throws -> PersistentIdentifier {
            guard let object = objects[recordName] else { throw CloudKitTransferError(.invalidRecord, "no such record", recordName: recordName) }
            return try mapper.identifier(entity: object.entity, primaryKey: object.primaryKey)
        }
        var snapshots: [DefaultSnapshot] = []
        snapshots.reserveCapacity(order.count)
        var unique: [[UInt8]: String] = [:]
        for name in order {
            guard let object = objects[name] else { continue }
            var values = object.values
            for (relationship, target) in object.references { values[relationship] = .toOne(try identifier(target)) }
            for (relationship, targets) in object.links { values[relationship] = .toMany(try targets.map(identifier)) }
            let snapshot = DefaultSnapshot(persistentIdentifier: try identifier(name), values: values)
            for (key, properties) in mapper.uniqueKeys(of: snapshot) {
                if let other = unique.updateValue(name, forKey: key) {
                    throw CloudKitTransferError(
                        .invalidRecord, "\(other) and this record share the unique value of \(properties.joined(separator: ", "))", recordName: name)
                }
            }
            snapshots.append(snapshot)
        }
        var batch = WriteBatch()
        var bytes = 0
        for (i, snapshot) in snapshots.enumerated() {
            for (key, entry) in mapper.entries(of: snapshot) {
                switch entry {
                case .inline(let value):
                    batch.put(key, value)
                    bytes += key.count + value.count
                case .external(let value):
                    batch.putExternal(key, value)
                    bytes += key.count + 64
                }
            }
            if bytes > 4 << 20 || batch.count > 20_000 {
                try store.space.commit(batch)
                batch = WriteBatch()
                bytes = 0
                progress?(i + 1, snapshots.count)
            }
        }
        if !batch.isEmpty { try store.space.commit(batch) }
        progress?(snapshots.count, snapshots.count)
    }
}
