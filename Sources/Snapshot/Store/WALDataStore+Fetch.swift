extension WALDataStore {
    /// The objects the descriptor selects, in its order, with the targets of the relationships
    /// to prefetch in ``DataStoreFetchResult/relatedSnapshots``. Sees every save that returned
    /// before it began, and no part of a save that had not.
    ///
    /// - Throws: ``DataStoreError``: `unknownEntity`, `invalidRequest` (a negative limit or
    ///   offset), and what ``PredicateEvaluator/check(_:against:)`` refuses in the predicate, the
    ///   sort (a sort by a to-many relationship is `invalidPredicate`) and the paths to prefetch
    ///   (`unknownProperty`, `invalidPredicate`, `typeMismatch`, naming the entity and property)
    ///   — all before any record is read, so on an empty store as on a full one, whichever
    ///   indexes exist; `engine` when a read fails or a record does not decode. (The same checks
    ///   apply to ``fetchCount(_:)``, ``fetchIdentifiers(_:)`` and ``delete(_:)``.)
    public func fetch(_ request: DataStoreFetchRequest) throws -> DataStoreFetchResult<DefaultSnapshot> {
        try gate.withLock { try Self.engineCall("Fetching") { try FetchRunner(mapper: mapper, counts: counts).fetch(request) } }
    }

    /// How many objects the descriptor selects (offset and limit applied): without predicate,
    /// from the store's per-entity counts alone (no record is read); else without rebuilding
    /// to-many arrays the predicate does not read.
    public func fetchCount(_ request: DataStoreFetchRequest) throws -> Int {
        try gate.withLock { try Self.engineCall("Fetching") { try FetchRunner(mapper: mapper, counts: counts).count(request.descriptor) } }
    }

    /// The identifiers of the objects the descriptor selects, in its order: from the record
    /// keys alone when there is no predicate or sort (and no sub-entity to tell apart), else
    /// without rebuilding to-many arrays the predicate does not read.
    public func fetchIdentifiers(_ request: DataStoreFetchRequest) throws -> [PersistentIdentifier] {
        try gate.withLock { try Self.engineCall("Fetching") { try FetchRunner(mapper: mapper, counts: counts).identifiers(request.descriptor) } }
    }
}
