import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// A store whose records are format 2 answers fetches, counts and identifiers on the record
/// bytes as ``PredicateEvaluator`` answers them on the objects' snapshots: seeded random
/// predicates, sorts and windows over seeded random records.
@Suite struct WALByteQueryTests {
    @Test func fetchesCountsAndIdentifiersOverFormat2RecordsAnswerAsTheEvaluator() throws {
        let schema = RecordMatcherTests.schema
        let home = WALHome(schema)
        defer { home.temporary.remove() }
        let store = try home.open()
        var g = RecordMatcherTests.Generator(seed: 99)
        var snapshots: [DefaultSnapshot] = []
        try store.engine.write { batch in
            for _ in 0..<120 {
                let made = try RecordMatcherTests.snapshot(&g)
                let id = try PersistentIdentifier.identifier(
                    for: store.identifier, entityName: made.persistentIdentifier.entityName, primaryKey: UUID())
                var values = made.values
                values["parent"] = .toOne(nil)
                let snapshot = DefaultSnapshot(persistentIdentifier: id, values: values)
                guard case .uuid(let pk) = id.primaryKey else { continue }
                let record = RecordWriter.record(of: snapshot, fields: RecordFieldList(schema: schema, entity: id.entityName))
                batch.put([0x52] + Array("Item".utf8) + [0] + withUnsafeBytes(of: pk.uuid) { Array($0) }, record)
                snapshots.append(snapshot)
            }
        }
        // In record key order: what the evaluator's stable sort starts from.
        snapshots.sort { a, b in
            guard case .uuid(let x) = a.persistentIdentifier.primaryKey, case .uuid(let y) = b.persistentIdentifier.primaryKey else { return false }
            return withUnsafeBytes(of: x.uuid) { p in withUnsafeBytes(of: y.uuid) { q in p.lexicographicallyPrecedes(q) } }
        }
        let evaluator = PredicateEvaluator(schema: schema) { _ in nil }
        let sortable: [PropertyPath] = ["name", "note", "score", "rank", "when", "flag"]
        for round in 0..<40 {
            let predicate = RecordMatcherTests.predicate(&g)
            let sorts = (0..<g.next(3)).map { _ in FetchSortDescriptor(g.pick(sortable), order: g.next(2) == 0 ? .forward : .reverse) }
            let descriptor = FetchDescriptor(
                entityName: g.pick(["Item", "Special"]), predicate: predicate, sortBy: sorts, fetchLimit: g.pick([nil, 0, 5, 50]),
                fetchOffset: g.pick([nil, 3]),
                includesSubentities: g.next(3) != 0)
            let expected = Result { try evaluator.run(descriptor, over: snapshots) }
            let fetched = Result { try store.fetch(descriptor).fetchedSnapshots }
            switch (expected, fetched) {
            case (.success(let e), .success(let f)):
                #expect(f.map(\.persistentIdentifier) == e.map(\.persistentIdentifier), "round \(round): \(predicate) \(sorts)")
                for (a, b) in zip(f, e) { #expect(a["name"] == b["name"] && a["score"] == b["score"] && a["when"] == b["when"], "round \(round)") }
                #expect(try store.fetchIdentifiers(DataStoreFetchRequest(descriptor: descriptor)) == e.map(\.persistentIdentifier), "round \(round)")
                #expect(try store.fetchCount(DataStoreFetchRequest(descriptor: descriptor)) == e.count, "round \(round)")
            case (.failure, .failure):
                break
            default:
                Issue.record("round \(round): \(predicate): the evaluator gave \(expected), the store \(fetched)")
            }
        }
        try store.close()
        // Written without count keys: counted at open, from the records' headers.
        let reopened = try home.open()
        let specials = snapshots.filter { $0.persistentIdentifier.entityName == "Special" }.count
        #expect(try reopened.fetchCount(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Item"))) == snapshots.count)
        #expect(try reopened.fetchCount(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Special"))) == specials)
        try reopened.close()
    }
}
