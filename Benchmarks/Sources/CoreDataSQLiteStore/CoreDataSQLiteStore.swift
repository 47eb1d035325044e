import Dispatch
import Foundation
import Snapshot
import SQLiteSupport

/// A ``DataStore`` on SQLite laid out as Core Data's SQLite store lays out a model: the
/// benchmarks' stand-in for SwiftData's default store, which does not exist off Apple's
/// platforms.
///
/// **Layout** (``CoreDataLayout``): a table `Z<ENTITY>` per root entity with `Z_PK`, `Z_ENT`,
/// `Z_OPT` and a column per attribute and to-one of every entity of its tree (a sub-entity's
/// objects are rows of its root's table, `Z_ENT` naming their entity; string and URL columns
/// `COLLATE ZCD_NFC`, the package's string order: ``CanonicalCollation``), a join table per
/// many-to-many, an index on every
/// foreign key and one per declared index, an index per uniqueness constraint (each save checks
/// the objects it wrote once all its statements have run),
/// `Z_PRIMARYKEY` (one `Z_MAX` bump per entity and save), `Z_METADATA` (the store's UUID and a
/// binary plist) and `Z_MODELCACHE` (here the schema's JSON, checked at open). Large values of
/// `.externalStorage` attributes go to files under `.<name>_SUPPORT/_EXTERNAL_DATA/`, written
/// before the transaction that refers to them commits.
///
/// **Identifiers** are `x-coredata://<store UUID>/<Entity>/p<Z_PK>` in Core Data; here a
/// ``PersistentIdentifier`` whose store identifier is the store's UUID and whose primary key is
/// ``PersistentIdentifier/PrimaryKey/integer(_:)`` `Z_PK` (``uri(for:)`` spells the URI).
///
/// **Saves** are one SQLite transaction (`BEGIN IMMEDIATE` … `COMMIT`): all of a save or none
/// of it. With ``CoreDataSQLiteConfiguration/Synchronous/full`` a save that returned survives
/// power loss; with `normal` a power loss can take the last saves. Deletes and updates state
/// the result; an insert colliding with a stored object on a unique attribute or constraint,
/// as the save leaves the objects, updates that object (an upsert: its attributes win, a to-one
/// it leaves without a target keeps the stored one, to-manys are united); two inserts with one
/// unique value, and a reference to an object the save deletes, are refused. Delete rules
/// (cascade, nullify, deny) run in the same transaction, on the relationships as the save
/// leaves them, and a to-one without inverse to a deleted object is cleared; uniqueness and
/// relationship counts are checked once every statement has run; updates bump `Z_OPT`. ``DataStoreSaveChangesResult/snapshotsToReregister`` is left empty: Core Data's
/// context updates the other side of a relationship in memory, not from the store.
///
/// **Fetches** are one SQL query (predicate, sort, limit and offset in SQL, by
/// ``PredicateTranslator``), then one query per to-many relationship for all the fetched
/// objects, and one per prefetched relationship.
///
/// Thread safety (`@unchecked Sendable`): the connection, its statement cache and every other
/// mutable state are used only while holding `lock`; the `async` variants run the synchronous
/// calls on a private serial queue, which takes the same lock.
public final class CoreDataSQLiteStore: DataStoreBatching, @unchecked Sendable {
    /// The snapshots it reads and writes.
    public typealias SnapshotType = DefaultSnapshot

    /// The configuration the store was opened with.
    public let configuration: CoreDataSQLiteConfiguration
    /// The store's UUID (`Z_METADATA.Z_UUID`), made at its creation.
    public let identifier: String
    /// The entities it holds.
    public let schema: Schema
    let layout: CoreDataLayout
    let database: SQLiteDatabase
    let files: ExternalDataFiles
    let lock = NSLock()
    private var cache: [String: SQLiteStatement] = [:]
    private let queue = DispatchQueue(label: "CoreDataSQLiteStore")

    /// Opens (creating if needed) the store `configuration` describes.
    ///
    /// - Throws: ``DataStoreError/Code/invalidRequest`` without a schema,
    ///   ``DataStoreError/Code/unsupportedFeature`` for a schema the layout does not implement,
    ///   ``DataStoreError/Code/invalidSchema`` for a database made with another schema, and
    ///   ``DataStoreError/Code/engine`` wrapping SQLite's error.
    public init(_ configuration: CoreDataSQLiteConfiguration) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(.invalidRequest, "A CoreDataSQLiteStore needs a schema; pass one in its configuration.")
        }
        self.configuration = configuration
        self.schema = schema
        self.layout = try CoreDataLayout(schema: schema)
        files = ExternalDataFiles(directory: configuration.externalDataDirectory, sync: configuration.synchronous == .full)
        do {
            try FileManager.default.createDirectory(atPath: configuration.directory, withIntermediateDirectories: true)
        } catch {
            throw DataStoreError(.engine, "The store's directory could not be made; check its parent's permissions.", underlying: error)
        }
        try files.prepare()
        let database = try Self.sqlite("Opening the store") { try SQLiteDatabase(path: configuration.databasePath) }
        self.database = database
        let layout = self.layout
        identifier = try Self.sqlite("Setting the store up") {
            // Core Data's connection pragmas (recursive triggers, WAL, incremental auto-vacuum
            // set before the first table), then what the benchmark gives SQLite.
            try database.execute("PRAGMA recursive_triggers=1")
            try database.execute("PRAGMA auto_vacuum=2")
            try database.execute("PRAGMA journal_mode=WAL")
            try database.execute("PRAGMA synchronous=\(configuration.synchronous.rawValue)")
            try database.execute("PRAGMA cache_size=-\(configuration.cacheKiB)")
            try database.execute("PRAGMA mmap_size=\(configuration.mmapBytes)")
            try database.execute("PRAGMA temp_store=MEMORY")
            try StringMatchFunction.register(on: database)
            try CanonicalCollation.register(on: database)
            return try CoreDataMetadata.loadOrCreate(database, layout: layout, schema: schema)
        }
    }

    /// Core Data's URI for `id`: `x-coredata://<store UUID>/<Entity>/p<Z_PK>`, or `nil` for an
    /// identifier of another store.
    public func uri(for id: PersistentIdentifier) -> String? {
        guard id.storeIdentifier == identifier, case .integer(let key) = id.primaryKey else { return nil }
        return "x-coredata://\(identifier)/\(id.entityName)/p\(key)"
    }

    /// Closes the connection (checkpointing the WAL into the database); later calls fail.
    public func close() {
        lock.withLock {
            cache = [:]
            database.close()
        }
    }

    /// Moves the WAL into the database and truncates it, so that the files show the
    /// database's size.
    public func checkpoint() throws {
        try lock.withLock { try Self.sqlite("Checkpointing") { try database.execute("PRAGMA wal_checkpoint(TRUNCATE)") } }
    }

    // MARK: Statements (called with the lock held)

    /// The prepared statement for `sql`, reused across calls.
    func statement(_ sql: String) throws -> SQLiteStatement {
        if let cached = cache[sql] { return cached }
        if cache.count >= 512 {
            for statement in cache.values { database.forget(statement) }
            cache = [:]
        }
        let statement = try database.prepare(sql)
        cache[sql] = statement
        return statement
    }

    /// Runs `sql` with `arguments`, calling `row` for each row.
    func query(_ sql: String, _ arguments: [SQLArgument], row: (SQLiteStatement) throws -> Void) throws {
        let statement = try statement(sql)
        defer { statement.reset() }
        try SQLArgument.bind(arguments, to: statement)
        while try statement.step() { try row(statement) }
    }

    /// Runs `sql` with `arguments` (a write) and returns the rows it changed.
    @discardableResult
    func run(_ sql: String, _ arguments: [SQLArgument]) throws -> Int {
        let statement = try statement(sql)
        defer { statement.reset() }
        try SQLArgument.bind(arguments, to: statement)
        while try statement.step() {}
        return database.changes
    }

    /// The permanent identifier of row `key` of `entity`.
    func identifier(_ entity: String, _ key: Int64) throws -> PersistentIdentifier {
        try PersistentIdentifier.identifier(for: identifier, entityName: entity, primaryKey: .integer(key))
    }

    // MARK: Errors

    /// `body`'s result, with SQLite's errors wrapped as ``DataStoreError/Code/engine``.
    static func sqlite<T>(_ action: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DataStoreError {
            throw error
        } catch let error as SQLiteError {
            throw DataStoreError(.engine, "\(action) failed in SQLite: \(error). See SQLite's result code for what to do.", underlying: error)
        } catch {
            throw DataStoreError(.engine, "\(action) failed: \(error).")
        }
    }

    // MARK: Async variants: the synchronous work on the store's queue.

    private func onQueue<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
            }
        }
    }

    /// As ``save(_:)``, run on the store's queue; durable as ``save(_:)`` when it returns.
    public func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) async throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try await onQueue { try self.save(request) }
    }

    /// As ``fetch(_:)``, run on the store's queue.
    public func fetch(_ request: DataStoreFetchRequest) async throws -> DataStoreFetchResult<DefaultSnapshot> {
        try await onQueue { try self.fetch(request) }
    }

    /// As ``fetchCount(_:)``, run on the store's queue.
    public func fetchCount(_ request: DataStoreFetchRequest) async throws -> Int {
        try await onQueue { try self.fetchCount(request) }
    }

    /// As ``fetchIdentifiers(_:)``, run on the store's queue.
    public func fetchIdentifiers(_ request: DataStoreFetchRequest) async throws -> [PersistentIdentifier] {
        try await onQueue { try self.fetchIdentifiers(request) }
    }

    /// As ``erase()``, run on the store's queue.
    public func erase() async throws {
        try await onQueue { try self.erase() }
    }

    /// As ``delete(_:)``, run on the store's queue.
    public func delete(_ request: DataStoreBatchDeleteRequest) async throws {
        try await onQueue { try self.delete(request) }
    }
}
