// walstore-example: a small blog app on the Models layer — typed models, a container of two
// stores (`Local` for drafts kept on this device, `Cloud` for the blog), a context on
// `@StoreActor`, one save across both stores, a `#Predicate` fetch, an update and a cascading
// delete. It makes its stores in a fresh temporary directory and removes it at the end.
//
//     swift run -c release walstore-example
//
// README.md shows the lines between the markers, unchanged (Tests/ModelsTests/ReadmeModelsExampleTests.swift
// checks it, and runs this program).
// README:begin
import Foundation
import Models
import Snapshot

final class Post: ModelObject, PersistentModel {
    var title = ""
    var date = Date.distantPast
    var attachments: [Attachment] = []
    var tags: [Tag] = []
    static let properties: [ModelProperty<Post>] = [
        .attribute(\.title), .attribute(\.date),
        .toMany(\.attachments, inverse: \Attachment.post, deleteRule: .cascade), .toMany(\.tags, inverse: \Tag.posts),
    ]
}

final class Attachment: ModelObject, PersistentModel {
    var imageData = Data()
    var post: Post?
    static let properties: [ModelProperty<Attachment>] = [
        .attribute(\.imageData, options: .externalStorage), .toOne(\.post, inverse: \Post.attachments),
    ]
}

final class Tag: ModelObject, PersistentModel {
    var name = ""
    var posts: [Post] = []
    static let properties: [ModelProperty<Tag>] = [.attribute(\.name, options: .unique), .toMany(\.posts, inverse: \Post.tags)]
}

final class Draft: ModelObject, PersistentModel {  // kept on this device only
    var text = ""
    static let properties: [ModelProperty<Draft>] = [.attribute(\.text)]
}

@StoreActor
func runBlog(in directory: URL) throws {
    let container = try StoreContainer(
        schema: Schema(models: Post.self, Attachment.self, Tag.self, Draft.self),
        configurations: [
            .init(name: "Local", entityNames: ["Draft"], directory: directory.appendingPathComponent("Local")),
            .init(name: "Cloud", entityNames: ["Post", "Attachment", "Tag"], directory: directory.appendingPathComponent("Cloud")),
        ])  // makes both directories (and missing parents), or throws a ContainerError and makes none
    defer { try? container.close() }
    let context = ModelContext(container)

    let post = Post()
    post.title = "Swift 6 on Linux"
    post.date = .now
    let swift = Tag()
    swift.name = "swift"
    post.tags = [swift]
    let photo = Attachment()
    photo.imageData = Data(count: 1 << 20)  // a blob file of its own, written once
    photo.post = post
    post.attachments = [photo]
    let draft = Draft()
    draft.text = "notes for the next post"
    try context.insert(post)  // and the tag and attachment it reaches
    try context.insert(draft)
    try context.save()  // one atomic save across both stores, durable when it returns
    print("saved a post with \(post.attachments.count) attachment and a draft")

    let recent = try context.fetch(
        FetchDescriptor<Post>(
            predicate: #Predicate { $0.title.contains("Swift") },
            sortBy: [SortDescriptor(\.date, order: .reverse)]))
    print("found \(recent.map(\.title)), tagged \(recent[0].tags.map(\.name))")
    recent[0].title = "Swift 6.3 on Linux"  // found and staged by the next save
    try context.save()

    try context.delete(recent[0])  // its attachments go too (cascade); the tag stays
    try context.save()
    let counts = try [
        context.fetchCount(FetchDescriptor<Post>()), context.fetchCount(FetchDescriptor<Attachment>()),
        context.fetchCount(FetchDescriptor<Tag>()), context.fetchCount(FetchDescriptor<Draft>()),
    ]
    print("posts \(counts[0]), attachments \(counts[1]), tags \(counts[2]), drafts \(counts[3])")
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("walstore-example-\(UUID().uuidString)")
var failed = false
do {
    try await runBlog(in: directory)
} catch {
    print("walstore-example: \(error)")  // a ContainerError or DataStoreError: its code says what failed
    failed = true
}
try? FileManager.default.removeItem(at: directory)
exit(failed ? 1 : 0)
// README:end
