import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Index plans beyond one range on an index's first property: a `oneOf` list (one range per
/// value) and a compound index's later properties (equalities on the first ones, then a
/// condition on the next). Each answers what a scan answers, reading fewer records.
@Suite struct WALIndexPlanTests {
    static let epoch = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let titles = ["alpha", "beta", "gamma", "delta"]

    /// Posts with few distinct titles and dates, so that equalities select groups.
    static func store(_ home: WALHome, posts: Int) throws -> WALDataStore {
        let store = try home.open()
        let inserted = (0..<posts).map { i in
            BlogModel.post(title: titles[i % titles.count], content: "c\(i)", date: day((i * 7) % 25))
        }
        _ = try store.save(DataStoreSaveChangesRequest(inserted: inserted))
        return store
    }

    static func day(_ n: Int) -> Date { epoch.addingTimeInterval(Double(n) * 86_400) }

    static func expectIndexAnswersAsAScan(_ store: WALDataStore, _ name: String, _ descriptor: FetchDescriptor, readsAtMost: Int) throws {
        let r = try WALIndexTests.both(store, descriptor)
        #expect(r.indexed == r.scanned, "\(name): the index answers as a scan does")
        #expect(r.scanRead == 100, "\(name): the scan reads every record")
        #expect(r.read <= readsAtMost, "\(name): read \(r.read) records, at most \(readsAtMost) expected")
    }

    @Test func aOneOfListOnAnIndexedPropertyReadsOneRangePerValue() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try Self.store(home, posts: 100)
        let days = [Self.day(3), Self.day(11), Self.day(3), Self.day(24)]
        let matching = try store.all("Post").filter { p in days.contains { p["date"] == .date($0) } }.count
        #expect(matching > 0 && matching < 20)
        let list = FetchPredicate.oneOf(path: "date", values: days.map(PropertyValue.date))
        try Self.expectIndexAnswersAsAScan(store, "oneOf", FetchDescriptor(entityName: "Post", predicate: list), readsAtMost: matching)
        try Self.expectIndexAnswersAsAScan(
            store, "oneOf sorted by it with a limit",
            FetchDescriptor(entityName: "Post", predicate: list, sortBy: [FetchSortDescriptor("date", order: .reverse)], fetchLimit: 3),
            readsAtMost: matching)
        try Self.expectIndexAnswersAsAScan(
            store, "oneOf and a range",
            FetchDescriptor(entityName: "Post", predicate: list && .attribute("date") > Self.day(5)), readsAtMost: matching)
        try Self.expectIndexAnswersAsAScan(
            store, "an empty list", FetchDescriptor(entityName: "Post", predicate: .oneOf(path: "date", values: [])), readsAtMost: 0)
        try Self.expectIndexAnswersAsAScan(
            store, "oneOf on the first property of a compound index",
            FetchDescriptor(entityName: "Post", predicate: .oneOf(path: "title", values: [.string("beta"), .string("delta")])),
            readsAtMost: 50)
    }

    @Test func aCompoundIndexAnswersEqualitiesThenAConditionOnTheNextProperty() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try Self.store(home, posts: 100)
        let betas = try store.all("Post").filter { $0["title"] == .string("beta") }
        let early = betas.filter { if case .date(let d)? = $0["date"] { d < Self.day(8) } else { false } }.count
        #expect(betas.count == 25 && early > 0 && early < 25)
        let cases: [(String, FetchDescriptor, Int)] = [
            (
                "equality then range",
                FetchDescriptor(entityName: "Post", predicate: .attribute("title") == "beta" && .attribute("date") < Self.day(8)), early
            ),
            (
                "range then equality (any order of conjuncts)",
                FetchDescriptor(
                    entityName: "Post", predicate: .attribute("date") < Self.day(8) && .attribute("title") == "beta"), early
            ),
            ("both equal", FetchDescriptor(entityName: "Post", predicate: .attribute("title") == "beta" && .attribute("date") == Self.day(1)), 4),
            (
                "equality then oneOf",
                FetchDescriptor(
                    entityName: "Post",
                    predicate: .attribute("title") == "beta" && .oneOf(path: "date", values: [.date(Self.day(1)), .date(Self.day(15))])), 8
            ),
            (
                "equality, sorted by the next property with a limit",
                FetchDescriptor(
                    entityName: "Post", predicate: .attribute("title") == "gamma", sortBy: [FetchSortDescriptor("date")], fetchLimit: 4), 8
            ),
            (
                "equality, sorted in reverse with an offset",
                FetchDescriptor(
                    entityName: "Post", predicate: .attribute("title") == "alpha" && .attribute("date") >= Self.day(2),
                    sortBy: [FetchSortDescriptor("date", order: .reverse)], fetchLimit: 3, fetchOffset: 2), 10
            ),
        ]
        for (name, descriptor, reads) in cases {
            try Self.expectIndexAnswersAsAScan(store, name, descriptor, readsAtMost: reads)
        }
    }

    /// Seeded random conjunctions of equalities, ranges and lists on both indexed properties,
    /// with and without a sort and window: the planned fetch answers as the scan.
    @Test func randomIndexedConjunctionsAnswerAsAScan() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try Self.store(home, posts: 100)
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ n: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(n))
        }
        func condition() -> FetchPredicate {
            switch next(6) {
            case 0: return .attribute("title") == Self.titles[next(4)]
            case 1: return .oneOf(path: "title", values: (0..<next(3)).map { _ in .string(Self.titles[next(4)]) })
            case 2: return .attribute("date") >= Self.day(next(25))
            case 3: return .attribute("date") < Self.day(next(25))
            case 4: return .oneOf(path: "date", values: (0..<(1 + next(3))).map { _ in .date(Self.day(next(25))) })
            default: return .attribute("date") == Self.day(next(25))
            }
        }
        for round in 0..<40 {
            let predicate = FetchPredicate.and((0..<(1 + next(3))).map { _ in condition() })
            var descriptor = FetchDescriptor(entityName: "Post", predicate: predicate)
            if next(2) == 0 {
                descriptor.sortBy = [FetchSortDescriptor("date", order: next(2) == 0 ? .forward : .reverse)]
                descriptor.fetchLimit = 1 + next(5)
                descriptor.fetchOffset = next(2) == 0 ? nil : next(3)
            }
            let r = try WALIndexTests.both(store, descriptor)
            #expect(r.indexed == r.scanned, "round \(round): \(predicate)")
            #expect(r.read <= 100, "round \(round)")
        }
    }
}
