import EngineTestSupport
import Foundation
import Snapshot
import Testing

@Suite struct SortTests {
    /// Multi-key sort with nulls, against a reference: a stable insertion sort over plain
    /// optionals (nil first ascending, last descending).
    @Test(arguments: [5, 6, 7] as [UInt64]) func multiKeyStableSortWithNils(seed: UInt64) throws {
        var r = SeededGenerator(seed: seed)
        struct Row { var a: Int?; var b: String?; var index: Int }
        let rows = (0..<200).map { i in
            Row(
                a: Int.random(in: 0..<4, using: &r) == 0 ? nil : Int.random(in: -3...3, using: &r),
                b: Bool.random(using: &r) ? nil : ["x", "y", "z"].randomElement(using: &r)!, index: i)
        }
        let snapshots = try rows.map { row in
            var values: [String: PropertyValue] = ["i": .int(row.index)]
            if let a = row.a { values["a"] = Bool.random(using: &r) ? .int16(Int16(a)) : .double(Double(a)) }
            if let b = row.b { values["b"] = .string(b) } else if Bool.random(using: &r) { values["b"] = .null }
            return DefaultSnapshot(
                persistentIdentifier: try .identifier(for: "s", entityName: "Row", primaryKey: .integer(Int64(row.index))), values: values)
        }
        func c<T: Comparable>(_ x: T?, _ y: T?) -> Int {
            switch (x, y) {
            case (nil, nil): 0
            case (nil, _): -1
            case (_, nil): 1
            case let (x?, y?): x < y ? -1 : (x == y ? 0 : 1)
            }
        }
        for orders in [
            (FetchSortDescriptor.Order.forward, FetchSortDescriptor.Order.forward), (.reverse, .forward), (.forward, .reverse), (.reverse, .reverse),
        ] {
            var expected: [Row] = []
            for row in rows {  // stable insertion sort
                let before: (Row, Row) -> Bool = { x, y in
                    var k = c(x.a, y.a)
                    if orders.0 == .reverse { k = -k }
                    if k != 0 { return k < 0 }
                    var l = c(x.b, y.b)
                    if orders.1 == .reverse { l = -l }
                    return l < 0
                }
                let at = expected.firstIndex { before(row, $0) } ?? expected.count
                expected.insert(row, at: at)
            }
            let sorted = try PredicateEvaluator { _ in nil }.sorted(
                snapshots, by: [FetchSortDescriptor("a", order: orders.0), FetchSortDescriptor("b", order: orders.1)])
            let got = sorted.map { snapshot -> Int in
                if case .int(let i)? = snapshot["i"] { return i }
                return -1
            }
            #expect(got == expected.map(\.index), "orders \(orders)")
        }
    }

    @Test func sortsThroughToOnePathsWithMissingTargetsFirst() throws {
        let parents = try (0..<3).map { i in
            DefaultSnapshot(
                persistentIdentifier: try .identifier(for: "s", entityName: "P", primaryKey: .integer(Int64(i))),
                values: ["name": .string(["b", "a", "c"][i])])
        }
        let children = try (0..<4).map { i in
            DefaultSnapshot(
                persistentIdentifier: try .identifier(for: "s", entityName: "C", primaryKey: .integer(Int64(i))),
                values: ["parent": .toOne(i < 3 ? parents[i].persistentIdentifier : nil)])
        }
        let e = PredicateEvaluator { id in parents.first { $0.persistentIdentifier == id } }
        let sorted = try e.sorted(children, by: [FetchSortDescriptor("parent.name")])
        #expect(sorted.map(\.persistentIdentifier) == [children[3], children[1], children[0], children[2]].map(\.persistentIdentifier))
        #expect(try e.compare(children[1], children[0], by: [FetchSortDescriptor("parent.name")]) < 0)
        #expect(try e.compare(children[1], children[0], by: [FetchSortDescriptor("parent.name", order: .reverse)]) > 0)
    }

    @Test func runAppliesOffsetLimitAndRefusesNegativeOnes() throws {
        let items = try (0..<10).map { i in
            DefaultSnapshot(
                persistentIdentifier: try .identifier(for: "s", entityName: "I", primaryKey: .integer(Int64(i))),
                values: ["v": .int(9 - i), "w": .int(i)])
        }
        let e = PredicateEvaluator { _ in nil }
        let got = try e.run(
            FetchDescriptor(
                entityName: "I", predicate: .attribute("v") >= 2, sortBy: [FetchSortDescriptor("v")], fetchLimit: 3, fetchOffset: 2,
                propertiesToFetch: ["v"]), over: items)
        #expect(got.map { $0["v"] } == [4, 5, 6])
        #expect(got.allSatisfy { $0["w"] == nil })
        #expect(try e.run(FetchDescriptor(entityName: "I", fetchOffset: 20), over: items).isEmpty)
        #expect(try e.run(FetchDescriptor(entityName: "Other"), over: items).isEmpty)
        #expect(throws: DataStoreError.self) { try e.run(FetchDescriptor(entityName: "I", fetchLimit: -1), over: items) }
        #expect(throws: DataStoreError.self) { try e.run(FetchDescriptor(entityName: "I", fetchOffset: -1), over: items) }
    }
}
