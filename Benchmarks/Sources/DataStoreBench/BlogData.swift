import BenchSupport
import Foundation
import Snapshot
import SnapshotTestSupport

/// The seeded data every contender gets: tags, posts (titles and contents of random words, a
/// date a minute apart, two distinct tags each), and the `User` objects of `save-million`.
enum BlogData {
    /// The blog model (`BlogModel.schema`: an index on `date` and one on `title, date`).
    static var schema: Schema { BlogModel.schema }

    /// `User`: a few string and number fields, no relationships.
    static let userSchema: Schema = {
        do {
            return try Schema([
                .init(
                    "User",
                    attributes: [
                        .init("name", .string), .init("email", .string), .init("age", .int64), .init("score", .double),
                        .init("joined", .date),
                    ]),
            ])
        } catch {
            preconditionFailure("the user schema is fixed and consistent: \(error)")
        }
    }()

    static let words = [
        "swift", "storage", "engine", "actor", "model", "query", "index", "record", "commit", "log", "sync", "cloud",
        "shared", "local", "asset", "merge", "compact", "snapshot", "schema", "fetch", "predicate", "sort", "limit",
        "offset", "tag", "post", "image", "server", "linux", "durable",
    ]
    static let baseDate = Date(timeIntervalSinceReferenceDate: 700_000_000)

    /// The tags, under temporary identifiers.
    static func tags(_ count: Int) -> [DefaultSnapshot] {
        (0..<count).map { BlogModel.tag(name: "tag\($0)") }
    }

    /// The posts' values in order: the same for every contender (one generator, one seed).
    struct PostStream {
        private var random = SplitMix64(seed: 42)
        private var index = 0
        let tagCount: Int

        init(tagCount: Int) { self.tagCount = tagCount }

        /// The next post, linked to two distinct tags of `tags`; its title is returned too.
        mutating func next(tags: [PersistentIdentifier]) -> DefaultSnapshot {
            let title = (0..<4).map { _ in BlogData.words[random.below(BlogData.words.count)] }.joined(separator: " ")
            let content = (0..<30).map { _ in BlogData.words[random.below(BlogData.words.count)] }.joined(separator: " ")
            let first = random.below(tagCount)
            let second = (first + 1 + random.below(tagCount - 1)) % tagCount
            let date = BlogData.baseDate.addingTimeInterval(Double(index) * 60 + Double(random.below(600)))
            index += 1
            return BlogModel.post(title: title, content: content, date: date, tags: tags.isEmpty ? [] : [tags[first], tags[second]])
        }
    }

    /// User `i`.
    static func user(_ i: Int) -> DefaultSnapshot {
        DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "User"),
            values: [
                "name": .string("user \(i)"), "email": .string("user\(i)@example.com"), "age": .int64(Int64(18 + i % 60)),
                "score": .double(Double(i % 1_000) / 10), "joined": .date(baseDate.addingTimeInterval(Double(i))),
            ])
    }

    /// The date `minutes` minutes after the first post's.
    static func date(minutes: Int) -> Date { baseDate.addingTimeInterval(Double(minutes) * 60) }
}
