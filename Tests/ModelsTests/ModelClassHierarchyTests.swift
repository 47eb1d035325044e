import Foundation
import Models
import Snapshot
import Testing

/// A second class for the entity `Photo`, in a namespace (as a schema version's models are
/// declared): a schema that lists it stores its photos with a camera, not a lens.
enum Archive {
    final class Photo: Media {
        final var camera = ""
        override class var declaration: ModelClassDeclaration {
            ModelClassDeclaration(Archive.Photo.self, properties: [.attribute(\.camera)])
        }
    }

    static let schema: Schema = {
        do { return try Schema(models: Media.self, Archive.Photo.self, Album.self) } catch { preconditionFailure("\(error)") }
    }()

    static func photo(_ title: String, camera: String) -> Media {
        let photo = Archive.Photo()
        (photo.title, photo.camera) = (title, camera)
        return photo
    }
}

/// Hierarchies whose classes share an entity name with another schema's, and subclasses
/// declared inside a namespace.
@StoreActor @Suite struct ModelClassHierarchyTests {
    @Test func twoSchemasListingDifferentClassesForOneEntityEachMakeTheClassTheirSchemaLists() throws {
        // Both schemas exist in the process, whichever was made first.
        let archive = try MediaHome(schema: Archive.schema)
        let home = try MediaHome()
        try home.fill(ModelContext(home.container))
        let archiveContext = ModelContext(archive.container)
        try archiveContext.insert(Archive.photo("Negative", camera: "Leica"))
        try archiveContext.save()

        let photos = try ModelContext(home.container).fetch(FetchDescriptor<Media>(predicate: #Predicate { $0 is Photo }))
        #expect(photos.count == 3 && photos.allSatisfy { type(of: $0) == Photo.self })
        let archived = try ModelContext(archive.container).fetch(FetchDescriptor<Media>())
        #expect(archived.map { ($0 as? Archive.Photo)?.camera } == ["Leica"])
    }

    @Test func anInheritedPropertyOfASubclassDeclaredInANamespaceIsNamedInPredicatesAndSorts() throws {
        let archive = try MediaHome(schema: Archive.schema)
        let context = ModelContext(archive.container)
        for (title, camera) in [("Dunes", "Leica"), ("Quay", "Rollei"), ("Fog", "Leica")] { try context.insert(Archive.photo(title, camera: camera)) }
        try context.save()
        let descriptor = FetchDescriptor<Archive.Photo>(
            predicate: #Predicate { $0.title != "Quay" && $0.camera == "Leica" }, sortBy: [SortDescriptor(\.title, order: .reverse)])
        #expect(try ModelContext(archive.container).fetch(descriptor).map(\.title) == ["Fog", "Dunes"])
    }
}

/// A hierarchy whose root has a unique attribute, and a subclass with a unique attribute of
/// its own: saves of new objects with the unique values of stored ones are upserts.
class Asset: ModelObject, InheritableModel {
    final var code = ""
    final var note = ""
    class var declaration: ModelClassDeclaration {
        ModelClassDeclaration(Asset.self, properties: [.attribute(\.code, options: .unique), .attribute(\.note)])
    }
}

final class Picture: Asset {
    final var pixels = 0
    final var serial = ""
    override class var declaration: ModelClassDeclaration {
        ModelClassDeclaration(Picture.self, properties: [.attribute(\.pixels), .attribute(\.serial, options: .unique)])
    }
}

final class Clip: Asset {
    final var frames = 0
    override class var declaration: ModelClassDeclaration { ModelClassDeclaration(Clip.self, properties: [.attribute(\.frames)]) }
}

extension ModelClassHierarchyTests {
    static func assets() throws -> StoreContainer {
        try StoreContainer(
            schema: try Schema(models: Asset.self, Picture.self, Clip.self),
            configurations: [.init(name: "Assets", entityNames: nil, isStoredInMemoryOnly: true)])
    }

    static func picture(_ code: String, pixels: Int, serial: String, note: String = "") -> Asset {
        let picture = Picture()
        (picture.code, picture.pixels, picture.serial, picture.note) = (code, pixels, serial, note)
        return picture
    }

    @Test func anInsertHeldAsTheRootWithARootUniqueValueUpsertsIntoTheRegisteredSubclassInstance() throws {
        let container = try Self.assets()
        let context = ModelContext(container)
        let first = Self.picture("A", pixels: 1, serial: "s1", note: "kept")
        try context.insert(first)
        try context.save()
        let second = Self.picture("A", pixels: 2, serial: "s2")
        try context.insert(second)
        try context.save()
        #expect(second.persistentModelID == first.persistentModelID)
        let fetched = try context.fetch(FetchDescriptor<Asset>())
        #expect(fetched.count == 1 && fetched.first === first)
        #expect(((first as? Picture)?.pixels, (first as? Picture)?.serial) == (2, "s2"))
        let fresh = try #require(try ModelContext(container).fetch(FetchDescriptor<Asset>()).first as? Picture)
        #expect((fresh.pixels, fresh.serial, fresh.code) == (2, "s2", "A"))
        // The retired instance saves nothing.
        (second as? Picture)?.pixels = 3
        #expect(throws: DataStoreError.self) { try context.update(second) }
    }

    @Test func anInsertWithASubclassUniqueValueUpsertsIntoTheStoredObjectFetchedAsTheRoot() throws {
        let container = try Self.assets()
        let context = ModelContext(container)
        try context.insert(Self.picture("A", pixels: 1, serial: "s1"))
        try context.save()
        let other = ModelContext(container)
        let held = try #require(try other.fetch(FetchDescriptor<Asset>()).first)
        try other.insert(Self.picture("B", pixels: 5, serial: "s1"))
        try other.save()
        #expect(try other.fetch(FetchDescriptor<Asset>()).map { $0 === held } == [true])
        #expect((held.code, (held as? Picture)?.pixels) == ("B", 5))
    }

    @Test func anInsertOfAnotherSubclassWithARootUniqueValueIsRefusedAndNothingIsSaved() throws {
        let container = try Self.assets()
        let context = ModelContext(container)
        try context.insert(Self.picture("A", pixels: 1, serial: "s1"))
        try context.save()
        let clip = Clip()
        clip.code = "A"
        try context.insert(clip)
        let error = #expect(throws: DataStoreError.self) { try context.save() }
        #expect(error?.code == .uniqueness)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Asset>()) == 1)
    }

    nonisolated static func isKind<Desired>(_: Desired.Type) -> Predicate<Media> { #Predicate<Media> { $0 is Desired } }
    nonisolated static func castRating<Desired: Media>(_: Desired.Type) -> Predicate<Media> { #Predicate<Media> { ($0 as? Desired)?.rating == 2 } }

    nonisolated static let predicates: [(String, Predicate<Media>)] = [
        ("as? Photo lens !=", #Predicate<Media> { ($0 as? Photo)?.lens != "50mm" }),
        ("!(as? Photo lens ==)", #Predicate<Media> { !(($0 as? Photo)?.lens == "50mm") }),
        ("as? Photo place nil", #Predicate<Media> { ($0 as? Photo)?.place?.name == nil }),
        ("as? Photo place name", #Predicate<Media> { ($0 as? Photo)?.place?.name == "Lisbon" }),
        ("as? Photo title (inherited)", #Predicate<Media> { ($0 as? Photo)?.title == "Harbour" }),
        ("as? Photo width < or Video", #Predicate<Media> { ($0 as? Photo)?.width ?? 9999 < 4500 || $0 is Video }),
        ("is Media (the root)", isKind(Media.self)),
        ("as? Media rating", castRating(Media.self)),
        ("albums with a video", #Predicate<Media> { $0.albums.contains { $0.items.contains { $0 is Video } } }),
        ("not in an album of photos", #Predicate<Media> { !$0.albums.contains { $0.items.allSatisfy { $0 is Photo } } }),
    ]

    @Test(arguments: 0..<predicates.count)
    func moreTypeTestsAndCastsSelectWhatFoundationsEvaluationSelects(_ index: Int) throws {
        let (name, predicate) = Self.predicates[index]
        let home = try MediaHome()
        let context = ModelContext(home.container)
        let objects = try home.fill(context)
        let place = Place()
        place.name = "Lisbon"
        (objects[0] as? Photo)?.place = place
        try context.save()
        let expected = try objects.filter { try predicate.evaluate($0) }.map(\.title).sorted()
        let descriptor = FetchDescriptor<Media>(predicate: predicate, sortBy: [SortDescriptor(\.title)])
        #expect(try ModelContext(home.container).fetch(descriptor).map(\.title) == expected, "\(name)")
    }
}

/// Three levels: a concrete middle class with a subclass of its own.
class Document: ModelObject, InheritableModel {
    final var name = ""
    class var declaration: ModelClassDeclaration { ModelClassDeclaration(Document.self, properties: [.attribute(\.name)]) }
}

class Report: Document {
    final var pages = 0
    override class var declaration: ModelClassDeclaration { ModelClassDeclaration(Report.self, properties: [.attribute(\.pages)]) }
}

final class Audit: Report {
    final var auditor = ""
    override class var declaration: ModelClassDeclaration { ModelClassDeclaration(Audit.self, properties: [.attribute(\.auditor)]) }
}

extension ModelClassHierarchyTests {
    @Test func aThirdLevelClassHeldAsTheRootSavesEveryLevelAndFetchesOfEachLevelMakeIt() throws {
        let container = try StoreContainer(
            schema: try Schema(models: Document.self, Report.self, Audit.self),
            configurations: [.init(name: "Documents", entityNames: nil, isStoredInMemoryOnly: true)])
        let context = ModelContext(container)
        let audit = Audit()
        (audit.name, audit.pages, audit.auditor) = ("Q3", 12, "Kim")
        let report = Report()
        (report.name, report.pages) = ("Plan", 3)
        let held: [Document] = [audit, report]
        for document in held { try context.insert(document) }
        try context.save()
        held[0].name = "Q3 final"
        (held[0] as? Report)?.pages = 13
        try context.save()
        #expect(Audit.properties.map(\.name) == ["name", "pages", "auditor"])

        let fresh = ModelContext(container)
        let documents = try fresh.fetch(FetchDescriptor<Document>(sortBy: [SortDescriptor(\.name)]))
        #expect(documents.map { String(describing: type(of: $0)) } == ["Report", "Audit"])
        let fetched = try #require(documents.last as? Audit)
        #expect((fetched.name, fetched.pages, fetched.auditor) == ("Q3 final", 13, "Kim"))
        let reports = try fresh.fetch(FetchDescriptor<Report>(predicate: #Predicate { $0.pages > 5 && $0.name != "" }))
        #expect(reports.count == 1 && reports[0] === fetched)
        let isAudit = #Predicate<Document> { ($0 as? Report)?.pages ?? 0 > 1 && !($0 is Audit) }
        #expect(try fresh.fetch(FetchDescriptor(predicate: isAudit)).map(\.name) == ["Plan"])
    }
}

/// A hierarchy whose entities are named otherwise than its classes.
class Artwork: ModelObject, InheritableModel {
    final var name = ""
    class var entityName: String { "ArtworkEntity" }
    class var declaration: ModelClassDeclaration { ModelClassDeclaration(Artwork.self, properties: [.attribute(\.name)]) }
}

final class Painting: Artwork {
    final var medium = ""
    override class var entityName: String { "PaintingEntity" }
    override class var declaration: ModelClassDeclaration { ModelClassDeclaration(Painting.self, properties: [.attribute(\.medium)]) }
}

extension ModelClassHierarchyTests {
    @Test func classesThatOverrideTheRootsEntityNameAreSavedAndFetchedUnderTheirOwnNames() throws {
        let schema = try Schema(models: Artwork.self, Painting.self)
        #expect(schema.entities.map(\.name) == ["ArtworkEntity", "PaintingEntity"])
        let container = try StoreContainer(schema: schema, configurations: [.init(name: "Art", entityNames: nil, isStoredInMemoryOnly: true)])
        let context = ModelContext(container)
        let painting = Painting()
        (painting.name, painting.medium) = ("Haystacks", "oil")
        let held: Artwork = painting
        try context.insert(held)
        try context.save()
        #expect(held.persistentModelID.entityName == "PaintingEntity")
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Artwork>(predicate: #Predicate { $0 is Painting }))
        #expect(fetched.map { ($0 as? Painting)?.medium } == ["oil"])
    }
}
