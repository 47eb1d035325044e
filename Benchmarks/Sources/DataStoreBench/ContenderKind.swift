import CoreDataSQLiteStore
import Engine
import Foundation
import Snapshot
import SnapshotTestSupport

/// The stores compared.
enum ContenderKind: String, CaseIterable, Codable, Sendable {
    /// `WALDataStore` with its default (durable) options.
    case wal = "WALStore"
    /// The Core Data-shaped SQLite store, `synchronous=FULL` (durable).
    case sqliteFull = "SQLite FULL"
    /// The same, `synchronous=NORMAL` (a power loss can take the last saves).
    case sqliteNormal = "SQLite NORMAL"
    /// The whole-file JSON store (no sync: not durable).
    case json = "JSON file"

    /// The command-line name.
    var flag: String {
        switch self {
        case .wal: "wal"
        case .sqliteFull: "sqlite-full"
        case .sqliteNormal: "sqlite-normal"
        case .json: "json"
        }
    }

    init?(flag: String) {
        guard let kind = Self.allCases.first(where: { $0.flag == flag }) else { return nil }
        self = kind
    }

    /// Opens the store in `directory` on `schema` and hands it to `body`, then closes it.
    func withStore<R>(_ directory: String, schema: Schema, _ body: (any BenchDataStore) async throws -> R) async throws -> R {
        let store = try open(directory, schema: schema)
        do {
            let result = try await body(store)
            try store.shut()
            return result
        } catch {
            try? store.shut()
            throw error
        }
    }

    /// The store in `directory` on `schema`, opened (made if new).
    func open(_ directory: String, schema: Schema) throws -> any BenchDataStore {
        switch self {
        case .wal:
            return try WALDataStore(WALStoreConfiguration(name: "Blog", schema: schema, path: directory))
        case .sqliteFull, .sqliteNormal:
            return try CoreDataSQLiteStore(CoreDataSQLiteConfiguration(
                name: "Blog", schema: schema, directory: directory, synchronous: self == .sqliteFull ? .full : .normal))
        case .json:
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            return try JSONStore(JSONStoreConfiguration(name: "Blog", schema: schema, fileURL: URL(fileURLWithPath: directory + "/Blog.json")))
        }
    }

    /// What the contender is given, for the report.
    var setup: String {
        switch self {
        case .wal: "WALDataStore, default LogStore.Options() (durable: fdatasync before each commit returns; 32 MiB value + 32 MiB block cache)"
        case .sqliteFull, .sqliteNormal:
            "Core Data's layout; WAL journal, synchronous=\(self == .sqliteFull ? "FULL" : "NORMAL"), cache_size 64 MiB, mmap_size 256 MiB, temp_store=MEMORY, auto_vacuum=INCREMENTAL, prepared statements reused, one BEGIN IMMEDIATE…COMMIT per save"
        case .json: "the whole-file JSONStore (SnapshotTestSupport): reads and rewrites the whole file per save (atomic rename, no fsync)"
        }
    }
}

/// A store the harness can run and close: the three contenders.
protocol BenchDataStore: DataStoreBatching where SnapshotType == DefaultSnapshot {
    /// Closes the store (what was saved stays).
    func shut() throws
}

extension WALDataStore: BenchDataStore {
    func shut() throws { try close() }
}

extension CoreDataSQLiteStore: BenchDataStore {
    func shut() throws { close() }
}

extension JSONStore: BenchDataStore {
    func shut() throws {}
}

extension BenchDataStore {
    // The synchronous calls by name: in the harness's async code a bare `save` would pick the
    // async variant. Only `save-concurrent` measures the async API.

    /// The synchronous ``DataStore/save(_:)``.
    func saveSync(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> { try save(request) }
    /// The synchronous ``DataStore/fetch(_:)``.
    func fetchSync(_ request: DataStoreFetchRequest) throws -> DataStoreFetchResult<DefaultSnapshot> { try fetch(request) }
    /// The synchronous ``DataStore/fetchCount(_:)``.
    func countSync(_ request: DataStoreFetchRequest) throws -> Int { try fetchCount(request) }
}
