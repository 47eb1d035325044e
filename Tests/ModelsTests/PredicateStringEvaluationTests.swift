import EngineTestSupport
import Foundation
import Models
import Snapshot
import Testing

/// The store's string matching against Foundation's own evaluation of `#Predicate`: titles
/// chosen to break byte shortcuts (precomposed and decomposed `é`, `\r\n` as one `Character`,
/// case variants, non-ASCII), and for each predicate the objects fetched, counted and
/// identified are those `predicate.evaluate` selects.
@Suite struct PredicateStringEvaluationTests {
    static let titles = [
        "caf\u{e9}", "cafe\u{301}", "CAF\u{c9}", "cafe", "Cafe", "line\r\nbreak", "line\rbreak", "line\nbreak", "\r\n", "swift", "Swift",
        "SWIFT on Linux", "stra\u{df}e", "strasse", "na\u{ef}ve", "naive", "", "a", "\u{1F600} smile", "zebra",
    ]

    final class Home {
        let temporary = TemporaryDirectory("walstore-models-strings")
        let store: WALDataStore
        let map: ModelIdentityMap
        var articles: [Article] = []

        init() throws {
            store = try WALDataStore(WALStoreConfiguration(name: "Blog", schema: TypedBlogStore.schema, path: temporary.path + "/store"))
            let store = self.store
            map = ModelIdentityMap { ids in
                try store.fetch(
                    DataStoreFetchRequest(descriptor: Snapshot.FetchDescriptor(entityName: ids[0].entityName, predicate: .identifierIn(Set(ids))))
                )
                .fetchedSnapshots
            }
            let made = PredicateStringEvaluationTests.titles.enumerated().map { i, title in
                Article(
                    title: title,
                    content: i % 3 == 0 ? nil : PredicateStringEvaluationTests.titles[(i * 7) % PredicateStringEvaluationTests.titles.count],
                    date: TypedBlogStore.start + Double(i) * TypedBlogStore.day, views: i)
            }
            _ = try store.save(DataStoreSaveChangesRequest(inserted: made.map(\.snapshot)))
            let snapshots = try store.fetch(DataStoreFetchRequest(descriptor: Snapshot.FetchDescriptor(entityName: "Article"))).fetchedSnapshots
            map.add(snapshots)
            articles = try snapshots.map { try map.model(Article.self, for: $0.persistentIdentifier) }
        }

        deinit { temporary.remove() }

        /// The store's fetch, count and identifiers for `predicate` agree with evaluating it.
        func expectAgreement(_ predicate: Predicate<Article>, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let expected = Set(try articles.filter { try predicate.evaluate($0) }.map(\.persistentModelID))
            let descriptor = try Models.FetchDescriptor(predicate: predicate).storeDescriptor()
            let request = DataStoreFetchRequest(descriptor: descriptor)
            let fetched = try store.fetch(request).fetchedSnapshots.map(\.persistentIdentifier)
            #expect(Set(fetched) == expected && fetched.count == expected.count, "fetch", sourceLocation: sourceLocation)
            #expect(Set(try store.fetchIdentifiers(request)) == expected, "identifiers", sourceLocation: sourceLocation)
            #expect(try store.fetchCount(request) == expected.count, "count", sourceLocation: sourceLocation)
        }
    }

    @Test func stringOperationsSelectWhatFoundationEvaluates() throws {
        let home = try Home()
        for needle in ["caf\u{e9}", "cafe\u{301}", "e", "\u{e9}", "\r", "\n", "\r\n", "e\r", "swift", "Swift", "ss", "\u{df}", "", "\u{1F600}", "ne"]
        {
            try home.expectAgreement(#Predicate<Article> { $0.title.contains(needle) })
            try home.expectAgreement(#Predicate<Article> { $0.title.starts(with: needle) })
            try home.expectAgreement(#Predicate<Article> { ($0.content ?? "").contains(needle) })
        }
    }

    @Test func stringComparisonsSelectWhatFoundationEvaluates() throws {
        let home = try Home()
        for constant in ["caf\u{e9}", "cafe\u{301}", "cafe", "CAF\u{c9}", "line\r\nbreak", "\r\n", "Swift", "strasse", "", "zebra", "\u{1F600}"] {
            try home.expectAgreement(#Predicate<Article> { $0.title == constant })
            try home.expectAgreement(#Predicate<Article> { $0.title != constant })
            try home.expectAgreement(#Predicate<Article> { $0.title < constant })
            try home.expectAgreement(#Predicate<Article> { $0.title >= constant })
            try home.expectAgreement(#Predicate<Article> { $0.content == constant })
        }
        let list = ["caf\u{e9}", "line\r\nbreak", "Swift"]
        try home.expectAgreement(#Predicate<Article> { list.contains($0.title) })
    }
}
