/// A persistence backend for snapshots: SwiftData's custom-data-store contract.
///
/// A store is a reference type, safe to use from any thread (`Sendable`). Each ``save(_:)`` is
/// all or nothing. A store made by this package never answers
/// ``DataStoreError/Code/preferInMemoryFilter`` or ``DataStoreError/Code/preferInMemorySort``:
/// it evaluates predicates and sorts itself, as ``PredicateEvaluator`` specifies.
///
/// **Async.** The `async` variants (``save(_:)-async``, ``fetch(_:)-async`` and the rest) are
/// requirements with default implementations that call the synchronous ones on the calling
/// task. Being requirements, they dispatch dynamically: a store that does I/O implements them
/// to suspend instead of blocking a cooperative thread, and generic code gets that
/// implementation.
public protocol DataStore: AnyObject, Sendable {
    /// What a store is made from.
    associatedtype Configuration: DataStoreConfiguration where Configuration.Store == Self
    /// The snapshots it reads and writes.
    associatedtype SnapshotType: DataStoreSnapshot

    /// The configuration the store was made from.
    var configuration: Configuration { get }
    /// The store's identifier: the ``PersistentIdentifier/storeIdentifier`` of its objects.
    var identifier: String { get }
    /// The entities it holds.
    var schema: Schema { get }

    /// Applies the request's inserts, updates and deletes, all or none.
    ///
    /// - Returns: the permanent identifier of every insert, and the other objects changed.
    func save(_ request: DataStoreSaveChangesRequest<SnapshotType>) throws -> DataStoreSaveChangesResult<SnapshotType>
    /// The objects the request's descriptor selects, in its order, with related objects.
    func fetch(_ request: DataStoreFetchRequest) throws -> DataStoreFetchResult<SnapshotType>
    /// How many objects the descriptor selects (with its offset and limit applied).
    func fetchCount(_ request: DataStoreFetchRequest) throws -> Int
    /// The identifiers of the objects the descriptor selects, in its order.
    func fetchIdentifiers(_ request: DataStoreFetchRequest) throws -> [PersistentIdentifier]
    /// Removes every object; the store stays usable and empty.
    func erase() throws

    /// As ``save(_:)``, for async callers.
    func save(_ request: DataStoreSaveChangesRequest<SnapshotType>) async throws -> DataStoreSaveChangesResult<SnapshotType>
    /// As ``fetch(_:)``, for async callers.
    func fetch(_ request: DataStoreFetchRequest) async throws -> DataStoreFetchResult<SnapshotType>
    /// As ``fetchCount(_:)``, for async callers.
    func fetchCount(_ request: DataStoreFetchRequest) async throws -> Int
    /// As ``fetchIdentifiers(_:)``, for async callers.
    func fetchIdentifiers(_ request: DataStoreFetchRequest) async throws -> [PersistentIdentifier]
    /// As ``erase()``, for async callers.
    func erase() async throws
}

/// A store that deletes by predicate, as SwiftData's `DataStoreBatching`.
public protocol DataStoreBatching: DataStore {
    /// Deletes every object the request selects, in one save, applying the schema's delete
    /// rules.
    func delete(_ request: DataStoreBatchDeleteRequest) throws
    /// As ``delete(_:)``, for async callers.
    func delete(_ request: DataStoreBatchDeleteRequest) async throws
}
