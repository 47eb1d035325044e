import Foundation

/// One record in the shape of CloudKit Web Services' record dictionary (`recordName`,
/// `recordType`, `fields`), as Core Data's CloudKit mirroring lays an object out: record type
/// `CD_<Root>`, record name `<Entity>_<UUID>`, fields `CD_<property>` and `CD_entityName`,
/// assets `CD_<property>_ckAsset`, and `CDMR` records for many-to-many links.
///
/// Reference: CloudKit Web Services Reference, "Types and Dictionaries" (the record dictionary,
/// the record field dictionary and its `type` names, the asset dictionary) and "Modifying
/// Records (records/modify)", developer.apple.com/library/archive/documentation/DataManagement/
/// Conceptual/CloudKitWebServicesReference/.
public struct CloudKitRecord: Sendable, Equatable {
    /// `CD_<Root>`, or `CDMR` for a link.
    public var recordType: String
    /// `<Entity>_<UUID>` (`CDMR_<UUID>` for a link).
    public var recordName: String
    /// The fields in the order written: `CD_entityName` first, then by name.
    public var fields: [(name: String, value: CloudKitField)]

    public init(recordType: String, recordName: String, fields: [(name: String, value: CloudKitField)]) {
        self.recordType = recordType
        self.recordName = recordName
        self.fields = fields
    }

    public static func == (lhs: CloudKitRecord, rhs: CloudKitRecord) -> Bool {
        lhs.recordType == rhs.recordType && lhs.recordName == rhs.recordName && lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// The field named `name`.
    public subscript(name: String) -> CloudKitField? { fields.first { $0.name == name }?.value }

    /// The first field whose value CloudKit cannot take, with why: a non-finite `DOUBLE` (JSON
    /// has no number for it, and CloudKit refuses the strings), or a `TIMESTAMP` that is not a
    /// finite date. Nil when every field can be sent.
    public var unsendableField: (name: String, reason: String)? {
        for (name, value) in fields {
            switch value {
            case .double(let d) where !d.isFinite:
                return (name, "the DOUBLE \(d) is not finite, and CloudKit takes finite numbers only")
            case .doubleList(let list) where list.contains(where: { !$0.isFinite }):
                return (name, "a DOUBLE_LIST holds \(list.first { !$0.isFinite }!), and CloudKit takes finite numbers only")
            default: continue
            }
        }
        return nil
    }

    /// The record type of links (Core Data's many-to-many join records).
    public static let linkRecordType = "CDMR"
}

/// A field value as CloudKit Web Services' record field dictionary writes it: `value` and its
/// `type` (`STRING`, `INT64`, `DOUBLE`, `TIMESTAMP`, `BYTES`, `ASSETID`, and the `_LIST` forms).
public enum CloudKitField: Sendable, Equatable {
    case string(String)
    case int64(Int64)
    case double(Double)
    /// Whole milliseconds since 1970-01-01 00:00 UTC, as the reference's `TIMESTAMP` is: a
    /// `Date`'s fraction of a millisecond is rounded off (to the nearest).
    case timestamp(Int64)
    case bytes(Data)
    /// An asset: its bytes are the file `path` (relative to the export's directory), `size`
    /// bytes long. Written as `{"size", "file"}`, a placeholder: before it sends the request, a
    /// client uploads the file (`assets/upload`) and puts the dictionary the upload returns
    /// (`receipt`, `fileChecksum`, `size`, …) in its place.
    case asset(path: String, size: Int)
    case stringList([String])
    case int64List([Int64])
    case doubleList([Double])
    case timestampList([Int64])
    case bytesList([Data])

    /// The field dictionary's `type`.
    public var typeName: String {
        switch self {
        case .string: "STRING"
        case .int64: "INT64"
        case .double: "DOUBLE"
        case .timestamp: "TIMESTAMP"
        case .bytes: "BYTES"
        case .asset: "ASSETID"
        case .stringList: "STRING_LIST"
        case .int64List: "INT64_LIST"
        case .doubleList: "DOUBLE_LIST"
        case .timestampList: "TIMESTAMP_LIST"
        case .bytesList: "BYTES_LIST"
        }
    }
}

/// Writes JSON by hand, fast, in one buffer: strings escaped as RFC 8259 says, doubles in their
/// shortest round-trip form (a non-finite double, which JSON has no number for, as the string
/// `"NaN"`, `"Infinity"` or `"-Infinity"`: `dump` prints it so, an export refuses it).
package struct JSONWriter {
    package var bytes: [UInt8] = []
    package init() { bytes.reserveCapacity(1 << 16) }

    package mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }
    package mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    package mutating func string(_ text: String) {
        bytes.append(0x22)
        for unit in text.utf8 {
            switch unit {
            case 0x22: bytes.append(0x5C); bytes.append(0x22)
            case 0x5C: bytes.append(0x5C); bytes.append(0x5C)
            case 0x0A: bytes.append(0x5C); bytes.append(0x6E)
            case 0x0D: bytes.append(0x5C); bytes.append(0x72)
            case 0x09: bytes.append(0x5C); bytes.append(0x74)
            case 0..<0x20:
                raw("\\u00")
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(hex[Int(unit >> 4)])
                bytes.append(hex[Int(unit & 0xF)])
            default: bytes.append(unit)
            }
        }
        bytes.append(0x22)
    }

    package mutating func int(_ value: Int64) { raw(String(value)) }
    package mutating func int(_ value: Int) { raw(String(value)) }
    package mutating func uint(_ value: UInt64) { raw(String(value)) }

    package mutating func double(_ value: Double) {
        if value.isNaN {
            string("NaN")
        } else if value.isInfinite {
            string(value < 0 ? "-Infinity" : "Infinity")
        } else {
            var text = "\(value)"
            if text.hasSuffix(".0") { text.removeLast(2) }
            raw(text)
        }
    }

    package mutating func bool(_ value: Bool) { raw(value ? "true" : "false") }

    /// `"name":` (the comma before it is the caller's).
    package mutating func key(_ name: String) {
        string(name)
        bytes.append(0x3A)
    }

    package mutating func field(_ value: CloudKitField) {
        raw("{\"value\":")
        switch value {
        case .string(let s): string(s)
        case .int64(let i): int(i)
        case .double(let d): double(d)
        case .timestamp(let ms): int(ms)
        case .bytes(let data): string(data.base64EncodedString())
        case .asset(let path, let size):
            raw("{\"size\":")
            int(size)
            raw(",\"file\":")
            string(path)
            raw("}")
        case .stringList(let list): array(list) { $0.string($1) }
        case .int64List(let list): array(list) { $0.int($1) }
        case .doubleList(let list): array(list) { $0.double($1) }
        case .timestampList(let list): array(list) { $0.int($1) }
        case .bytesList(let list): array(list) { $0.string($1.base64EncodedString()) }
        }
        raw(",\"type\":\"")
        raw(value.typeName)
        raw("\"}")
    }

    package mutating func array<T>(_ items: [T], _ each: (inout JSONWriter, T) -> Void) {
        bytes.append(0x5B)
        for (i, item) in items.enumerated() {
            if i > 0 { bytes.append(0x2C) }
            each(&self, item)
        }
        bytes.append(0x5D)
    }

    /// The record dictionary: `{"recordName":…,"recordType":…,"fields":{…}}`.
    package mutating func record(_ record: CloudKitRecord) {
        raw("{\"recordName\":")
        string(record.recordName)
        raw(",\"recordType\":")
        string(record.recordType)
        raw(",\"fields\":{")
        for (i, field) in record.fields.enumerated() {
            if i > 0 { bytes.append(0x2C) }
            key(field.name)
            self.field(field.value)
        }
        raw("}}")
    }
}
