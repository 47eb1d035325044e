import EngineTestSupport
import Foundation
import Models
import Snapshot
import Testing

/// The README's blog model in the short form: `ModelObject` holds the identifier and `init()`,
/// names come from the key paths, inverses are key paths.
enum ShortBlog {
    final class Post: ModelObject, PersistentModel {
        var title = ""
        var date = Date.distantPast
        var attachments: [Attachment] = []
        var tags: [Tag] = []
        static let properties: [ModelProperty<Post>] = [
            .attribute(\.title), .attribute(\.date),
            .toMany(\.attachments, inverse: \.post, deleteRule: .cascade), .toMany(\.tags, inverse: \.posts),
        ]
    }

    final class Attachment: ModelObject, PersistentModel {
        var imageData = Data()
        var post: Post?
        static let properties: [ModelProperty<Attachment>] = [
            .attribute(\.imageData, options: .externalStorage), .toOne(\.post, inverse: \.attachments),
        ]
    }

    final class Tag: ModelObject, PersistentModel {
        var name = ""
        var posts: [Post] = []
        static let properties: [ModelProperty<Tag>] = [.attribute(\.name, options: .unique), .toMany(\.posts, inverse: \.tags)]
    }

    final class Draft: ModelObject, PersistentModel {  // kept on this device only
        var text = ""
        static let properties: [ModelProperty<Draft>] = [.attribute(\.text)]
    }
}

/// A model with a cache that is not saved.
final class Thumbnail: ModelObject, PersistentModel {
    var name = ""
    var renderCount = 0
    lazy var rendered: String = "rendered \(name)"
    static let properties: [ModelProperty<Thumbnail>] = [.attribute(\.name)]
    static var transientProperties: [PartialKeyPath<Thumbnail>] { [\.renderCount] }
}

/// A shelf whose books' relationship is stored under another name than the Swift property.
final class Shelf: ModelObject, PersistentModel {
    var label = ""
    var books: [Volume] = []
    static let properties: [ModelProperty<Shelf>] = [.attribute(\.label, "code"), .toMany(\.books, "items", inverse: \Volume.shelf)]
}

final class Volume: ModelObject, PersistentModel {
    var title = ""
    var shelf: Shelf?
    convenience init(title: String) {
        self.init()
        self.title = title
    }
    static let properties: [ModelProperty<Volume>] = [.attribute(\.title), .toOne(\.shelf, inverse: \Shelf.books)]
}

/// A model with a stored property its list leaves out.
final class Forgetful: ModelObject, PersistentModel {
    var kept = ""
    var forgotten = 0
    static let properties: [ModelProperty<Forgetful>] = [.attribute(\.kept)]
}

/// A struct model with a forgotten property.
struct Reading: PersistentModel {
    var persistentModelID = PersistentIdentifier.temporary(entityName: "Reading")
    var value = 0.0
    var unit = ""
    init() {}
    static let properties: [ModelProperty<Reading>] = [.attribute(\.value)]
}

@Suite struct ModelDeclarationCheckTests {
    @Test func aStoredPropertyThePropertyListLeavesOutIsRefusedNamingTheModelAndTheProperty() throws {
        let classRefusal = #expect(throws: DataStoreError.self) { try Schema(models: Forgetful.self) }
        #expect(classRefusal?.code == .invalidSchema)
        #expect(classRefusal?.entityName == "Forgetful")
        #expect(classRefusal?.propertyName == "forgotten")
        #expect(classRefusal?.message.contains("transientProperties") == true)
        let structRefusal = #expect(throws: DataStoreError.self) { try Schema(models: Reading.self) }
        #expect(structRefusal?.entityName == "Reading")
        #expect(structRefusal?.propertyName == "unit")
    }

    @Test func transientPropertiesAreAcceptedAndNotSaved() throws {
        let schema = try Schema(models: Thumbnail.self)
        #expect(schema.entity(named: "Thumbnail")?.attributes.map(\.name) == ["name"])
        let temporary = TemporaryDirectory("walstore-models-transient")
        let container = try StoreContainer(schema: schema, configurations: [.init(name: "Local", entityNames: nil, path: temporary.path + "/store")])
        let context = ModelContext(container)
        let thumbnail = Thumbnail()
        thumbnail.name = "cat"
        thumbnail.renderCount = 3
        #expect(thumbnail.rendered == "rendered cat")
        try context.insert(thumbnail)
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Thumbnail>())
        #expect(fetched.map(\.name) == ["cat"])
        #expect(fetched.map(\.renderCount) == [0], "a transient property is not saved")
        try container.close()
    }

    @Test func namesComeFromKeyPathsUnlessGiven() throws {
        let schema = try Schema(models: ShortBlog.Post.self, ShortBlog.Attachment.self, ShortBlog.Tag.self, ShortBlog.Draft.self)
        let post = try #require(schema.entity(named: "Post"))
        #expect(post.attributes.map(\.name) == ["title", "date"])
        #expect(post.relationships.map(\.name) == ["attachments", "tags"])
        #expect(post.relationships.map(\.inverse) == ["post", "posts"])
        #expect(schema.entity(named: "Attachment")?.relationships.first?.inverse == "attachments")
        #expect(schema.entity(named: "Tag")?.attributes.first?.options.contains(.unique) == true)
        let shelf = try Schema(models: Shelf.self, Volume.self)
        #expect(shelf.entity(named: "Shelf")?.attributes.map(\.name) == ["code"])
        #expect(shelf.entity(named: "Shelf")?.relationships.map(\.name) == ["items"])
        #expect(shelf.entity(named: "Volume")?.relationships.first?.inverse == "items", "a key path names the inverse as its list declares it")
    }

    @Test func shortFormModelsSaveAndFetchWithInversesKeptInStep() throws {
        let temporary = TemporaryDirectory("walstore-models-short")
        let container = try StoreContainer(
            schema: Schema(models: ShortBlog.Post.self, ShortBlog.Attachment.self, ShortBlog.Tag.self, ShortBlog.Draft.self),
            configurations: [
                .init(name: "Local", entityNames: ["Draft"], path: temporary.path + "/Local"),
                .init(name: "Cloud", entityNames: nil, path: temporary.path + "/Cloud"),
            ])
        let context = ModelContext(container)
        let post = ShortBlog.Post()
        post.title = "Short"
        let tag = ShortBlog.Tag()
        tag.name = "swift"
        post.tags.append(tag)
        let attachment = ShortBlog.Attachment()
        attachment.post = post
        try context.insert(post)
        try context.insert(attachment)
        try context.save()
        #expect(tag.posts.first === post, "the inverse named by key path is kept in step")
        #expect(post.attachments.first === attachment)
        #expect(post.persistentModelID.entityName == "Post" && !post.persistentModelID.isTemporary)

        let fetched = try ModelContext(container).fetch(FetchDescriptor<ShortBlog.Post>(predicate: #Predicate { $0.title == "Short" }))
        #expect(fetched.count == 1)
        #expect(fetched.first?.tags.map(\.name) == ["swift"])
        #expect(fetched.first?.attachments.count == 1)
        try container.close()
    }

    @Test func aRelationshipStoredUnderAnotherNameKeepsItsInverseInStep() throws {
        let temporary = TemporaryDirectory("walstore-models-shelf")
        let container = try StoreContainer(
            schema: Schema(models: Shelf.self, Volume.self), configurations: [.init(name: "Local", entityNames: nil, path: temporary.path + "/store")]
        )
        let context = ModelContext(container)
        let shelf = Shelf()
        shelf.label = "A1"
        let volume = Volume(title: "Dune")
        volume.shelf = shelf
        try context.insert(volume)
        try context.save()
        #expect(shelf.books.first === volume)
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Shelf>())
        #expect(fetched.map(\.label) == ["A1"])
        #expect(fetched.first?.books.map(\.title) == ["Dune"])
        try container.close()
    }
}
