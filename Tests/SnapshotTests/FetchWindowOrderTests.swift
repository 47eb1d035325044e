import EngineTestSupport
import Foundation
import Testing

@testable import Snapshot

/// The fetch window orders matches on plain keys (``SortKeys``), in a top-k heap with a limit:
/// its window must be exactly the definition's — a stable sort by
/// `PredicateEvaluator.compareKeys`, ties by primary key, then offset and limit — for values of
/// every kind, mixed, in any order of arrival.
@Suite struct FetchWindowOrderTests {
    /// Which values one descriptor's matches hold.
    enum Palette: CaseIterable {
        case dates, integers, floatingPoint, numbers, strings, uuids, booleans, everything, withFallback
    }

    static let uuids = [
        UUID(uuidString: "00000000-0000-0000-0000-000000000000")!, UUID(uuidString: "00000000-0000-0001-0000-000000000000")!,
        UUID(uuidString: "00000000-0000-0001-8000-000000000000")!, UUID(uuidString: "00000000-0000-0001-0000-000000000001")!,
        UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!, UUID(uuidString: "7F000000-0000-0000-FF00-000000000000")!,
    ]

    static let dates: [Double] = [
        -1e9, -1, -0.0, 0, 0.5, 1, 1e9, .infinity, -.infinity, .nan, -.nan, Double(bitPattern: 0x7FF8_0000_0000_0001),
        Double(bitPattern: 0xFFF8_0000_0000_0002), .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude,
    ]

    static let integers: [PropertyValue] = [
        .int(0), .int(1), .int(-1), .int(2), .int8(-128), .int8(2), .int16(2), .int32(-7), .int64(.min), .int64(.max), .int64(-(1 << 53) - 1),
        .int64(1 << 53), .int64((1 << 53) + 1), .uint(3), .uint8(255), .uint16(2), .uint32(.max), .uint64(.max), .uint64(1 << 63), .uint64(0),
        .uint64((1 << 63) + 1),
    ]

    static let floatingPoint: [PropertyValue] = [
        .double(0), .double(-0.0), .double(.nan), .double(-.nan), .double(Double(bitPattern: 0x7FF8_0000_0000_0003)), .double(.infinity),
        .double(-.infinity), .double(1.5), .double(-2), .double(2), .double(1e300), .double(9_223_372_036_854_775_808.0), .float(2),
        .float(-0.0), .float(.nan), .float(0.1), .double(Double(Float(0.1))), .double(0.1), .float(-.infinity),
    ]

    static let strings = [
        "", "a", "a\0", "a\0b", "\0", "e\u{301}", "\u{e9}", "\u{e9}t\u{e9}", "e\u{301}te\u{301}", "abcdefg", "abcdefgh", "abcdefg\0",
        "abcdef", "abcdefgh\u{301}", "abcdefg\u{e8}", "abcdefge\u{300}", "\u{212B}", "\u{c5}", "A\u{30a}", "q\u{323}\u{307}", "q\u{307}\u{323}",
        "\u{1100}\u{1161}\u{11A8}", "\u{AC01}", "z", "Z", "\u{1F600}", "a long string sharing a prefix 1", "a long string sharing a prefix 2",
        "a long string sharing a prefix", "\u{FB01}", "\u{10FFFF}", "\u{7F}",
    ]

    /// A random UUID (any bits) from `r`.
    static func uuid(_ r: inout SeededGenerator) -> UUID {
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let (a, b) = (UInt64.random(in: 0 ... .max, using: &r), UInt64.random(in: 0 ... .max, using: &r))
        withUnsafeMutableBytes(of: &raw) { bytes in
            bytes.storeBytes(of: a, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: b, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: raw)
    }

    static func value(_ palette: Palette, _ r: inout SeededGenerator) -> PropertyValue {
        if Int.random(in: 0..<8, using: &r) == 0 { return .null }
        switch palette {
        case .dates:
            return .date(
                Date(
                    timeIntervalSinceReferenceDate: Int.random(in: 0..<3, using: &r) == 0
                        ? Double.random(in: -10...10, using: &r) : dates.randomElement(using: &r)!))
        case .integers: return integers.randomElement(using: &r)!
        case .floatingPoint: return floatingPoint.randomElement(using: &r)!
        case .numbers:
            // Mostly small integers and doubles, so that a column often stays keyed.
            switch Int.random(in: 0..<6, using: &r) {
            case 0: return integers.randomElement(using: &r)!
            case 1: return floatingPoint.randomElement(using: &r)!
            case 2: return .double(Double(Int.random(in: -3...3, using: &r)) / 2)
            default:
                return [
                    PropertyValue.int(Int.random(in: -3...3, using: &r)), .int16(Int16.random(in: -3...3, using: &r)),
                    .uint8(UInt8.random(in: 0...3, using: &r)),
                ].randomElement(using: &r)!
            }
        case .strings: return .string(strings.randomElement(using: &r)!)
        case .uuids: return .uuid(uuids.randomElement(using: &r)!)
        case .booleans: return .bool(Bool.random(using: &r))
        case .everything:
            switch Int.random(in: 0..<10, using: &r) {
            case 0: return .toOne(nil)
            case 1:
                return .url(
                    URL(
                        string: ["https://a.example/\u{e9}", "https://a.example/e%CC%81", "file:///x", "https://a.example/e\u{301}"].randomElement(
                            using: &r)!)!)
            case 2:
                return .data(
                    Data(
                        [[], [0], [0, 0], [1], [0, 1, 2, 3, 4, 5, 6], [0, 1, 2, 3, 4, 5, 6, 7], [0, 1, 2, 3, 4, 5, 6, 7, 0], [255]].randomElement(
                            using: &r)!))
            default:
                let kinds: [Palette] = [.dates, .integers, .floatingPoint, .numbers, .strings, .uuids, .booleans]
                return value(kinds.randomElement(using: &r)!, &r)
            }
        case .withFallback:
            switch Int.random(in: 0..<6, using: &r) {
            case 0:
                return .decimal([Decimal(2), Decimal(string: "0.1")!, Decimal(-1), Decimal.nan, Decimal(string: "1e40")!].randomElement(using: &r)!)
            case 1: return .array([.int(Int.random(in: 0...2, using: &r))])
            case 2:
                let id = try! PersistentIdentifier.identifier(for: "s", entityName: "E", primaryKey: .integer(Int64.random(in: 0...2, using: &r)))
                return Bool.random(using: &r) ? .toOne(id) : .toMany([id])
            case 3: return .codable(typeName: ["T", "U"].randomElement(using: &r)!, encoded: Data([UInt8.random(in: 0...2, using: &r)]))
            default:
                // Not the doubles a `Decimal` cannot hold or holds inexactly: the comparator
                // is not transitive across those (`Number.compare` converts to `Decimal`).
                let value = value(.everything, &r)
                switch value {
                case .double, .float:
                    return [
                        PropertyValue.double(0.5), .double(-1.5), .double(2), .double(-0.0), .double(.infinity), .double(-.infinity), .double(.nan),
                        .float(2),
                    ].randomElement(using: &r)!
                default: return value
                }
            }
        }
    }

    /// One random fetch: rows of sort values, descriptors, window.
    struct Case {
        var descriptors: [FetchSortDescriptor] = []
        var rows: [[PropertyValue]] = []
        var primaryKeys: [UUID] = []
        var offset: Int?
        var limit: Int?

        init(_ r: inout SeededGenerator) {
            var palettes: [Palette] = []
            for i in 0..<Int.random(in: 1...3, using: &r) {
                palettes.append(Palette.allCases.randomElement(using: &r)!)
                descriptors.append(FetchSortDescriptor(PropertyPath("k\(i)"), order: Bool.random(using: &r) ? .forward : .reverse))
            }
            let count = Int.random(in: 0...70, using: &r)
            for _ in 0..<count {
                var row: [PropertyValue] = []
                for palette in palettes { row.append(FetchWindowOrderTests.value(palette, &r)) }
                rows.append(row)
                primaryKeys.append(FetchWindowOrderTests.uuid(&r))
            }
            offset = Bool.random(using: &r) ? nil : Int.random(in: 0...count + 3, using: &r)
            limit = Bool.random(using: &r) ? nil : Int.random(in: 0...count + 3, using: &r)
        }

        /// The definition: a stable insertion sort by `compareKeys`, ties by primary key (when
        /// `byPrimaryKey`), then offset and limit.
        func expected(byPrimaryKey: Bool) -> [Int] {
            var order: [Int] = []
            for i in rows.indices {
                var j = order.count
                while j > 0 && precedes(i, order[j - 1], byPrimaryKey) { j -= 1 }
                order.insert(i, at: j)
            }
            let start = min(offset ?? 0, order.count)
            let end = limit.map { start + min($0, order.count - start) } ?? order.count
            return Array(order[start..<end])
        }

        private func precedes(_ a: Int, _ b: Int, _ byPrimaryKey: Bool) -> Bool {
            let c = PredicateEvaluator.compareKeys(rows[a], rows[b], descriptors)
            if c != 0 { return c < 0 }
            return byPrimaryKey && primaryKeys[a].ordering(comparedTo: primaryKeys[b]) < 0
        }

        /// The rows at `indices`, dates as their time intervals (`Date`'s description traps on
        /// some of them).
        func describe(_ indices: [Int]) -> String {
            indices.map { i in
                rows[i].map { value in
                    if case .date(let d) = value { return "date(\(d.timeIntervalSinceReferenceDate))" }
                    return String(describing: value)
                }.joined(separator: ", ")
            }.joined(separator: " | ")
        }

        func window(byPrimaryKey: Bool) -> [Int] {
            var window = FetchWindow<Int>(sortBy: descriptors, offset: offset, limit: limit)
            for i in rows.indices {
                if byPrimaryKey { window.offer(i, values: rows[i], primaryKey: primaryKeys[i]) } else { window.offer(i, values: rows[i]) }
            }
            return window.window()
        }
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64]) func theWindowOrdersAsAStableSortByTheComparator(seed: UInt64) {
        var r = SeededGenerator(seed: seed)
        for round in 0..<250 {
            let fetch = Case(&r)
            for byPrimaryKey in [true, false] {
                let found = fetch.window(byPrimaryKey: byPrimaryKey)
                let expected = fetch.expected(byPrimaryKey: byPrimaryKey)
                #expect(
                    found == expected,
                    "seed \(seed) round \(round), by primary key: \(byPrimaryKey), \(fetch.descriptors), offset \(String(describing: fetch.offset)), limit \(String(describing: fetch.limit)): \(fetch.describe(found)) instead of \(fetch.describe(expected))"
                )
                if found != expected { return }
            }
        }
    }

    @Test(arguments: [5, 6] as [UInt64]) func theEvaluatorsRunOrdersAndWindowsAsTheComparatorDoes(seed: UInt64) throws {
        var r = SeededGenerator(seed: seed)
        let evaluator = PredicateEvaluator { _ in nil }
        for round in 0..<150 {
            let fetch = Case(&r)
            let snapshots = try fetch.rows.indices.map { i in
                var values: [String: PropertyValue] = ["i": .int(i)]
                for (c, value) in fetch.rows[i].enumerated() {
                    // A null stored or missing: read alike (a to-one without a target is not a null).
                    if case .null = value, Bool.random(using: &r) { continue }
                    values["k\(c)"] = value
                }
                return DefaultSnapshot(
                    persistentIdentifier: try .identifier(for: "s", entityName: "Row", primaryKey: .uuid(fetch.primaryKeys[i])), values: values)
            }
            let descriptor = FetchDescriptor(entityName: "Row", sortBy: fetch.descriptors, fetchLimit: fetch.limit, fetchOffset: fetch.offset)
            let found = try evaluator.run(descriptor, over: snapshots).map { snapshot -> Int in
                guard case .int(let i)? = snapshot.values["i"] else { return -1 }
                return i
            }
            let expected = fetch.expected(byPrimaryKey: false)
            #expect(
                found == expected,
                "seed \(seed) round \(round), \(fetch.descriptors), offset \(String(describing: fetch.offset)), limit \(String(describing: fetch.limit)): \(fetch.describe(found)) instead of \(fetch.describe(expected))"
            )
            if found != expected { return }
        }
    }

    /// A top-k window of long strings replaces held keys thousands of times, so its tail buffer
    /// is compacted many times over: the window still equals the definition's.
    @Test(arguments: [7, 8] as [UInt64]) func aTopKWindowOfLongStringsKeepsItsOrderAcrossCompactions(seed: UInt64) {
        var r = SeededGenerator(seed: seed)
        var fetch = Case(&r)
        fetch.descriptors = [FetchSortDescriptor("k0", order: seed == 7 ? .forward : .reverse), FetchSortDescriptor("k1")]
        fetch.rows = []
        fetch.primaryKeys = []
        for i in 0..<4_000 {
            // Mostly each before the ones so far (most offers displace a held match), the
            // words alike (the tails decide), canonically equivalent endings.
            let rank = (seed == 7 ? 4_000 - i : i) / 3 + Int.random(in: 0..<20, using: &r)
            let string = "long string " + String(String(rank + 10_000).dropFirst()) + (i % 3 == 0 ? " e\u{301}" : " \u{e9}")
            fetch.rows.append([
                .string(string),
                Bool.random(using: &r) ? .date(Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0..<4, using: &r)))) : .null,
            ])
            fetch.primaryKeys.append(Self.uuid(&r))
        }
        fetch.offset = 3
        fetch.limit = 12
        // The definition's order is total with primary keys: an ordinary sort finds it.
        let expected = Array(
            fetch.rows.indices.sorted { a, b in
                let c = PredicateEvaluator.compareKeys(fetch.rows[a], fetch.rows[b], fetch.descriptors)
                return c != 0 ? c < 0 : fetch.primaryKeys[a].ordering(comparedTo: fetch.primaryKeys[b]) < 0
            }[3..<15])
        #expect(fetch.window(byPrimaryKey: true) == expected)
    }
}
