/// The values of one object as a store reads and writes them: what crosses between the model
/// layer and a ``DataStore``.
///
/// A snapshot is a value: `Sendable` and `Codable`, never an object with identity.
public protocol DataStoreSnapshot: Codable, Sendable {
    /// The identity of the object these values belong to.
    var persistentIdentifier: PersistentIdentifier { get }

    /// The same values under `persistentIdentifier`, with every reference to an identifier that
    /// is a key of `remappedIdentifiers` replaced by its value.
    ///
    /// A store calls this when a save inserts objects: each inserted snapshot is copied under
    /// its permanent identifier, and the map (every temporary identifier of the save to its
    /// permanent one) rewrites references among the objects inserted together. `nil` rewrites
    /// nothing.
    func copy(persistentIdentifier: PersistentIdentifier, remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier]?) -> Self
}

extension DataStoreSnapshot {
    /// The same values under `persistentIdentifier`, references unchanged.
    public func copy(persistentIdentifier: PersistentIdentifier) -> Self {
        copy(persistentIdentifier: persistentIdentifier, remappedIdentifiers: nil)
    }
}
