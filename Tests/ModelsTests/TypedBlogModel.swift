import EngineTestSupport
import Foundation
import Models
import Snapshot

/// The blog model as typed models: posts with tags (many-to-many) and attachments (owned,
/// one-to-many), every relationship held as model references.
final class Article: PersistentModel, Equatable {
    enum Status: String, AttributeValue, Codable, Sendable { case draft, published, archived }

    var persistentModelID = PersistentIdentifier.temporary(entityName: "Article")
    var title = ""
    var content: String?
    var date = Date(timeIntervalSinceReferenceDate: 0)
    var views = 0
    var rating: Double?
    var isPinned = false
    var status = Status.draft
    var attachments: [Figure] = []
    var tags: [Label] = []
    init() {}

    init(title: String, content: String? = nil, date: Date, views: Int = 0, rating: Double? = nil, isPinned: Bool = false, status: Status = .draft) {
        self.title = title
        self.content = content
        self.date = date
        self.views = views
        self.rating = rating
        self.isPinned = isPinned
        self.status = status
    }

    static let properties: [ModelProperty<Article>] = [
        .attribute(\.title, "title"),
        .attribute(\.content, "content"),
        .attribute(\.date, "date"),
        .attribute(\.views, "views"),
        .attribute(\.rating, "rating"),
        .attribute(\.isPinned, "isPinned"),
        .attribute(\.status, "status"),
        .toMany(\.attachments, "attachments", inverse: "post", deleteRule: .cascade),
        .toMany(\.tags, "tags", inverse: "posts"),
    ]
    static var indexes: [[String]] { [["date"]] }
}

final class Figure: PersistentModel, Equatable {
    var persistentModelID = PersistentIdentifier.temporary(entityName: "Figure")
    var imageData = Data()
    var caption: String?
    var post: Article?
    init() {}

    init(imageData: Data, caption: String? = nil, post: Article?) {
        self.imageData = imageData
        self.caption = caption
        self.post = post
    }

    static let properties: [ModelProperty<Figure>] = [
        .attribute(\.imageData, "imageData", options: .externalStorage),
        .attribute(\.caption, "caption"),
        .toOne(\.post, "post", inverse: "attachments"),
    ]
}

final class Label: PersistentModel, Equatable {
    var persistentModelID = PersistentIdentifier.temporary(entityName: "Label")
    var name = ""
    var colour: String?
    var posts: [Article] = []
    init() {}

    init(name: String, colour: String? = nil) {
        self.name = name
        self.colour = colour
    }

    static let properties: [ModelProperty<Label>] = [
        .attribute(\.name, "name", options: .unique),
        .attribute(\.colour, "colour"),
        .toMany(\.posts, "posts", inverse: "tags"),
    ]
}

/// A struct model whose relationship is an identifier.
struct Note: PersistentModel {
    var persistentModelID = PersistentIdentifier.temporary(entityName: "Note")
    var text = ""
    var words: [String] = []
    var post: PersistentIdentifier?
    init() {}

    static let properties: [ModelProperty<Note>] = [
        .attribute(\.text, "text"),
        .attribute(\.words, "words"),
        .toOne(\.post, "post", destination: "Article"),
    ]
}

/// A WALDataStore of the typed blog model in a temporary directory, filled with a fixed set of
/// objects, and every object read back as models.
final class TypedBlogStore {
    let temporary = TemporaryDirectory("walstore-models")
    let store: WALDataStore
    let map: ModelIdentityMap

    static let schema: Schema = {
        do { return try Schema(models: Article.self, Figure.self, Label.self, Note.self) } catch { preconditionFailure("\(error)") }
    }()

    init() throws {
        store = try WALDataStore(WALStoreConfiguration(name: "Blog", schema: Self.schema, path: temporary.path + "/store"))
        let store = self.store
        map = ModelIdentityMap { ids in
            try store.fetch(
                DataStoreFetchRequest(descriptor: Snapshot.FetchDescriptor(entityName: ids[0].entityName, predicate: .identifierIn(Set(ids))))
            )
            .fetchedSnapshots
        }
        try fill()
    }

    deinit { temporary.remove() }

    static let day: TimeInterval = 86_400
    static let start = Date(timeIntervalSinceReferenceDate: 700_000_000)

    private func fill() throws {
        let swift = Label(name: "swift", colour: "orange")
        let news = Label(name: "news")
        let linux = Label(name: "linux", colour: "black")
        let unused = Label(name: "unused")
        let posts = [
            Article(
                title: "Swift 6 released", content: "strict concurrency", date: Self.start, views: 120, rating: 4.5, isPinned: true,
                status: .published),
            Article(title: "swift on Linux", content: nil, date: Self.start + Self.day, views: 40, rating: nil, status: .published),
            Article(title: "Rust and Swift", content: "a comparison", date: Self.start + 2 * Self.day, views: 7, rating: 3.0),
            Article(title: "Draft", content: "", date: Self.start + 3 * Self.day, views: 0, rating: nil, status: .draft),
            Article(title: "", content: "untitled", date: Self.start - Self.day, views: 3, rating: 1.5, status: .archived),
            Article(
                title: "News of the week", content: "swift and more", date: Self.start + 5 * Self.day, views: 55, rating: 5, isPinned: true,
                status: .published),
        ]
        posts[0].tags = [swift, news]
        posts[1].tags = [swift, linux]
        posts[2].tags = [swift]
        posts[5].tags = [news]
        for tag in [swift, news, linux] { tag.posts = posts.filter { $0.tags.contains(tag) } }
        let attachments = [
            Figure(imageData: Data(repeating: 1, count: 10), caption: "logo", post: posts[0]),
            Figure(imageData: Data(repeating: 2, count: 5000), caption: nil, post: posts[0]),
            Figure(imageData: Data([3]), caption: "penguin", post: posts[1]),
            Figure(imageData: Data([4]), caption: "orphan", post: nil),
            Figure(imageData: Data([5]), caption: "chart", post: posts[5]),
        ]
        for post in posts { post.attachments = attachments.filter { $0.post === post } }
        var note = Note()
        note.text = "about Swift 6"
        note.words = ["about", "swift"]
        note.post = posts[0].persistentModelID
        let snapshots = posts.map(\.snapshot) + attachments.map(\.snapshot) + [swift, news, linux, unused].map(\.snapshot) + [note.snapshot]
        _ = try store.save(DataStoreSaveChangesRequest(inserted: snapshots))
    }

    /// Every object of `Model` in the store, as models (through the identity map).
    func all<Model: PersistentModel>(_ type: Model.Type) throws -> [Model] {
        let snapshots = try store.fetch(DataStoreFetchRequest(descriptor: Snapshot.FetchDescriptor(entityName: Model.entityName))).fetchedSnapshots
        map.add(snapshots)
        return try snapshots.map { try map.model(Model.self, for: $0.persistentIdentifier) }
    }

    /// The identifiers the store selects for `descriptor`, in its order.
    func fetchIdentifiers<Model: PersistentModel>(_ descriptor: Models.FetchDescriptor<Model>) throws -> [PersistentIdentifier] {
        try store.fetchIdentifiers(DataStoreFetchRequest(descriptor: descriptor.storeDescriptor()))
    }
}
