import Foundation
import Snapshot
import Testing

/// Records format 2 (FORMAT.md, "Record value, version 2"): the field list, the reader that
/// parses only the header, the writer, and the typed decoding of one field.
@Suite struct RecordFormatTests {
    struct Point: Codable { var x: Int }
    static let pointType = String(reflecting: Point.self)

    static func schema() throws -> Schema {
        let attributes: [Schema.Attribute] = [
            .init("b", .bool, isOptional: true), .init("i", .int, isOptional: true), .init("i8", .int8, isOptional: true),
            .init("i16", .int16, isOptional: true), .init("i32", .int32, isOptional: true), .init("i64", .int64, isOptional: true),
            .init("scratch", .string, isOptional: true, options: .ephemeral),
            .init("u", .uint, isOptional: true), .init("u8", .uint8, isOptional: true), .init("u16", .uint16, isOptional: true),
            .init("u32", .uint32, isOptional: true), .init("u64", .uint64, isOptional: true), .init("f", .float, isOptional: true),
            .init("d", .double, isOptional: true), .init("s", .string, isOptional: true), .init("dt", .date, isOptional: true),
            .init("id", .uuid, isOptional: true), .init("url", .url, isOptional: true), .init("data", .data, isOptional: true),
            .init("dec", .decimal, isOptional: true), .init("arr", .array(.int), isOptional: true),
            .init("pt", .codable(typeName: pointType), isOptional: true),
        ]
        let relationships: [Schema.Relationship] = [
            .init("owner", destination: "Thing", .toOne, inverse: "children"),
            .init("children", destination: "Thing", .toMany, inverse: "owner"),
        ]
        return try Schema([Schema.Entity("Thing", attributes: attributes, relationships: relationships)])
    }

    let fields: RecordFieldList
    init() throws { fields = RecordFieldList(schema: try Self.schema(), entity: "Thing") }

    /// Values of each field's type, in field order; record k takes the k-th value of each list
    /// (cycling).
    static func valuesByField() throws -> [[PropertyValue]] {
        let target = try PersistentIdentifier.identifier(for: "S", entityName: "Thing", primaryKey: UUID())
        return [
            [.bool(true), .bool(false), .null],
            [.int(.min), .int(.max), .int(0), .int(-1), .int(128), .int(-129), .int(40_000), .int(-2_147_483_649)],
            [.int8(.min), .int8(.max), .int8(0), .int8(-1)],
            [.int16(.min), .int16(.max), .int16(-128), .int16(255)],
            [.int32(.min), .int32(.max), .int32(65_536)],
            [.int64(.min), .int64(.max), .int64(-32_769)],
            [.uint(.max), .uint(0), .uint(255), .uint(256)],
            [.uint8(.max), .uint8(0), .uint8(128)],
            [.uint16(.max), .uint16(0x8000)],
            [.uint32(.max), .uint32(0x8000_0000), .uint32(65_536)],
            [.uint64(.max), .uint64(0), .uint64(0x8000_0000_0000_0000)],
            [.float(-0.0), .float(.nan), .float(Float(bitPattern: 0x7FC0_1234)), .float(.infinity), .float(.leastNonzeroMagnitude)],
            [.double(-0.0), .double(Double(bitPattern: 0x7FF0_0000_0000_0001)), .double(.nan), .double(-.infinity), .double(0.1)],
            [.string(""), .string("Café ☕️ \u{0}"), .string("e\u{301}")],
            [.date(Date(timeIntervalSinceReferenceDate: 123.456_789_012_3)), .date(Date(timeIntervalSinceReferenceDate: -0.0))],
            [.uuid(UUID()), .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))],
            [.url(URL(string: "https://example.com/a%20b?q=1#f")!)],
            [.data(Data()), .data(Data([0, 255, 7]))],
            [.decimal(Decimal(string: "12345678901234567890.123456789")!), .decimal(-1), .decimal(.nan), .decimal(0)],
            [.array([]), .array([.int(1), .string("x"), .array([.null])])],
            [.codable(typeName: pointType, encoded: Data(#"{"x":3}"#.utf8)), .codable(typeName: pointType, encoded: Data())],
            [.toOne(target), .toOne(nil)],
        ]
    }

    static func record(_ values: [PropertyValue]) -> [UInt8] {
        RecordWriter.record(entityName: "Thing", values: values.map { .value($0) })
    }

    func read(_ bytes: [UInt8]) throws -> [PropertyValue] {
        let reader = try RecordReader(bytes, key: [0x52])
        return try fields.fields.map { try reader.value(of: $0, storeIdentifier: "S") }
    }

    @Test func theFieldListKeepsStoredAttributesAndToOnesInPropertyOrder() {
        #expect(
            fields.fields.map(\.name) == [
                "b", "i", "i8", "i16", "i32", "i64", "u", "u8", "u16", "u32", "u64", "f", "d", "s", "dt", "id", "url", "data", "dec",
                "arr", "pt", "owner",
            ])
        #expect(fields.fields.enumerated().allSatisfy { $0.offset == $0.element.index })
        #expect(fields.index(of: "scratch") == nil)
        #expect(fields.index(of: "children") == nil)
        #expect(fields.index(of: "owner") == 21)
    }

    @Test func everyValueOfEveryTypeRoundTripsExactly() throws {
        let lists = try Self.valuesByField()
        try #require(lists.count == fields.count)
        for k in 0..<8 {
            let values = lists.map { $0[k % $0.count] }
            let decoded = try read(Self.record(values))
            #expect(decoded == values)
            for (a, b) in zip(values, decoded) {
                if case .double(let x) = a, case .double(let y) = b { #expect(x.bitPattern == y.bitPattern) }
                if case .float(let x) = a, case .float(let y) = b { #expect(x.bitPattern == y.bitPattern) }
            }
        }
    }

    @Test func integersTakeTheFewestBytesThatHoldThem() throws {
        let cases: [(PropertyValue, UInt64)] = [
            (.int(0), 7), (.int(1), 3), (.int(-128), 3), (.int(128), 4), (.int(-129), 4), (.int(32_768), 5),
            (.int(.min), 6), (.uint8(255), 3), (.uint16(256), 4), (.uint64(.max), 6), (.uint32(0x8000_0000), 5),
        ]
        for (value, serialType) in cases {
            let reader = try RecordReader(RecordWriter.record(entityName: "E", values: [.value(value)]), key: [])
            #expect(reader.serialType(0) == serialType, "\(value)")
        }
    }

    @Test func theHeaderGivesEveryFieldsBodyWithoutDecodingTheOthers() throws {
        var values = Array(repeating: PropertyValue.null, count: fields.count)
        values[13] = .string("hello")
        values[14] = .date(Date(timeIntervalSinceReferenceDate: 1))
        var bytes = Self.record(values)
        let reader = try RecordReader(bytes, key: [])
        #expect(reader.entityName == "Thing")
        #expect(Array(reader.entityNameBytes) == Array("Thing".utf8))
        #expect(reader.fieldCount == fields.count)
        #expect(reader.serialType(13) == 16 + 2 * 5)
        #expect(Array(reader.body(13)) == Array("hello".utf8))
        #expect(reader.bodyRange(14).count == 8)
        #expect(reader.bodyRange(14).upperBound == bytes.count)
        // Damage field 13's body: field 14 still reads, field 13 is a typed error.
        bytes[reader.bodyRange(13).lowerBound] = 0xFF
        let damaged = try RecordReader(bytes, key: [])
        #expect(try damaged.value(14, as: .date) == .date(Date(timeIntervalSinceReferenceDate: 1)))
        #expect(throws: RecordDecodingError.self) { try damaged.value(13, as: .string) }
    }

    @Test func aRecordWithFewerFieldsReadsTheMissingOnesAsDefaults() throws {
        let schema = try Schema([
            Schema.Entity(
                "E",
                attributes: [
                    .init("a", .int), .init("n", .string, defaultValue: "none"), .init("o", .int, isOptional: true),
                ])
        ])
        let list = RecordFieldList(schema: schema, entity: "E")
        let reader = try RecordReader(RecordWriter.record(entityName: "E", values: [.value(.int(5))]), key: [])
        #expect(reader.fieldCount == 1)
        #expect(try list.fields.map { try reader.value(of: $0, storeIdentifier: "S") } == [.int(5), .string("none"), .null])
    }

    @Test func theSnapshotWriterMatchesTheOrderedWriterAndMarksAssets() throws {
        let id = try PersistentIdentifier.identifier(for: "S", entityName: "Thing", primaryKey: UUID())
        let snapshot = DefaultSnapshot(persistentIdentifier: id, values: ["s": "x", "i": 4, "scratch": "gone", "data": .data(Data([1]))])
        var expected = Array(repeating: RecordFieldValue.value(.null), count: fields.count)
        expected[1] = .value(.int(4))
        expected[13] = .value(.string("x"))
        expected[17] = .asset
        let bytes = RecordWriter.record(of: snapshot, fields: fields) { field, _ in field.name == "data" }
        #expect(bytes == RecordWriter.record(entityName: "Thing", values: expected))
        let reader = try RecordReader(bytes, key: [])
        #expect(reader.isAsset(17))
        #expect(reader.serialType(17) == 11)
        #expect(throws: RecordDecodingError.self) { try reader.value(17, as: .data) }
    }

    /// `02`, header size, name "E", then the serial types, then the bodies.
    @Test(arguments: [
        [] as [UInt8],  // empty
        [1, 2, 1, 0x45],  // version 1
        [3, 2, 1, 0x45],  // version 3
        [2, 9, 1, 0x45],  // header size past the end
        [2, 2, 5, 0x45],  // name past the header
        [2, 1, 0],  // empty name
        [2, 2, 1, 0xFF],  // name not UTF-8
        [2, 3, 1, 0x45, 12],  // reserved serial type
        [2, 3, 1, 0x45, 15],  // reserved serial type
        [2, 3, 1, 0x45, 0x83, 0x00],  // a serial type's varint crossing the header's end (into a 1-byte body)
        [2, 3, 1, 0x45, 6, 0, 0, 0],  // 8-byte body, 3 bytes left
        [2, 3, 1, 0x45, 3, 1, 2],  // a byte after the last body
        [2, 12, 1, 0x45, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],  // an enormous body
    ])
    func aMalformedHeaderIsATypedError(_ bytes: [UInt8]) {
        #expect(throws: RecordDecodingError.self) { try RecordReader(bytes, key: [0x52]) }
    }

    /// One field whose body does not fit the attribute's type.
    @Test(
        arguments: [
            ([2, 3, 1, 0x45, 18, 0x41] as [UInt8], Schema.Attribute.ValueType.int),  // text for an int
            ([2, 3, 1, 0x45, 4, 1, 0], .int8),  // 256 for an int8
            ([2, 3, 1, 0x45, 6, 0, 0, 0, 0, 0, 0, 0, 1], .bool),  // 8 bytes for a bool
            ([2, 3, 1, 0x45, 5, 0x80, 0, 0, 0], .uint8),  // 2^31 for a uint8
            ([2, 3, 1, 0x45, 18, 0xFF], .string),  // text not UTF-8
            ([2, 3, 1, 0x45, 22, 0x61, 0x62, 0x63], .decimal),  // "abc" for a decimal
            ([2, 3, 1, 0x45, 19, 0x00], .array(.int)),  // a null where an array is
            ([2, 3, 1, 0x45, 23, 20, 0, 0], .array(.int)),  // bytes after an array
            ([2, 3, 1, 0x45, 8, 0, 0, 0, 0], .double),  // a float for a double
            ([2, 3, 1, 0x45, 9, 0, 0, 0, 0, 0, 0, 0, 0], .float),  // a double for a float
            ([2, 3, 1, 0x45, 19, 0x01], .string),  // bytes for a string
            ([2, 3, 1, 0x45, 18, 0x41], .data),  // text for data
            ([2, 3, 1, 0x45, 2], .int),  // true for an int
            ([2, 3, 1, 0x45, 7], .bool),  // zero for a bool
            ([2, 3, 1, 0x45, 17], .uuid),  // empty bytes for a uuid
            ([2, 3, 1, 0x45, 16], .url),  // empty text for a URL
        ] as [([UInt8], Schema.Attribute.ValueType)])
    func aBodyThatDoesNotFitItsTypeIsATypedError(_ bytes: [UInt8], _ type: Schema.Attribute.ValueType) throws {
        let reader = try RecordReader(bytes, key: [0x52])
        #expect(throws: RecordDecodingError.self) { try reader.value(0, as: type) }
    }

    @Test func anIntegerInAWiderBodyThanNeededStillReadsWhenItFits() throws {
        let reader = try RecordReader([2, 4, 1, 0x45, 4, 3, 0, 0xFF, 0xFF], key: [])
        #expect(try reader.value(0, as: .uint16) == .uint16(255))
        #expect(try reader.value(1, as: .int8) == .int8(-1))
        #expect(try reader.value(1, as: .uint8) == .uint8(255))
    }

    @Test func aMalformedToOneIsATypedError() throws {
        let short = try RecordReader([2, 3, 1, 0x45, 19, 0x01], key: [])  // 1 byte: no pk and name
        #expect(throws: RecordDecodingError.self) { try short.toOneTarget(0) }
        let text = try RecordReader([2, 3, 1, 0x45, 18, 0x01], key: [])
        #expect(throws: RecordDecodingError.self) { try text.toOneTarget(0) }
        let badName = try RecordReader([2, 3, 1, 0x45, 17 + 34] + Array(repeating: 0, count: 16) + [0xFF], key: [])
        #expect(throws: RecordDecodingError.self) { try badName.toOneTarget(0) }
        #expect(throws: RecordDecodingError.self) { try badName.value(1, as: .int) }
    }
}
