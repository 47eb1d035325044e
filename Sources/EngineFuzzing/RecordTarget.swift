import Foundation
import Snapshot

/// The `record` target: a records-format-2 record value through `RecordReader` (the header),
/// then every field of the record's entity decoded under a fixed schema (FORMAT.md §18, "Record
/// value, version 2"). A `RecordDecodingError` (or a refused identifier) is the accepted outcome
/// for damaged bytes.
enum RecordTarget {
    /// Every attribute type, an ephemeral attribute, a to-one and a to-many, over two entities
    /// (`Thing` and its sub-entity `Part`, which adds fields after the inherited ones).
    static let schema: Schema? = {
        let attributes: [Schema.Attribute] = [
            .init("b", .bool, isOptional: true), .init("i", .int, isOptional: true), .init("i8", .int8, isOptional: true),
            .init("i16", .int16, isOptional: true), .init("i32", .int32, isOptional: true), .init("i64", .int64, isOptional: true),
            .init("scratch", .string, isOptional: true, options: .ephemeral),
            .init("u", .uint, isOptional: true), .init("u8", .uint8, isOptional: true), .init("u16", .uint16, isOptional: true),
            .init("u32", .uint32, isOptional: true), .init("u64", .uint64, isOptional: true), .init("f", .float, isOptional: true),
            .init("d", .double, isOptional: true), .init("s", .string, isOptional: true), .init("dt", .date, isOptional: true),
            .init("id", .uuid, isOptional: true), .init("url", .url, isOptional: true), .init("data", .data, isOptional: true),
            .init("dec", .decimal, isOptional: true), .init("arr", .array(.string), isOptional: true),
            .init("pt", .codable(typeName: "Point"), isOptional: true),
        ]
        return try? Schema([
            .init(
                "Thing", attributes: attributes,
                relationships: [
                    .init("owner", destination: "Thing", .toOne, inverse: "children"),
                    .init("children", destination: "Thing", .toMany, inverse: "owner"),
                ]),
            .init("Part", superentity: "Thing", attributes: [.init("weight", .double, defaultValue: .double(1))]),
        ])
    }()

    /// Decodes `bytes`; true when every field decoded. The header is also read in place
    /// (``RecordView``, what a fetch matches on): both readers must accept the same records and
    /// find the same fields, or the target traps. (The view leaves the entity's name as bytes,
    /// unvalidated: a record whose name is not UTF-8 is refused by ``RecordReader`` alone.)
    static func run(_ bytes: [UInt8]) -> Bool {
        guard let schema else { return false }
        let inPlace: (fields: [(UInt64, [UInt8])], nameIsUTF8: Bool)? = bytes.withUnsafeBytes { raw in
            let key: [UInt8] = [0x52]
            return key.withUnsafeBytes { key in
                guard let view = try? RecordView(raw, key: key, buffer: RecordSlotBuffer(capacity: 64)) else { return nil }
                let fields = (0..<view.fieldCount).map { (view.serialType($0), Array(view.body($0))) }
                return (fields, String(validating: view.entityName, as: UTF8.self) != nil)
            }
        }
        let copied = (try? RecordReader(bytes, key: [0x52])).map { reader in
            (0..<reader.fieldCount).map { (reader.serialType($0), Array(reader.body($0))) }
        }
        if let copied, copied.count <= 64 {
            precondition(inPlace.map { $0.fields.elementsEqual(copied, by: ==) } ?? false, "the in-place reader disagrees with RecordReader")
        } else if copied == nil, let inPlace {
            precondition(!inPlace.nameIsUTF8, "the in-place reader accepts a record RecordReader refuses")
        }
        do {
            let reader = try RecordReader(bytes, key: [0x52])
            let entity = schema.entity(named: reader.entityName) == nil ? "Thing" : reader.entityName
            let fields = RecordFieldList(schema: schema, entity: entity)
            guard reader.fieldCount <= fields.count else { return false }
            for i in 0..<reader.fieldCount {
                _ = reader.serialType(i)
                _ = reader.body(i)
            }
            for field in fields.fields where !reader.isAsset(field.index) {
                _ = try reader.value(of: field, storeIdentifier: "FUZZ")
            }
            return true
        } catch {
            return false
        }
    }

    /// Seed records: every field set (values of every type, a to-one), a sub-entity's record, a
    /// record with fewer fields than its entity, one with assets and nulls.
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        guard let schema else { return [] }
        let target = try? PersistentIdentifier.identifier(
            for: "FUZZ", entityName: "Part", primaryKey: UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)))
        let values: [PropertyValue] = [
            .bool(true), .int(-2), .int8(.min), .int16(300), .int32(-70_000), .int64(.max), .uint(7), .uint8(255), .uint16(.max),
            .uint32(0x8000_0000), .uint64(.max), .float(-0.0), .double(.nan), .string("héllo"),
            .date(Date(timeIntervalSinceReferenceDate: 600_000_000)), .uuid(UUID(uuid: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))),
            .url(URL(string: "https://example.com/a?b=c")!), .data(Data([0, 1, 2])), .decimal(Decimal(string: "3.25")!),
            .array([.string("x"), .string("")]), .codable(typeName: "Point", encoded: Data(#"{"x":1}"#.utf8)), .toOne(target),
        ]
        let thing = RecordFieldList(schema: schema, entity: "Thing")
        let part = RecordFieldList(schema: schema, entity: "Part")
        var withAssets = values.map(RecordFieldValue.value)
        withAssets[13] = .asset
        withAssets[17] = .asset
        withAssets[0] = .value(.null)
        return [
            ("thing", [0] + RecordWriter.record(entityName: thing.entity, values: values.map(RecordFieldValue.value))),
            ("part", [0] + RecordWriter.record(entityName: part.entity, values: (values + [.double(2.5)]).map(RecordFieldValue.value))),
            ("short", [0] + RecordWriter.record(entityName: "Part", values: values.prefix(3).map(RecordFieldValue.value))),
            ("assets", [0] + RecordWriter.record(entityName: "Thing", values: withAssets)),
        ]
    }
}
