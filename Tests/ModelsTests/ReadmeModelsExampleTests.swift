import EngineTestSupport
import Foundation
import Models
import Snapshot
import Testing

// README:begin
final class Post: PersistentModel {
    var persistentModelID = PersistentIdentifier.temporary(entityName: "Post")
    var title = ""
    var date = Date.distantPast
    var attachments: [Attachment] = []
    var tags: [Tag] = []
    init() {}

    static let properties: [ModelProperty<Post>] = [
        .attribute(\.title, "title"),
        .attribute(\.date, "date"),
        .toMany(\.attachments, "attachments", inverse: "post", deleteRule: .cascade),
        .toMany(\.tags, "tags", inverse: "posts"),
    ]
}

final class Attachment: PersistentModel {
    var persistentModelID = PersistentIdentifier.temporary(entityName: "Attachment")
    var imageData = Data()
    var post: Post?
    init() {}

    static let properties: [ModelProperty<Attachment>] = [
        .attribute(\.imageData, "imageData", options: .externalStorage),
        .toOne(\.post, "post", inverse: "attachments"),
    ]
}

final class Tag: PersistentModel {
    var persistentModelID = PersistentIdentifier.temporary(entityName: "Tag")
    var name = ""
    var posts: [Post] = []
    init() {}

    static let properties: [ModelProperty<Tag>] = [
        .attribute(\.name, "name", options: .unique),
        .toMany(\.posts, "posts", inverse: "tags"),
    ]
}

final class Draft: PersistentModel {  // kept on this device only
    var persistentModelID = PersistentIdentifier.temporary(entityName: "Draft")
    var text = ""
    init() {}

    static let properties: [ModelProperty<Draft>] = [.attribute(\.text, "text")]
}

@StoreActor
func runBlog(in directory: URL) throws -> ModelContext {
    let container = try StoreContainer(
        schema: Schema(models: Post.self, Attachment.self, Tag.self, Draft.self),
        configurations: [
            .init(name: "Local", entityNames: ["Draft"], directory: directory.appendingPathComponent("Local")),
            .init(name: "Cloud", entityNames: ["Post", "Attachment", "Tag"], directory: directory.appendingPathComponent("Cloud")),
        ])
    let context = ModelContext(container)

    let post = Post()
    post.title = "Swift 6 on Linux"
    post.date = .now
    let swift = Tag()
    swift.name = "swift"
    post.tags = [swift]
    let photo = Attachment()
    photo.imageData = Data(count: 200_000)  // stored apart from the record
    photo.post = post
    post.attachments = [photo]
    let draft = Draft()
    draft.text = "notes for the next post"
    try context.insert(post)  // and the tag and attachment it reaches
    try context.insert(draft)
    try context.save()  // one atomic save across both stores, durable when it returns

    let recent = try context.fetch(FetchDescriptor<Post>(
        predicate: #Predicate { $0.title.contains("Swift") },
        sortBy: [SortDescriptor(\.date, order: .reverse)]))
    recent[0].title = "Swift 6.3 on Linux"  // found and staged by the next save
    try context.save()

    try context.delete(recent[0])  // its attachments go too (cascade); the tag stays
    try context.save()
    return context
}
// README:end

/// The README's Models example, compiled and run; a test keeps the README's copy identical.
@Suite struct ReadmeModelsExampleTests {
    @Test func readmeExampleSavesChangesAndDeletesAcrossBothStores() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("models-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let counts = try await StoreActor.run {
            let context = try runBlog(in: directory)
            return [
                try context.fetchCount(FetchDescriptor<Post>()), try context.fetchCount(FetchDescriptor<Attachment>()),
                try context.fetchCount(FetchDescriptor<Tag>()), try context.fetchCount(FetchDescriptor<Draft>()),
                try context.fetch(FetchDescriptor<Tag>())[0].posts.count,
            ]
        }
        #expect(counts == [0, 0, 1, 1, 0])
        // The draft is in the Local store, the tag in the Cloud one.
        let reopened = try StoreContainer(
            schema: Schema(models: Post.self, Attachment.self, Tag.self, Draft.self),
            configurations: [
                .init(name: "Local", entityNames: ["Draft"], directory: directory.appendingPathComponent("Local")),
                .init(name: "Cloud", entityNames: ["Post", "Attachment", "Tag"], directory: directory.appendingPathComponent("Cloud")),
            ])
        defer { try? reopened.close() }
        #expect(try await reopened.store(named: "Local")?.fetchCount(DataStoreFetchRequest(descriptor: .init(entityName: "Draft"))) == 1)
        #expect(try await reopened.store(named: "Cloud")?.fetchCount(DataStoreFetchRequest(descriptor: .init(entityName: "Tag"))) == 1)
    }

    @Test func readmeShowsExactlyTheCompiledExample() throws {
        let (compiled, shown) = try ReadmeSnippet.compiledAndShown(sourcePath: #filePath, marker: "models-example")
        #expect(!compiled.isEmpty)
        #expect(shown == compiled)
    }
}
