import EngineTestSupport
import Foundation
import Models
import Snapshot
import Testing

// The blog model of the README's example program (Sources/WALStoreExample/main.swift), as it
// declares it: the test below checks the two copies are the same. Other tests use it too.
// EXAMPLE:begin
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
// EXAMPLE:end

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

    let recent = try context.fetch(
        FetchDescriptor<Post>(
            predicate: #Predicate { $0.title.contains("Swift") },
            sortBy: [SortDescriptor(\.date, order: .reverse)]))
    recent[0].title = "Swift 6.3 on Linux"  // found and staged by the next save
    try context.save()

    try context.delete(recent[0])  // its attachments go too (cascade); the tag stays
    try context.save()
    return context
}

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

    /// The example program's source, `Sources/WALStoreExample/main.swift`.
    static var exampleSourcePath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/WALStoreExample/main.swift").path
    }

    @Test func readmeShowsExactlyTheExampleProgram() throws {
        let (compiled, shown) = try ReadmeSnippet.compiledAndShown(sourcePath: Self.exampleSourcePath, marker: "models-example")
        #expect(compiled.count > 50)
        #expect(shown == compiled)
        #expect(compiled.first == "import Foundation" && compiled.contains("import Models") && compiled.contains("import Snapshot"))
    }

    @Test func theseModelsAreTheExampleProgramsModels() throws {
        func lines(_ path: String, from begin: String, to end: String) throws -> [String] {
            let all = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard let start = all.firstIndex(where: { $0.hasPrefix(begin) }), let stop = all[start...].firstIndex(where: { $0.hasPrefix(end) }) else {
                return []
            }
            return Array(all[start..<stop])
        }
        let here = try lines(#filePath, from: "final class Post", to: "// EXAMPLE:end")
        let there = try lines(Self.exampleSourcePath, from: "final class Post", to: "@StoreActor")
        #expect(!here.isEmpty)
        #expect(here == Array(there.dropLast()), "the models differ from Sources/WALStoreExample/main.swift's")
    }

    @Test func theExampleProgramRunsAndPrintsWhatItSaved() throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("walstore-example")
        let process = Process()
        process.executableURL = binary
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(printed)")
        #expect(printed.contains("saved a post with 1 attachment and a draft"), "\(printed)")
        #expect(printed.contains(#"found ["Swift 6 on Linux"], tagged ["swift"]"#), "\(printed)")
        #expect(printed.contains("posts 0, attachments 0, tags 1, drafts 1"), "\(printed)")
    }
}
