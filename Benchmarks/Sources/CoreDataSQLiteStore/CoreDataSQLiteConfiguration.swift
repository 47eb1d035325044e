import Foundation
import Snapshot

/// What a ``CoreDataSQLiteStore`` is made from: a name, its schema, the directory of its files
/// and the SQLite settings it runs with.
public struct CoreDataSQLiteConfiguration: DataStoreConfiguration {
    /// The store this configuration opens.
    public typealias Store = CoreDataSQLiteStore

    /// SQLite's `synchronous` setting.
    public enum Synchronous: String, Hashable, Sendable {
        /// The WAL is synced at every commit: a save that returned survives power loss.
        case full = "FULL"
        /// The WAL is synced only at checkpoints: a power loss can take the last saves (never
        /// half of one).
        case normal = "NORMAL"
    }

    /// The configuration's name; the database is `<name>.sqlite` and external data goes to
    /// `.<name>_SUPPORT/_EXTERNAL_DATA/`, as Core Data names them.
    public var name: String
    /// The entities the store holds; the store needs one.
    public var schema: Schema?
    /// The directory holding the database and its support directory (made at first open).
    public var directory: String
    /// `PRAGMA synchronous`.
    public var synchronous: Synchronous
    /// `PRAGMA cache_size`, in KiB (64 MiB by default: the two caches of WALStore's engine
    /// together; SQLite's own default is 2 MiB).
    public var cacheKiB: Int
    /// `PRAGMA mmap_size`, in bytes (256 MiB by default: reads of a database that fits are
    /// served from the mapping instead of copied by `read(2)`).
    public var mmapBytes: Int
    /// Data values of `.externalStorage` attributes of at least this many bytes are kept in
    /// files of their own (1,000,000 bytes: the threshold measured for Core Data).
    public var externalDataThreshold: Int

    /// A configuration for the store `name` in `directory`.
    public init(
        name: String, schema: Schema, directory: String, synchronous: Synchronous = .full, cacheKiB: Int = 64 << 10,
        mmapBytes: Int = 256 << 20, externalDataThreshold: Int = 1_000_000
    ) {
        self.name = name
        self.schema = schema
        self.directory = directory
        self.synchronous = synchronous
        self.cacheKiB = cacheKiB
        self.mmapBytes = mmapBytes
        self.externalDataThreshold = externalDataThreshold
    }

    /// The database file.
    public var databasePath: String { directory + "/" + name + ".sqlite" }
    /// Where external data files go.
    public var externalDataDirectory: String { directory + "/." + name + "_SUPPORT/_EXTERNAL_DATA" }
}
