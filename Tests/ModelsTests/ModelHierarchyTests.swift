import Foundation
import Models
import Snapshot
import Testing

/// Class models in a hierarchy (`Media`, `Photo: Media`, `Video: Media`): the schema they
/// declare, fetches of the root that make each stored subclass, saves through root references,
/// and `is` / `as?` predicates run in the store, each compared with Foundation's own evaluation.
@StoreActor @Suite struct ModelHierarchyTests {
    let home: MediaHome
    let context: ModelContext

    init() throws {
        home = try MediaHome()
        context = ModelContext(home.container)
    }

    @Test func subclassesAreSubEntitiesOfTheirSuperclassAndInheritItsProperties() throws {
        let media = try #require(MediaHome.schema.entities.first { $0.name == "Media" })
        let photo = try #require(MediaHome.schema.entities.first { $0.name == "Photo" })
        #expect(media.isAbstract && media.superentityName == nil)
        #expect(!photo.isAbstract && photo.superentityName == "Media")
        #expect(photo.attributes.map(\.name) == ["lens", "width"] && photo.relationships.map(\.name) == ["place"])
        #expect(Photo.properties.map(\.name) == ["title", "rating", "albums", "lens", "width", "place"])
        #expect(Video.properties.map(\.name) == ["title", "rating", "albums", "seconds"])
        #expect(Media.properties.map(\.name) == ["title", "rating", "albums"])
        // An inherited property's key path from the subclass reads the same property.
        let photoObject = Photo()
        photoObject.title = "Harbour"
        #expect(Photo.properties[0].value(of: photoObject) == .string("Harbour"))
    }

    @Test func aFetchOfTheRootMakesAnObjectOfEachStoredSubclassOnePerIdentifier() throws {
        let saved = try home.fill(context)
        let fresh = ModelContext(home.container)
        let all = try fresh.fetch(FetchDescriptor<Media>(sortBy: [SortDescriptor(\.title)]))
        #expect(all.map(\.title) == ["Alley", "Beach", "Crowd", "Harbour", "Storm"])
        #expect(all.map { String(describing: type(of: $0)) } == ["Photo", "Video", "Photo", "Photo", "Video"])
        #expect((all[0] as? Photo)?.lens == "35mm" && (all[1] as? Video)?.seconds == 12)
        #expect(Set(all.map(\.persistentModelID)) == Set(saved.map(\.persistentModelID)))
        // The same instances, fetched as the subclass.
        let photos = try fresh.fetch(FetchDescriptor<Photo>(sortBy: [SortDescriptor(\.title)]))
        #expect(photos.count == 3 && photos[0] === all[0] && photos[1] === all[2])
        // A to-many of the root holds subclass instances, the registered ones.
        let trip = try #require(try fresh.fetch(FetchDescriptor<Album>(predicate: #Predicate { $0.name == "Trip" })).first)
        #expect(trip.items.contains { $0 === all[3] } && trip.items.contains { $0 === all[4] })
        #expect(all[3].albums.first === trip)
        // The saving context's own instances stay the ones it fetches.
        #expect(try context.fetch(FetchDescriptor<Media>()).allSatisfy { fetched in saved.contains { $0 === fetched } })
    }

    @Test func aSubclassInstanceHeldAsTheRootSavesItsOwnProperties() throws {
        let media: Media = MediaHome.photo("Harbour", rating: 4, lens: "50mm", width: 4000)
        try context.insert(media)
        try context.save()
        (media as? Photo)?.lens = "85mm"
        media.rating = 1
        #expect(context.hasChanges)
        try context.save()
        let fresh = ModelContext(home.container)
        let fetched = try #require(try fresh.fetch(FetchDescriptor<Media>()).first as? Photo)
        #expect((fetched.title, fetched.rating, fetched.lens, fetched.width) == ("Harbour", 1, "85mm", 4000))
        // Written back with update(_:) through a root reference too.
        let asMedia: Media = fetched
        fetched.width = 10
        try fresh.update(asMedia)
        try fresh.save()
        #expect(try ModelContext(home.container).fetch(FetchDescriptor<Photo>()).map(\.width) == [10])
    }

    @Test func aSubclassesOwnRelationshipKeepsItsInverseInStepThroughARootReference() throws {
        let place = Place()
        place.name = "Lisbon"
        let media: Media = MediaHome.photo("Harbour", rating: 4, lens: "50mm", width: 4000)
        (media as? Photo)?.place = place
        try context.insert(media)
        #expect(place.photos.first === media)
        try context.save()
        let other: Media = MediaHome.photo("Alley", rating: 2, lens: "35mm", width: 3000)
        try context.insert(other)
        try context.save()
        (other as? Photo)?.place = place
        try context.processPendingChanges()
        #expect(place.photos.count == 2 && place.photos.last === other)
        try context.save()
        let fetched = try #require(try ModelContext(home.container).fetch(FetchDescriptor<Place>()).first)
        #expect(fetched.photos.map(\.title).sorted() == ["Alley", "Harbour"])
    }

    @Test func deletesOfSubclassObjectsAndCascadesFromARootToManyRemoveThem() throws {
        let saved = try home.fill(context)
        try context.delete(saved[2])  // Alley, the one item of "Photos only"
        try context.save()
        let albums = try context.fetch(FetchDescriptor<Album>(sortBy: [SortDescriptor(\.name)]))
        #expect(albums.map(\.name) == ["Photos only", "Trip"] && albums[0].items.isEmpty)
        try context.delete(albums[1])  // cascades to Harbour and Storm
        try context.save()
        let left = try ModelContext(home.container).fetch(FetchDescriptor<Media>(sortBy: [SortDescriptor(\.title)]))
        #expect(left.map(\.title) == ["Beach", "Crowd"])
        #expect(try context.fetchCount(FetchDescriptor<Photo>()) == 1)
    }

    // Made in generic code: written with the concrete types, the compiler warns that a test
    // against an unrelated type always fails.
    nonisolated static func isKind<Desired>(_: Desired.Type) -> Predicate<Media> { #Predicate<Media> { $0 is Desired } }

    nonisolated static let predicates: [(String, Predicate<Media>)] = [
        ("is Photo", #Predicate<Media> { $0 is Photo }),
        ("!(is Photo)", #Predicate<Media> { !($0 is Photo) }),
        ("as? Photo lens", #Predicate<Media> { ($0 as? Photo)?.lens == "50mm" }),
        ("as? Photo width ??", #Predicate<Media> { ($0 as? Photo)?.width ?? 0 > 3500 }),
        ("as? Video or rating", #Predicate<Media> { ($0 as? Video)?.seconds ?? 0 > 60 || $0.rating == 2 }),
        ("is Video and rating", #Predicate<Media> { $0 is Video && $0.rating > 3 }),
        ("in an album", #Predicate<Media> { $0.albums.contains { $0.name == "Trip" } && $0 is Photo }),
        ("is Album (unrelated model)", isKind(Album.self)),
    ]

    @Test(arguments: 0..<predicates.count)
    func typeTestsAndCastsSelectWhatFoundationsEvaluationSelects(_ index: Int) throws {
        let (name, predicate) = Self.predicates[index]
        let objects = try home.fill(context)
        let expected = try objects.filter { try predicate.evaluate($0) }.map(\.title).sorted()
        let descriptor = FetchDescriptor<Media>(predicate: predicate, sortBy: [SortDescriptor(\.title)])
        let fresh = ModelContext(home.container)
        #expect(try fresh.fetch(descriptor).map(\.title) == expected, "\(name)")
        #expect(try fresh.fetchCount(descriptor) == expected.count, "\(name)")
        #expect(try context.fetch(descriptor).map(\.title) == expected, "\(name), in the context that saved them")
    }

    @Test func typeTestsAndCastsOfAToManyOfTheRootSelectWhatFoundationsEvaluationSelects() throws {
        try home.fill(context)
        let albums = try context.fetch(FetchDescriptor<Album>())
        let predicates = [
            #Predicate<Album> { $0.items.contains { $0 is Video } },
            #Predicate<Album> { $0.items.contains { ($0 as? Photo)?.lens == "35mm" } },
            #Predicate<Album> { $0.items.allSatisfy { $0 is Photo } },
        ]
        for predicate in predicates {
            let expected = try albums.filter { try predicate.evaluate($0) }.map(\.name).sorted()
            #expect(
                try ModelContext(home.container).fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.name)])).map(\.name)
                    == expected)
        }
        #expect(try ModelContext(home.container).fetchCount(FetchDescriptor(predicate: predicates[0])) == 1)
    }

    @Test func anInheritedPropertyReadFromTheSubclassIsTheSuperclasssProperty() throws {
        let objects = try home.fill(context)
        let predicate = #Predicate<Photo> { $0.title != "Crowd" && $0.lens == "50mm" || $0.rating < 3 }
        let expected = try objects.compactMap { $0 as? Photo }.filter { try predicate.evaluate($0) }.map(\.title).sorted { $0 > $1 }
        let descriptor = FetchDescriptor<Photo>(predicate: predicate, sortBy: [SortDescriptor(\.title, order: .reverse)])
        #expect(try ModelContext(home.container).fetch(descriptor).map(\.title) == expected)
        #expect(expected == ["Harbour", "Alley"])
    }

    @Test func aTypeTestForATypeThatIsNotAModelIsRefusedNamingIt() {
        let error = #expect(throws: PredicateTranslationError.self) { try FetchPredicate(Self.isKind(String.self)) }
        #expect(error?.code == .unsupportedExpression)
        #expect(error?.message.contains("String is not a model type") == true)
    }
}

/// The rules a hierarchy's declarations follow, each refused with an error a program can switch on.
@StoreActor @Suite struct ModelHierarchyDeclarationTests {
    @Test func aSubclassThatRedeclaresAnInheritedPropertyNameIsRefused() {
        let error = #expect(throws: DataStoreError.self) { try Schema(models: Media.self, Poster.self, Album.self) }
        #expect(error?.code == .invalidSchema)
        #expect(error?.entityName == "Poster" && error?.propertyName == "title")
    }

    @Test func aSubclassStoredPropertyItsDeclarationLeavesOutIsRefused() {
        let error = #expect(throws: DataStoreError.self) { try Schema(models: Media.self, Sketch.self, Album.self) }
        #expect(error?.code == .invalidSchema)
        #expect(error?.entityName == "Sketch" && error?.propertyName == "strokes")
        // A subclass's transient property is neither saved nor refused.
        #expect(throws: Never.self) { try Schema(models: Media.self, Video.self, Album.self) }
        #expect(Video.properties.allSatisfy { $0.name != "thumbnailCache" })
    }

    @Test func aSubclassThatIsNotInTheSchemaCannotBeInsertedAndNothingIsStaged() throws {
        let home = try MediaHome(schema: try Schema(models: Media.self, Photo.self, Album.self, Place.self))
        let context = ModelContext(home.container)
        let album = Album()
        album.items = [MediaHome.photo("Harbour", rating: 1, lens: "50mm", width: 1), MediaHome.video("Storm", rating: 1, seconds: 1)]
        let error = #expect(throws: ContainerError.self) { try context.insert(album) }
        #expect(error?.code == .unknownEntity && error?.entityName == "Video")
        #expect(
            !context.storeContext.hasChanges,
            "\(context.storeContext.insertedIdentifiers) \(context.storeContext.changedIdentifiers) \(context.storeContext.deletedIdentifiers)")
        #expect(!context.hasChanges)
    }

    @Test func anInstanceOfTheAbstractRootCannotBeInserted() throws {
        let context = ModelContext(try MediaHome().container)
        let error = #expect(throws: DataStoreError.self) { try context.insert(Media()) }
        #expect(error?.code == .invalidRequest && error?.entityName == "Media")
        #expect(!context.hasChanges)
    }
}

/// A hierarchy whose subclass is never listed in `Schema(models:)` (its schema is made from
/// entities), so a fetch of the root cannot know which class a stored `Circle` is.
class Shape: ModelObject, InheritableModel {
    final var name = ""
    class var declaration: ModelClassDeclaration { ModelClassDeclaration(Shape.self, properties: [.attribute(\.name)]) }
}

final class Circle: Shape {
    final var radius = 0
    override class var declaration: ModelClassDeclaration { ModelClassDeclaration(Circle.self, properties: [.attribute(\.radius)]) }
}

extension ModelHierarchyDeclarationTests {
    @Test func aStoredObjectOfASubclassNoSchemaOfModelsListedIsRefusedByAFetchOfTheRoot() throws {
        let schema = try Schema([Shape.entity, Circle.entity])
        let home = try MediaHome(schema: schema)
        let context = ModelContext(home.container)
        try context.storeContext.insert(
            DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Circle"), values: ["name": .string("ring"), "radius": .int(2)]))
        try context.save()
        let error = #expect(throws: DataStoreError.self) { try ModelContext(home.container).fetch(FetchDescriptor<Shape>()) }
        #expect(error?.code == .unknownEntity && error?.entityName == "Circle")
        #expect(error?.message.contains("list the class of Circle there") == true)
        // Fetched as its own class, it is made.
        #expect(try ModelContext(home.container).fetch(FetchDescriptor<Circle>()).map(\.radius) == [2])
    }
}

/// A subclass that declares, under another Swift name, a property its superclass declares.
final class Poster: Media {
    final var caption = ""
    override class var declaration: ModelClassDeclaration { ModelClassDeclaration(Poster.self, properties: [.attribute(\.caption, "title")]) }
}

/// A subclass with a stored property it does not declare.
final class Sketch: Media {
    final var strokes = 0
}
