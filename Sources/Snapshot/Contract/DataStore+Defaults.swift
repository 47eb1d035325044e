extension DataStore {
    /// The fetch's objects counted: a store that can count without reading them implements
    /// this itself.
    public func fetchCount(_ request: DataStoreFetchRequest) throws -> Int {
        try fetch(request).fetchedSnapshots.count
    }

    /// The fetch's objects' identifiers: a store that can list them without reading the
    /// objects implements this itself.
    public func fetchIdentifiers(_ request: DataStoreFetchRequest) throws -> [PersistentIdentifier] {
        try fetch(request).fetchedSnapshots.map(\.persistentIdentifier)
    }

    /// Calls the synchronous ``save(_:)`` on the calling task.
    public func save(_ request: DataStoreSaveChangesRequest<SnapshotType>) async throws -> DataStoreSaveChangesResult<SnapshotType> {
        try saveSynchronously(request)
    }

    /// Calls the synchronous ``fetch(_:)`` on the calling task.
    public func fetch(_ request: DataStoreFetchRequest) async throws -> DataStoreFetchResult<SnapshotType> {
        try fetchSynchronously(request)
    }

    /// Calls the synchronous ``fetchCount(_:)`` on the calling task.
    public func fetchCount(_ request: DataStoreFetchRequest) async throws -> Int {
        try fetchCountSynchronously(request)
    }

    /// Calls the synchronous ``fetchIdentifiers(_:)`` on the calling task.
    public func fetchIdentifiers(_ request: DataStoreFetchRequest) async throws -> [PersistentIdentifier] {
        try fetchIdentifiersSynchronously(request)
    }

    /// Calls the synchronous ``erase()`` on the calling task.
    public func erase() async throws {
        try eraseSynchronously()
    }

    // Called from the async variants: in a synchronous context these calls pick the
    // synchronous requirement, not the async one being implemented.
    private func eraseSynchronously() throws { try erase() }
    private func saveSynchronously(_ r: DataStoreSaveChangesRequest<SnapshotType>) throws -> DataStoreSaveChangesResult<SnapshotType> { try save(r) }
    private func fetchSynchronously(_ r: DataStoreFetchRequest) throws -> DataStoreFetchResult<SnapshotType> { try fetch(r) }
    private func fetchCountSynchronously(_ r: DataStoreFetchRequest) throws -> Int { try fetchCount(r) }
    private func fetchIdentifiersSynchronously(_ r: DataStoreFetchRequest) throws -> [PersistentIdentifier] { try fetchIdentifiers(r) }
}

extension DataStoreBatching {
    /// Calls the synchronous ``delete(_:)`` on the calling task.
    public func delete(_ request: DataStoreBatchDeleteRequest) async throws {
        try deleteSynchronously(request)
    }

    private func deleteSynchronously(_ request: DataStoreBatchDeleteRequest) throws { try delete(request) }
}
