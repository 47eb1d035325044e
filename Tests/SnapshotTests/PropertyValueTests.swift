import EngineTestSupport
import Foundation
import Snapshot
import Testing

@Suite struct PropertyValueTests {
    struct Point: Codable, Equatable { var x: Int; var label: String }

    static func everyCase() throws -> [PropertyValue] {
        let id = try PersistentIdentifier.identifier(for: "s", entityName: "Post", primaryKey: UUID())
        return [
            .null, .bool(true), .bool(false),
            .int(.min), .int(.max), .int8(-128), .int16(.max), .int32(.min), .int64(.min), .int64(.max),
            .uint(.max), .uint8(255), .uint16(7), .uint32(.max), .uint64(.max), .uint64(0),
            .float(1.5), .float(-0.0), .float(.nan), .float(.infinity), .float(.leastNonzeroMagnitude),
            .double(0.1), .double(-0.0), .double(.nan), .double(-.infinity), .double(.greatestFiniteMagnitude),
            .double(Double(bitPattern: 0x7FF0_0000_0000_0001)),
            .string(""), .string("Café ☕️ \u{0}"), .date(Date(timeIntervalSinceReferenceDate: 123.456_789_012_3)),
            .date(Date(timeIntervalSinceReferenceDate: -0.0)), .uuid(UUID()),
            .url(URL(string: "https://example.com/a%20b?q=1#f")!), .data(Data()), .data(Data([0, 255, 7])),
            .decimal(Decimal(string: "12345678901234567890.123456789")!), .decimal(-1), .decimal(.nan),
            .array([]), .array([.int(1), .string("x"), .array([.null])]),
            try .encoding(Point(x: 3, label: "p")),
            .toOne(nil), .toOne(id), .toOne(.temporary(entityName: "Tag")), .toMany([]), .toMany([id, .temporary(entityName: "Post")]),
        ]
    }

    @Test func everyCaseRoundTripsThroughJSONExactly() throws {
        for value in try Self.everyCase() {
            let data = try JSONEncoder().encode(value)
            let decoded = try JSONDecoder().decode(PropertyValue.self, from: data)
            #expect(decoded == value, "\(value) came back as \(decoded)")
            #expect(decoded.caseName == value.caseName)
            #expect(decoded.hashValue == value.hashValue)
            if case .double(let d) = value, case .double(let e) = decoded { #expect(d.bitPattern == e.bitPattern) }
            if case .float(let d) = value, case .float(let e) = decoded { #expect(d.bitPattern == e.bitPattern) }
        }
    }

    @Test func everyCaseRoundTripsThroughPropertyLists() throws {
        let values = try Self.everyCase()
        let decoded = try PropertyListDecoder().decode([PropertyValue].self, from: PropertyListEncoder().encode(values))
        #expect(decoded == values)
    }

    @Test func codableValuesDecodeAsTheirTypeOnly() throws {
        let value = try PropertyValue.encoding(Point(x: -1, label: "é"))
        #expect(try value.decoded(as: Point.self) == Point(x: -1, label: "é"))
        #expect(throws: DataStoreError.self) { try value.decoded(as: String.self) }
        #expect(throws: DataStoreError.self) { try PropertyValue.string("x").decoded(as: Point.self) }
    }

    @Test func malformedEncodingsAreDecodingErrors() {
        for text in [
            #"{"type":"uuid","value":"nope"}"#, #"{"type":"nonsense"}"#, #"{"type":"data","value":"@@@"}"#,
            #"{"type":"int8","value":300}"#, #"{"type":"decimal","value":"abc"}"#, #"{"type":"int"}"#,
        ] {
            #expect(throws: DecodingError.self, "\(text)") { try JSONDecoder().decode(PropertyValue.self, from: Data(text.utf8)) }
        }
    }

    @Test func numbersOrderNumericallyAcrossCasesAndNullsFirst() {
        let ascending: [PropertyValue] = [
            .null, .toOne(nil), .bool(false), .bool(true), .double(-.infinity), .int64(.min), .double(-1.5), .int8(-1),
            .int(0), .double(-0.0), .double(0), .float(0.25), .decimal(Decimal(string: "0.5")!), .uint8(1), .double(1.5),
            .int64(.max), .double(9_223_372_036_854_775_807.0), .uint64(.max), .double(.infinity), .double(.nan),
            .string("A"), .string("a"), .date(.distantPast), .date(.distantFuture),
        ]
        for (i, a) in ascending.enumerated() {
            for (j, b) in ascending.enumerated() {
                #expect((a < b) == (i < j), "\(a) < \(b) should be \(i < j)")
                #expect((a == b) == (i == j), "\(a) == \(b) should be \(i == j)")
            }
        }
    }

    /// The order is total and agrees with == and hashing, over random values of every kind.
    @Test func orderIsTotalAndAgreesWithEquality() throws {
        var random = SeededGenerator(seed: 11)
        let pool = try Self.everyCase() + [.int8(3), .uint64(3), .double(3), .float(3), .decimal(3), .int(3)]
        let values = (0..<300).map { _ in pool.randomElement(using: &random)! }
        for a in values {
            for b in values {
                let relations = [a < b, a == b, b < a].filter { $0 }.count
                #expect(relations == 1, "exactly one of <, ==, > for \(a), \(b)")
                if a == b { #expect(a.hashValue == b.hashValue) }
            }
        }
        let sorted = values.sorted()
        for (x, y) in zip(sorted, sorted.dropFirst()) { #expect(!(y < x)) }
        for (a, b, c) in zip(zip(values, values.dropFirst()), values.dropFirst(2)).map({ ($0.0, $0.1, $1) }) where a < b && b < c {
            #expect(a < c, "transitive: \(a) < \(b) < \(c)")
        }
    }
}
