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
@StoreActor @Suite struct ModelHierarchyReviewTests {
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
