import Foundation
import Models
import Snapshot

/// A hierarchy of class models: an abstract `Media` with two subclasses, and albums holding
/// media of either kind.
class Media: ModelObject, InheritableModel {
    final var title = ""
    final var rating = 0
    final var albums: [Album] = []
    class var declaration: ModelClassDeclaration {
        ModelClassDeclaration(
            Media.self, isAbstract: true, properties: [.attribute(\.title), .attribute(\.rating), .toMany(\.albums, inverse: \Album.items)])
    }
}

final class Photo: Media {
    final var lens = ""
    final var width = 0
    final var place: Place?
    override class var declaration: ModelClassDeclaration {
        ModelClassDeclaration(Photo.self, properties: [.attribute(\.lens), .attribute(\.width), .toOne(\.place, inverse: \Place.photos)])
    }
}

/// Where photos were taken: the target of a relationship only a subclass declares.
final class Place: ModelObject, PersistentModel {
    var name = ""
    var photos: [Photo] = []
    static let properties: [ModelProperty<Place>] = [.attribute(\.name), .toMany(\.photos, inverse: \Photo.place)]
}

final class Video: Media {
    final var seconds = 0
    /// Not saved.
    final var thumbnailCache = ""
    override class var declaration: ModelClassDeclaration {
        ModelClassDeclaration(Video.self, properties: [.attribute(\.seconds)], transientProperties: [\.thumbnailCache])
    }
}

final class Album: ModelObject, PersistentModel {
    var name = ""
    var items: [Media] = []
    static let properties: [ModelProperty<Album>] = [.attribute(\.name), .toMany(\.items, inverse: \Media.albums, deleteRule: .cascade)]
}

/// A container of the media model in memory.
struct MediaHome {
    static let schema: Schema = {
        do { return try Schema(models: Media.self, Photo.self, Video.self, Album.self, Place.self) } catch { preconditionFailure("\(error)") }
    }()

    let container: StoreContainer

    init(schema: Schema = MediaHome.schema) throws {
        container = try StoreContainer(schema: schema, configurations: [.init(name: "Media", entityNames: nil, isStoredInMemoryOnly: true)])
    }

    /// Two photos, two videos, and an album of one of each, saved.
    @discardableResult
    func fill(_ context: ModelContext) throws -> [Media] {
        let media: [Media] = [
            Self.photo("Harbour", rating: 4, lens: "50mm", width: 4000), Self.video("Storm", rating: 5, seconds: 90),
            Self.photo("Alley", rating: 2, lens: "35mm", width: 3000), Self.video("Beach", rating: 3, seconds: 12),
            Self.photo("Crowd", rating: 5, lens: "50mm", width: 6000),
        ]
        let album = Album()
        album.name = "Trip"
        album.items = [media[0], media[1]]
        let empty = Album()
        empty.name = "Photos only"
        empty.items = [media[2]]
        for object in media { try context.insert(object) }
        try context.insert(album)
        try context.insert(empty)
        try context.save()
        return media
    }

    /// A photo held as a `Media`.
    static func photo(_ title: String, rating: Int, lens: String, width: Int) -> Media {
        let photo = Photo()
        (photo.title, photo.rating, photo.lens, photo.width) = (title, rating, lens, width)
        return photo
    }

    static func video(_ title: String, rating: Int, seconds: Int) -> Media {
        let video = Video()
        (video.title, video.rating, video.seconds) = (title, rating, seconds)
        return video
    }
}
