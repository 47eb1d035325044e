extension WALDataStore {
    /// The objects the descriptor selects, in its order, with the targets of the relationships
    /// to prefetch in ``DataStoreFetchResult/relatedSnapshots``. Sees every save that returned
    /// before it began, and no part of a save that had not.
    ///
    /// - Throws: ``DataStoreError``: `unknownEntity`, `invalidRequest` (a negative limit or
    ///   offset), the predicate's errors (``PredicateEvaluator``), `engine` when a read fails or a
    ///   record does not decode.
    public func fetch(_ request: DataStoreFetchRequest) throws -> DataStoreFetchResult<DefaultSnapshot> {
        try gate.withLock { try Self.engineCall("Fetching") { try FetchRunner(mapper: mapper).fetch(request) } }
    }

    /// How many objects the descriptor selects (offset and limit applied), without rebuilding
    /// to-many arrays the predicate does not read.
    public func fetchCount(_ request: DataStoreFetchRequest) throws -> Int {
        try fetchIdentifiers(request).count
    }

    /// The identifiers of the objects the descriptor selects, in its order: from the record
    /// keys alone when there is no predicate or sort (and no sub-entity to tell apart), else
    /// without rebuilding to-many arrays the predicate does not read.
    public func fetchIdentifiers(_ request: DataStoreFetchRequest) throws -> [PersistentIdentifier] {
        try gate.withLock { try Self.engineCall("Fetching") { try FetchRunner(mapper: mapper).identifiers(request.descriptor) } }
    }
}
