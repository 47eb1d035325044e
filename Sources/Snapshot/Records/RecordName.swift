import Foundation

/// CloudKit record names, `<Entity>_<UUID>`: how a record refers to another (a to-one field,
/// a `CDMR` join record). The entity is the object's concrete entity; the UUID its primary key
/// in upper case.
enum RecordName {
    static func of(_ id: PersistentIdentifier) -> String {
        "\(id.entityName)_\(id.primaryKey)"
    }

    static func of(entity: String, primaryKey: UUID) -> String {
        "\(entity)_\(primaryKey.uuidString)"
    }

    /// The entity and primary key a record name spells, or `nil` when it is not one.
    static func parse(_ name: String) -> (entity: String, primaryKey: UUID)? {
        guard let underscore = name.lastIndex(of: "_") else { return nil }
        let entity = String(name[..<underscore])
        guard !entity.isEmpty, let uuid = UUID(uuidString: String(name[name.index(after: underscore)...])) else { return nil }
        return (entity, uuid)
    }
}
