import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// A sort with a limit keeps only the window's worth of matches (a bounded top-k selection,
/// comparing sort values as bytes where their encoding orders as the comparator does): the
/// window is the one ``PredicateEvaluator`` finds by sorting every match, ties in record key
/// order — with strings that are canonically equivalent, `-0.0` and `0.0`, NaN and nulls.
@Suite struct WALTopKTests {
    static let schema: Schema = {
        do {
            return try Schema([
                .init(
                    "Item",
                    attributes: [
                        .init("name", .string, isOptional: true),
                        .init("score", .double, isOptional: true),
                        .init("rank", .int, isOptional: true),
                        .init("when", .date, isOptional: true),
                        .init("flag", .bool, isOptional: true),
                        .init("tag", .uuid, isOptional: true),
                    ])
            ])
        } catch {
            preconditionFailure("a fixed, consistent schema: \(error)")
        }
    }()

    static let names: [String?] = [
        "\u{e9}", "e\u{301}", "E", "e", "", "a\u{0}b", "a", "ab", "\r\n", "\r", "Z", "\u{1F600}", "ß", "ss", nil,
    ]
    static let scores: [Double?] = [-0.0, 0.0, .nan, 1, 1.5, -.infinity, .infinity, -2, nil]
    static let ranks: [Int?] = [0, -1, 1, Int.max, Int.min, 7, nil]
    static let dates: [Date?] = [-0.0, 0.0, -1e9, 1e9, 12.5, nil].map { $0.map { Date(timeIntervalSinceReferenceDate: $0) } }
    static let tags: [UUID?] = [
        UUID(uuidString: "00000000-0000-0000-0000-000000000001"), UUID(uuidString: "FFFFFFFF-0000-0000-0000-000000000000"), nil,
    ]
    static let properties = ["name", "score", "rank", "when", "flag", "tag"]

    struct Generator {
        var seed: UInt64
        mutating func next(_ n: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(n))
        }
        mutating func pick<T>(_ list: [T]) -> T { list[next(list.count)] }
    }

    static func item(_ g: inout Generator) -> DefaultSnapshot {
        let flag: Bool? = g.pick([true, false, nil])
        return DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Item"),
            values: [
                "name": g.pick(names).map(PropertyValue.string) ?? .null,
                "score": g.pick(scores).map(PropertyValue.double) ?? .null,
                "rank": g.pick(ranks).map(PropertyValue.int) ?? .null,
                "when": g.pick(dates).map(PropertyValue.date) ?? .null,
                "flag": flag.map(PropertyValue.bool) ?? .null,
                "tag": g.pick(tags).map(PropertyValue.uuid) ?? .null,
            ])
    }

    @Test func aSortWithALimitReturnsTheWindowOfTheFullSort() throws {
        let home = WALHome(Self.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        var g = Generator(seed: 42)
        _ = try store.save(DataStoreSaveChangesRequest(inserted: (0..<150).map { _ in Self.item(&g) }))
        // Every item, in record key order: what the evaluator's stable sort starts from.
        let all = try store.all("Item")
        let evaluator = PredicateEvaluator(schema: Self.schema) { _ in nil }
        for round in 0..<30 {
            let sorts = (0..<(1 + g.next(3))).map { _ in
                FetchSortDescriptor(PropertyPath(stringLiteral: g.pick(Self.properties)), order: g.next(2) == 0 ? .forward : .reverse)
            }
            let predicate: FetchPredicate? = g.next(3) == 0 ? .not(.isNull(path: PropertyPath(stringLiteral: g.pick(Self.properties)))) : nil
            let descriptor = FetchDescriptor(
                entityName: "Item", predicate: predicate, sortBy: sorts, fetchLimit: g.pick([0, 1, 3, 10, 40, 200]),
                fetchOffset: g.pick([nil, 0, 2, 25, 149]))
            let fetched = try store.fetch(descriptor).fetchedSnapshots.map(\.persistentIdentifier)
            let expected = try evaluator.run(descriptor, over: all).map(\.persistentIdentifier)
            #expect(fetched == expected, "round \(round): \(sorts) offset \(descriptor.fetchOffset ?? 0) limit \(descriptor.fetchLimit ?? -1)")
            guard round % 5 == 0 else { continue }
            var whole = descriptor
            (whole.fetchLimit, whole.fetchOffset) = (nil, nil)
            let sortedWhole = try store.fetch(whole).fetchedSnapshots.map(\.persistentIdentifier)
            #expect(sortedWhole == (try evaluator.run(whole, over: all).map(\.persistentIdentifier)), "round \(round): the full sort")
        }
        try store.close()
    }

    @Test func aLimitWithoutSortStopsTheScanOnceTheWindowIsFull() throws {
        let home = WALHome(Self.schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        var g = Generator(seed: 7)
        _ = try store.save(DataStoreSaveChangesRequest(inserted: (0..<100).map { _ in Self.item(&g) }))
        let all = try store.all("Item")
        let read = store.recordsRead
        let window = try store.fetch(FetchDescriptor(entityName: "Item", fetchLimit: 5, fetchOffset: 3)).fetchedSnapshots
        #expect(window.map(\.persistentIdentifier) == all[3..<8].map(\.persistentIdentifier))
        #expect(store.recordsRead - read == 8, "read \(store.recordsRead - read) records for a window of 5 after 3")
        try store.close()
    }
}
