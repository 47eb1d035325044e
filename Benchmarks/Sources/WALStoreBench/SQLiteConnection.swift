import BenchSupport
import SQLiteSupport

/// One SQLite connection to `kv.sqlite` in a store directory, set up the way the bench measures
/// it: WAL journal, the given `synchronous`, a 64 MiB page cache (WALStore's default cache
/// budget: 32 MiB of values plus 32 MiB of blocks; SQLite's default is 2 MiB), a busy timeout, and the table
/// `kv(k BLOB PRIMARY KEY, v BLOB)` in one of two layouts (``Layout``).
///
/// Used by one thread at a time. Statements and errors are ``SQLiteSupport``'s.
final class SQLiteConnection {
    /// SQLite's `synchronous` setting.
    enum Synchronous: String {
        /// An fsync of the WAL at every commit: durable.
        case full = "FULL"
        /// No fsync at commit (only at checkpoints): a power loss can take recent commits.
        case normal = "NORMAL"
    }

    /// How the table is laid out. With ~300-byte rows the rowid table is SQLite's faster layout
    /// for inserts and opens (its rows are in rowid order, its key index holds only keys and
    /// rowids); `WITHOUT ROWID` keeps whole rows in one B-tree ordered by key, which a point read
    /// walks once instead of twice. The bench runs both and compares with the faster one.
    enum Layout: String {
        /// `kv(k BLOB PRIMARY KEY, v BLOB)`: a rowid table plus a unique index on `k`.
        case rowid
        /// `kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`: one B-tree keyed by `k`.
        case withoutRowid = "WITHOUT ROWID"

        /// The `CREATE TABLE` statement.
        var createTable: String {
            switch self {
            case .rowid: "CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB)"
            case .withoutRowid: "CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID"
            }
        }
    }

    /// The connection (statements, execution, closing).
    let database: SQLiteDatabase
    var path: String { database.path }

    /// The page cache of each connection, in KiB: the same budget as WALStore's two caches.
    static let cacheKiB = 64 << 10

    /// The database file in a store directory.
    static func databasePath(in directory: String) -> String { directory + "/kv.sqlite" }

    /// Opens (creating) the database in `directory` (created too) and sets it up.
    init(directory: String, synchronous: Synchronous, layout: Layout) throws {
        try ScratchDirectory.create(directory)
        database = try SQLiteDatabase(path: Self.databasePath(in: directory))
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=\(synchronous.rawValue)")
        try execute("PRAGMA cache_size=-\(Self.cacheKiB)")
        try execute(layout.createTable)
    }

    /// Finalizes every statement and closes the connection (idempotent).
    func close() {
        database.close()
    }

    /// Runs `sql` (any rows it returns are ignored).
    func execute(_ sql: String) throws {
        try database.execute(sql)
    }

    /// A prepared statement, finalized when the connection closes.
    func prepare(_ sql: String) throws -> SQLiteStatement {
        try database.prepare(sql)
    }
}
