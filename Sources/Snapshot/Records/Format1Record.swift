/// A record of records format 1 (read only to upgrade a store to format 2), as stored under an
/// `R` key: a format version byte (1), a varint field count,
/// then each field as its name (varint length + UTF-8) and its value (``FieldValueCoding``).
/// `CD_entityName` comes first, the other fields by name.
struct Format1Record: Equatable {
    static let version: UInt8 = 1
    static let entityNameField = "CD_entityName"

    var fields: [(name: String, value: PropertyValue)]

    static func == (lhs: Format1Record, rhs: Format1Record) -> Bool {
        lhs.fields.count == rhs.fields.count && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    init(fields: [(name: String, value: PropertyValue)]) { self.fields = fields }

    func encoded() -> [UInt8] {
        var out: [UInt8] = [Self.version]
        out.appendVarint(UInt64(fields.count))
        for field in fields {
            out.appendLengthPrefixed(Array(field.name.utf8))
            FieldValueCoding.encode(field.value, into: &out)
        }
        return out
    }

    /// Decodes every field (with `only`, `CD_entityName` and the fields it names; the others are
    /// skipped); an unknown version, a truncated field or trailing bytes throw.
    init(decoding bytes: [UInt8], key: [UInt8], only: Set<String>? = nil) throws(RecordDecodingError) {
        var reader = ByteReader(bytes, key: key)
        let version = try reader.byte()
        guard version == Self.version else { throw reader.failure("record format version \(version), expected \(Self.version)") }
        let count = try reader.varint()
        guard count <= UInt64(reader.remaining) else { throw reader.failure("\(count) fields with \(reader.remaining) bytes left") }
        var fields: [(name: String, value: PropertyValue)] = []
        fields.reserveCapacity(Int(count))
        for _ in 0..<count {
            let name = try reader.string()
            if let only, name != Self.entityNameField, !only.contains(name) {
                try FieldValueCoding.skip(&reader)
            } else {
                fields.append((name, try FieldValueCoding.decode(&reader)))
            }
        }
        guard reader.isAtEnd else { throw reader.failure("\(reader.remaining) bytes after the last field") }
        self.fields = fields
    }

    /// Only the concrete entity's name: the first field, read without decoding the rest.
    static func entityName(in bytes: [UInt8], key: [UInt8]) throws(RecordDecodingError) -> String {
        var reader = ByteReader(bytes, key: key)
        guard try reader.byte() == version else { throw reader.failure("an unknown record format version") }
        _ = try reader.varint()
        guard try reader.string() == entityNameField, case .string(let name) = try FieldValueCoding.decode(&reader) else {
            throw reader.failure("a record whose first field is not \(entityNameField)")
        }
        return name
    }

    subscript(name: String) -> PropertyValue? { fields.first { $0.name == name }?.value }
}
