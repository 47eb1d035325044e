import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Declared indexes are used: a selective fetch reads as many records as it returns, and
/// answers what a scan answers.
@Suite struct WALIndexTests {
    static let epoch = Date(timeIntervalSinceReferenceDate: 900_000_000)

    static func store(_ home: WALHome, posts: Int) throws -> WALDataStore {
        let store = try home.open()
        let inserted = (0..<posts).map { i in
            BlogModel.post(
                title: "post \(i % 10) #\(i)", content: i % 3 == 0 ? nil : "c\(i % 7)", date: epoch.addingTimeInterval(Double((i * 37) % posts) * 60))
        }
        _ = try store.save(DataStoreSaveChangesRequest(inserted: inserted))
        return store
    }

    /// `descriptor` answered through the planner, and with the predicate wrapped so that no
    /// index applies (a scan): the same snapshots, and how many records each read.
    static func both(
        _ store: WALDataStore, _ descriptor: FetchDescriptor
    ) throws -> (indexed: [DefaultSnapshot], read: Int, scanned: [DefaultSnapshot], scanRead: Int) {
        let r0 = store.recordsRead
        let indexed = try store.fetch(descriptor).fetchedSnapshots
        let r1 = store.recordsRead
        var scan = descriptor
        scan.predicate = .or([descriptor.predicate ?? .always])
        scan.fetchLimit = nil
        scan.fetchOffset = nil
        var scanned = try store.fetch(scan).fetchedSnapshots
        let r2 = store.recordsRead
        scanned = Array(scanned.dropFirst(descriptor.fetchOffset ?? 0).prefix(descriptor.fetchLimit ?? .max))
        return (indexed, r1 - r0, scanned, r2 - r1)
    }

    @Test func aSelectiveIndexedFetchReadsOnlyWhatItReturns() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try Self.store(home, posts: 200)
        let day = Self.epoch.addingTimeInterval(Double(17) * 60)
        let cases: [(String, FetchDescriptor)] = [
            ("equality", FetchDescriptor(entityName: "Post", predicate: .attribute("date") == day)),
            ("range", FetchDescriptor(entityName: "Post", predicate: .attribute("date") >= day && .attribute("date") < day.addingTimeInterval(600))),
            ("below", FetchDescriptor(entityName: "Post", predicate: .attribute("date") <= Self.epoch.addingTimeInterval(240))),
            ("above", FetchDescriptor(entityName: "Post", predicate: .attribute("date") > Self.epoch.addingTimeInterval(194 * 60))),
            ("prefix", FetchDescriptor(entityName: "Post", predicate: .attribute("title").beginsWith("post 3 #1"))),
            ("top-k", FetchDescriptor(entityName: "Post", sortBy: [FetchSortDescriptor("date", order: .reverse)], fetchLimit: 5)),
            ("top-k with offset", FetchDescriptor(entityName: "Post", sortBy: [FetchSortDescriptor("date")], fetchLimit: 3, fetchOffset: 4)),
            (
                "range sorted by it with a limit",
                FetchDescriptor(
                    entityName: "Post", predicate: .attribute("date") >= day, sortBy: [FetchSortDescriptor("date")], fetchLimit: 5)
            ),
            (
                "range sorted by it in reverse with a limit",
                FetchDescriptor(
                    entityName: "Post", predicate: .attribute("date") < day.addingTimeInterval(3600),
                    sortBy: [FetchSortDescriptor("date", order: .reverse)], fetchLimit: 4)
            ),
        ]
        for (name, descriptor) in cases {
            let r = try Self.both(store, descriptor)
            #expect(!r.indexed.isEmpty, "\(name): the case selects something")
            #expect(r.indexed == r.scanned, "\(name): the index answers as a scan does")
            let returned = r.indexed.count + (descriptor.fetchOffset ?? 0)
            #expect(r.read == returned, "\(name): read \(r.read) records for \(returned)")
            #expect(r.scanRead == 200, "\(name): the scan reads every post")
        }
        // A top-k sort by the title (first property of title,date) keeps its ties whole.
        let ties = try Self.both(
            store,
            FetchDescriptor(
                entityName: "Post", sortBy: [FetchSortDescriptor("title"), FetchSortDescriptor("date", order: .reverse)], fetchLimit: 2))
        #expect(ties.indexed == ties.scanned)
    }

    @Test func indexesFollowUpdatesAndDeletes() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try Self.store(home, posts: 20)
        let day = Self.epoch.addingTimeInterval(Double(5) * 60)
        var post = try #require(try store.fetch(FetchDescriptor(entityName: "Post", predicate: .attribute("date") == day)).fetchedSnapshots.first)
        let later = day.addingTimeInterval(1_000_000)
        post["date"] = .date(later)
        _ = try store.save(DataStoreSaveChangesRequest(updated: [post]))
        #expect(try store.fetch(FetchDescriptor(entityName: "Post", predicate: .attribute("date") == day)).fetchedSnapshots.isEmpty)
        #expect(try store.fetch(FetchDescriptor(entityName: "Post", predicate: .attribute("date") == later)).fetchedSnapshots == [post])
        _ = try store.save(DataStoreSaveChangesRequest(deleted: [post]))
        #expect(try store.fetch(FetchDescriptor(entityName: "Post", predicate: .attribute("date") == later)).fetchedSnapshots.isEmpty)
        let entries = try store.engine.scan(prefix: [0x49] + RawRecord.name("Post") + RawRecord.name("date")).collect().map(\.key).count
        #expect(entries == 19, "one date entry per post left")
    }

    /// The fetch SwiftData makes to resolve models (an identifier set) reads those records and no
    /// others, and answers as a scan does.
    @Test func resolvingIdentifiersReadsOnlyTheirRecords() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let store = try Self.store(home, posts: 200)
        let all = try store.fetch(FetchDescriptor(entityName: "Post")).fetchedSnapshots
        let wanted = Set(all.enumerated().filter { $0.offset % 17 == 3 }.map(\.element.persistentIdentifier))
        let descriptor = FetchDescriptor(
            entityName: "Post", predicate: .identifier(in: wanted) && .attribute("title").contains("#1"))
        let r = try Self.both(store, descriptor)
        #expect(r.indexed == r.scanned)
        #expect(!r.indexed.isEmpty)
        #expect(r.read == wanted.count, "read \(r.read) records for \(wanted.count) identifiers")
    }
}
