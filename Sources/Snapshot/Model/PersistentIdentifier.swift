import Foundation

/// The identity of one object: which store made it, of which entity, under which primary key.
///
/// A **permanent** identifier has a ``storeIdentifier``; it is made by a store when an object is
/// first saved (``identifier(for:entityName:primaryKey:)``) and never changes. A **temporary**
/// identifier (``temporary(entityName:)``) has none: it names an object made in memory and not
/// yet saved, and a store replaces it in the save that inserts the object
/// (``DataStoreSaveChangesResult/remappedIdentifiers``). Stores never persist a temporary
/// identifier.
///
/// Identifiers are values: equal when their three parts are equal, hashable, `Sendable` (the
/// thing to pass across isolation boundaries instead of an object), and `Codable` — a decoded
/// identifier equals the original, temporary or not. Their order (``Comparable``) is by store
/// identifier (temporary ones first), then entity name, then primary key; it exists so that
/// sorts and encodings are deterministic and means nothing else.
public struct PersistentIdentifier: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// The primary key of an object within its store and entity.
    public enum PrimaryKey: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
        /// A UUID: what stores of this package make. A ``WALDataStore`` gives a new object a
        /// time-ordered (version 7) UUID (FORMAT.md section 18, "Keys"); objects saved before
        /// keep their random (version 4) ones. Any 16 bytes are a valid key: no version is
        /// checked, and the order of keys means nothing to rely on.
        case uuid(UUID)
        /// A string chosen by the store.
        case string(String)
        /// An integer chosen by the store (as Core Data's SQLite store's `Z_PK`).
        case integer(Int64)

        public static func < (lhs: PrimaryKey, rhs: PrimaryKey) -> Bool {
            switch (lhs, rhs) {
            case let (.uuid(a), .uuid(b)): return a.ordering(comparedTo: b) < 0
            case let (.string(a), .string(b)): return CanonicalStringOrder.compare(a, b) < 0
            case let (.integer(a), .integer(b)): return a < b
            default: return lhs.rank < rhs.rank
            }
        }

        private var rank: Int {
            switch self {
            case .uuid: 0
            case .string: 1
            case .integer: 2
            }
        }

        /// The key as text: a UUID's uppercase string, the string itself, or the integer's digits.
        public var description: String {
            switch self {
            case .uuid(let uuid): uuid.uuidString
            case .string(let string): string
            case .integer(let integer): String(integer)
            }
        }
    }

    /// The identifier of the store that made this identifier, or `nil` for a temporary one.
    public let storeIdentifier: String?
    /// The name of the object's entity (its concrete entity, not its root).
    public let entityName: String
    /// The object's primary key.
    public let primaryKey: PrimaryKey

    private init(storeIdentifier: String?, entityName: String, primaryKey: PrimaryKey) {
        self.storeIdentifier = storeIdentifier
        self.entityName = entityName
        self.primaryKey = primaryKey
    }

    /// A permanent identifier for an object of `entityName` in the store `storeIdentifier`.
    ///
    /// - Throws: ``DataStoreError/Code/invalidRequest`` when the store identifier or the entity
    ///   name is empty.
    public static func identifier(
        for storeIdentifier: String, entityName: String, primaryKey: PrimaryKey
    ) throws -> PersistentIdentifier {
        guard !storeIdentifier.isEmpty else {
            throw DataStoreError(
                .invalidRequest, "A permanent identifier needs a non-empty store identifier; pass the store's `identifier`.",
                entityName: entityName)
        }
        guard !entityName.isEmpty else {
            throw DataStoreError(.invalidRequest, "An identifier needs a non-empty entity name; pass the name the schema declares.")
        }
        return PersistentIdentifier(storeIdentifier: storeIdentifier, entityName: entityName, primaryKey: primaryKey)
    }

    /// A permanent identifier whose primary key is a UUID, as the stores of this package make.
    ///
    /// - Throws: as ``identifier(for:entityName:primaryKey:)-(_,_,PrimaryKey)``.
    public static func identifier(for storeIdentifier: String, entityName: String, primaryKey: UUID) throws -> PersistentIdentifier {
        try identifier(for: storeIdentifier, entityName: entityName, primaryKey: .uuid(primaryKey))
    }

    /// A permanent identifier whose primary key is a string.
    ///
    /// - Throws: as ``identifier(for:entityName:primaryKey:)-(_,_,PrimaryKey)``.
    public static func identifier(for storeIdentifier: String, entityName: String, primaryKey: String) throws -> PersistentIdentifier {
        try identifier(for: storeIdentifier, entityName: entityName, primaryKey: .string(primaryKey))
    }

    /// A new temporary identifier for an object of `entityName` not yet saved: no store
    /// identifier and a fresh random (version 4) UUID, so it equals no other identifier. The
    /// save that inserts the object gives it a permanent, time-ordered key.
    public static func temporary(entityName: String) -> PersistentIdentifier {
        PersistentIdentifier(storeIdentifier: nil, entityName: entityName, primaryKey: .uuid(UUID.makeRandom()))
    }

    /// Whether this identifier is temporary (it has no store identifier).
    public var isTemporary: Bool { storeIdentifier == nil }

    /// Hashes the primary key alone (equal identifiers have equal keys): identifiers are
    /// hashed in every dictionary of a save, and the key tells them apart.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(primaryKey)
    }

    public static func < (lhs: PersistentIdentifier, rhs: PersistentIdentifier) -> Bool {
        switch (lhs.storeIdentifier, rhs.storeIdentifier) {
        case (nil, .some): return true
        case (.some, nil): return false
        case let (.some(a), .some(b)) where a != b: return CanonicalStringOrder.compare(a, b) < 0
        default: break
        }
        if lhs.entityName != rhs.entityName { return CanonicalStringOrder.compare(lhs.entityName, rhs.entityName) < 0 }
        return lhs.primaryKey < rhs.primaryKey
    }

    /// `<store>/<entity>/<primary key>`, or `temporary/<entity>/<primary key>`.
    public var description: String {
        "\(storeIdentifier ?? "temporary")/\(entityName)/\(primaryKey)"
    }

    private enum CodingKeys: String, CodingKey {
        case storeIdentifier, entityName, primaryKey
    }

    /// Decodes an identifier encoded by ``encode(to:)``; an empty entity or store name is
    /// refused as corrupted data.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let storeIdentifier = try container.decodeIfPresent(String.self, forKey: .storeIdentifier)
        let entityName = try container.decode(String.self, forKey: .entityName)
        guard !entityName.isEmpty, storeIdentifier?.isEmpty != true else {
            throw DecodingError.dataCorruptedError(
                forKey: .entityName, in: container, debugDescription: "an identifier with an empty entity or store name")
        }
        self.init(
            storeIdentifier: storeIdentifier, entityName: entityName,
            primaryKey: try container.decode(PrimaryKey.self, forKey: .primaryKey))
    }

    /// Encodes the store identifier (absent for a temporary identifier), entity name and
    /// primary key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(storeIdentifier, forKey: .storeIdentifier)
        try container.encode(entityName, forKey: .entityName)
        try container.encode(primaryKey, forKey: .primaryKey)
    }
}
