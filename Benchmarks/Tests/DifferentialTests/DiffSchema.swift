import Foundation
import Snapshot

/// The schema both stores run the differential test on: every kind of relationship the two
/// stores share, unique attributes, a compound uniqueness constraint and declared indexes.
///
/// - `Author` (`handle` unique, `age` indexed) → `posts`: one-to-many, inverse `Post.author`,
///   delete rule **cascade**.
/// - `Post` (`title`, `body?`, `score` indexed, `rating?`, `published`, `date`, `slug` + `year`
///   unique together) → `author` (to-one with inverse, nullify), `tags` (many-to-many with
///   `Tag.posts`, nullify, counts bounded), `comments` (one-to-many, inverse `Comment.post`, delete rule
///   **deny**), `related` (to-many **without inverse**, to other posts).
/// - `Tag` (`name` unique, `colour?`) → `posts`; `Category`, a sub-entity of `Tag` (`rank`),
///   shares the uniqueness of `name` with tags (an insert of one with a stored other's name is
///   refused, not upserted across entities).
/// - `Comment` (`text`, `votes`) → `post` (to-one with inverse), `replyTo` (to-one **without
///   inverse**, to another comment).
/// - `Review`, a **sub-entity** of `Comment` (`stars`, indexed) → `reviewer` (to-one without
///   inverse, to an author), declared on the sub-entity; comments' relationships reach reviews
///   too.
///
/// Every entity has `uid`, an integer the harness sets to the logical number of the insert that
/// made (or last upserted) the object: the last key of every generated sort, so that sorts are
/// total and both stores must return the same order.
///
/// `Post.tags` holds at most 2 tags and `Tag.posts` at most 3 posts (maximum counts, checked
/// from either side). Not here: one-to-one relationships with an inverse (the Core Data-shaped
/// SQLite store refuses them, `unsupportedFeature`).
enum DiffSchema {
    static let schema: Schema = {
        do {
            return try Schema([
                .init(
                    "Author",
                    attributes: [.init("uid", .int), .init("handle", .string, options: .unique), .init("age", .int)],
                    relationships: [.init("posts", destination: "Post", .toMany, inverse: "author", deleteRule: .cascade)],
                    indexes: [["age"]]),
                .init(
                    "Post",
                    attributes: [
                        .init("uid", .int), .init("title", .string), .init("body", .string, isOptional: true), .init("score", .int),
                        .init("rating", .double, isOptional: true), .init("published", .bool), .init("date", .date),
                        .init("slug", .string), .init("year", .int),
                    ],
                    relationships: [
                        .init("author", destination: "Author", inverse: "posts"),
                        .init("tags", destination: "Tag", .toMany, inverse: "posts", maximumCount: 2),
                        .init("comments", destination: "Comment", .toMany, inverse: "post", deleteRule: .deny),
                        .init("related", destination: "Post", .toMany),
                    ],
                    uniquenessConstraints: [["slug", "year"]],
                    indexes: [["score"], ["title", "date"]]),
                .init(
                    "Tag",
                    attributes: [.init("uid", .int), .init("name", .string, options: .unique), .init("colour", .string, isOptional: true)],
                    relationships: [.init("posts", destination: "Post", .toMany, inverse: "tags", maximumCount: 3)]),
                .init(
                    "Comment",
                    attributes: [.init("uid", .int), .init("text", .string), .init("votes", .int)],
                    relationships: [
                        .init("post", destination: "Post", inverse: "comments"),
                        .init("replyTo", destination: "Comment"),
                    ]),
                .init("Category", superentity: "Tag", attributes: [.init("rank", .int)]),
                .init(
                    "Review", superentity: "Comment",
                    attributes: [.init("stars", .int)],
                    relationships: [.init("reviewer", destination: "Author")],
                    indexes: [["stars"]]),
            ])
        } catch {
            preconditionFailure("the differential schema is fixed and consistent: \(error)")
        }
    }()

    static var entityNames: [String] { schema.entities.map(\.name) }

    static func entity(_ name: String) -> Schema.Entity {
        schema.entities.first { $0.name == name }!
    }

    /// Every attribute of `entity`, inherited ones included.
    static func allAttributes(_ entity: String) -> [Schema.Attribute] {
        schema.allProperties(of: entity).compactMap { if case .attribute(let a) = $0 { a } else { nil } }
    }

    /// The attributes of `entity` the generator writes (all but `uid`, which it sets itself).
    static func attributes(_ entity: String) -> [Schema.Attribute] {
        allAttributes(entity).filter { $0.name != "uid" }
    }

    /// Every relationship of `entity`, inherited ones included.
    static func relationships(_ entity: String) -> [Schema.Relationship] {
        schema.allProperties(of: entity).compactMap { if case .relationship(let r) = $0 { r } else { nil } }
    }

    /// The unique values of each uniqueness rule of `entity` (unique attributes and compound
    /// constraints), for the generator's avoidance of two inserts sharing one.
    static func uniquenessRules(_ entity: String) -> [[String]] {
        schema.allUniquenessConstraints(of: entity).map(\.properties)
    }
}
