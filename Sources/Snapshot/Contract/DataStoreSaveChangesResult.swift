/// What a save did beyond what was asked: the permanent identifiers of the inserted objects,
/// and the other objects it changed.
public struct DataStoreSaveChangesResult<SnapshotType: DataStoreSnapshot>: Sendable {
    /// The store that saved.
    public var storeIdentifier: String
    /// Every temporary identifier of the request's inserts → its permanent identifier.
    public var remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier]
    /// Objects the save changed that the request did not hold as they now are (the other side
    /// of a relationship, an upserted object, an object a delete rule changed), with their new
    /// values, for the caller to register again.
    public var snapshotsToReregister: [PersistentIdentifier: SnapshotType]

    /// A result from the store `storeIdentifier`.
    public init(
        for storeIdentifier: String, remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier] = [:],
        snapshotsToReregister: [PersistentIdentifier: SnapshotType] = [:]
    ) {
        self.storeIdentifier = storeIdentifier
        self.remappedIdentifiers = remappedIdentifiers
        self.snapshotsToReregister = snapshotsToReregister
    }
}
