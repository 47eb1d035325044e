import Foundation
import Snapshot

/// The blog model: `Post` (title, content, date, attachments, tags), `Attachment` (image data
/// kept as external storage, to-one `post`) and `Tag` (unique name, colour, to-many `posts`),
/// with helpers that make snapshots of it under temporary identifiers.
public enum BlogModel {
    /// The schema: posts own their attachments (cascade), tags and posts are many-to-many
    /// (nullify); posts have an index on `date` and a compound one on `title, date`.
    public static let schema: Schema = {
        do {
            return try Schema([
                .init(
                    "Post",
                    attributes: [
                        .init("title", .string),
                        .init("content", .string, isOptional: true),
                        .init("date", .date),
                    ],
                    relationships: [
                        .init("attachments", destination: "Attachment", .toMany, inverse: "post", deleteRule: .cascade),
                        .init("tags", destination: "Tag", .toMany, inverse: "posts"),
                    ],
                    indexes: [["date"], ["title", "date"]]),
                .init(
                    "Attachment",
                    attributes: [.init("imageData", .data, options: .externalStorage)],
                    relationships: [.init("post", destination: "Post", inverse: "attachments")]),
                .init(
                    "Tag",
                    attributes: [.init("name", .string, options: .unique), .init("colour", .string, isOptional: true)],
                    relationships: [.init("posts", destination: "Post", .toMany, inverse: "tags")]),
            ])
        } catch {
            preconditionFailure("the blog model is a fixed, consistent schema: \(error)")
        }
    }()

    /// A new post under a temporary identifier.
    public static func post(
        title: String, content: String? = nil, date: Date, attachments: [PersistentIdentifier] = [], tags: [PersistentIdentifier] = []
    ) -> DefaultSnapshot {
        DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Post"),
            values: [
                "title": .string(title), "content": content.map(PropertyValue.string) ?? .null, "date": .date(date),
                "attachments": .toMany(attachments), "tags": .toMany(tags),
            ])
    }

    /// A new attachment under a temporary identifier.
    public static func attachment(imageData: Data, post: PersistentIdentifier?) -> DefaultSnapshot {
        DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Attachment"), values: ["imageData": .data(imageData), "post": .toOne(post)])
    }

    /// A new tag under a temporary identifier.
    public static func tag(name: String, colour: String? = nil, posts: [PersistentIdentifier] = []) -> DefaultSnapshot {
        DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Tag"),
            values: ["name": .string(name), "colour": colour.map(PropertyValue.string) ?? .null, "posts": .toMany(posts)])
    }
}
