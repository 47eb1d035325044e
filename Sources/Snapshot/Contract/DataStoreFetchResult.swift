/// A ``DataStore``'s answer to a fetch.
public struct DataStoreFetchResult<SnapshotType: DataStoreSnapshot>: Sendable {
    /// The descriptor answered.
    public var descriptor: FetchDescriptor
    /// The objects the descriptor selects, in its order.
    public var fetchedSnapshots: [SnapshotType]
    /// Other objects the caller will want (the targets of the prefetched relationships), by
    /// identifier.
    public var relatedSnapshots: [PersistentIdentifier: SnapshotType]

    /// A result for `descriptor`.
    public init(descriptor: FetchDescriptor, fetchedSnapshots: [SnapshotType], relatedSnapshots: [PersistentIdentifier: SnapshotType] = [:]) {
        self.descriptor = descriptor
        self.fetchedSnapshots = fetchedSnapshots
        self.relatedSnapshots = relatedSnapshots
    }
}
