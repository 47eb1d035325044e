import Foundation

/// One transaction as stored under an `H` key (FORMAT.md, "History"): a version byte (1), the
/// timestamp (8 bytes, the bit pattern of `timeIntervalSinceReferenceDate`, big-endian), the
/// author (a value encoding: a string or null), a varint change count, then each change: a kind
/// byte (1 insert, 2 update, 3 delete), the concrete entity's name (varint length + UTF-8), the
/// primary key (16 bytes), and for an update a varint count of property names (each varint
/// length + UTF-8), for a delete a varint count of tombstone fields (name, then value encoding).
///
/// Entity and property names are strings, so a record stays readable after the schema changes.
struct HistoryRecord: Equatable {
    static let version: UInt8 = 1

    enum Kind: UInt8 { case insert = 1, update = 2, delete = 3 }

    struct Change: Equatable {
        var kind: Kind
        var entity: String
        var primaryKey: UUID
        /// An update's changed property names (sorted).
        var updated: [String] = []
        /// A delete's preserved values (sorted by name).
        var tombstone: [TombstoneField] = []
    }

    struct TombstoneField: Equatable {
        var name: String
        var value: PropertyValue
    }

    var timestamp: Date
    var author: String?
    var changes: [Change]

    func encoded() -> [UInt8] {
        var out: [UInt8] = [Self.version]
        out.appendBigEndian(timestamp.timeIntervalSinceReferenceDate.bitPattern)
        FieldValueCoding.encode(author.map(PropertyValue.string) ?? .null, into: &out)
        out.appendVarint(UInt64(changes.count))
        for change in changes {
            out.append(change.kind.rawValue)
            out.appendLengthPrefixed(Array(change.entity.utf8))
            out.append(contentsOf: RecordKeys.bytes(of: change.primaryKey))
            switch change.kind {
            case .insert:
                break
            case .update:
                out.appendVarint(UInt64(change.updated.count))
                for name in change.updated { out.appendLengthPrefixed(Array(name.utf8)) }
            case .delete:
                out.appendVarint(UInt64(change.tombstone.count))
                for field in change.tombstone {
                    out.appendLengthPrefixed(Array(field.name.utf8))
                    FieldValueCoding.encode(field.value, into: &out)
                }
            }
        }
        return out
    }

    /// Decodes a whole record; an unknown version or kind, a truncated field or trailing bytes
    /// throw.
    init(decoding bytes: [UInt8], key: [UInt8]) throws(RecordDecodingError) {
        var reader = ByteReader(bytes, key: key)
        timestamp = try Self.timestamp(&reader)
        switch try FieldValueCoding.decode(&reader) {
        case .null: author = nil
        case .string(let s): author = s
        default: throw reader.failure("an author that is neither a string nor null")
        }
        let count = try reader.varint()
        // Each change takes at least 18 bytes (kind, an empty name's length, the key).
        guard count <= UInt64(reader.remaining / 18) else { throw reader.failure("\(count) changes with \(reader.remaining) bytes left") }
        changes = []
        changes.reserveCapacity(Int(count))
        for _ in 0..<count {
            let raw = try reader.byte()
            guard let kind = Kind(rawValue: raw) else { throw reader.failure("unknown change kind \(raw)") }
            let entity = try reader.string()
            guard !entity.isEmpty else { throw reader.failure("an empty entity name") }
            var change = Change(kind: kind, entity: entity, primaryKey: RecordKeys.uuid(from: try reader.take(16)))
            switch kind {
            case .insert:
                break
            case .update:
                let n = try reader.varint()
                guard n <= UInt64(reader.remaining) else { throw reader.failure("\(n) property names with \(reader.remaining) bytes left") }
                for _ in 0..<n { change.updated.append(try reader.string()) }
            case .delete:
                let n = try reader.varint()
                guard n <= UInt64(reader.remaining) else { throw reader.failure("\(n) tombstone fields with \(reader.remaining) bytes left") }
                for _ in 0..<n { change.tombstone.append(TombstoneField(name: try reader.string(), value: try FieldValueCoding.decode(&reader))) }
            }
            changes.append(change)
        }
        guard reader.isAtEnd else { throw reader.failure("\(reader.remaining) bytes after the last change") }
    }

    init(timestamp: Date, author: String?, changes: [Change]) {
        self.timestamp = timestamp
        self.author = author
        self.changes = changes
    }

    /// Only the timestamp (what retention by age reads), without decoding the rest.
    static func timestamp(in bytes: [UInt8], key: [UInt8]) throws(RecordDecodingError) -> Date {
        var reader = ByteReader(bytes, key: key)
        return try timestamp(&reader)
    }

    private static func timestamp(_ reader: inout ByteReader) throws(RecordDecodingError) -> Date {
        let version = try reader.byte()
        guard version == Self.version else { throw reader.failure("history record version \(version), expected \(Self.version)") }
        let seconds = Double(bitPattern: try reader.bigEndian64())
        guard seconds.isFinite else { throw reader.failure("a timestamp that is not a finite number") }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }
}
