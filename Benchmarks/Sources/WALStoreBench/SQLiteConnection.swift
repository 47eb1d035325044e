import BenchSupport
import CSQLite

/// `SQLITE_TRANSIENT` (the C macro `((sqlite3_destructor_type)-1)` is not imported): SQLite
/// copies a bound blob before the bind returns.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection to `kv.sqlite` in a store directory, set up the way the bench measures
/// it: WAL journal, the given `synchronous`, a 64 MiB page cache (WALStore's default cache
/// budget: 32 MiB of values plus 32 MiB of blocks; SQLite's default is 2 MiB), a busy timeout, and the table
/// `kv(k BLOB PRIMARY KEY, v BLOB)` in one of two layouts (``Layout``).
///
/// Used by one thread at a time.
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

    let handle: OpaquePointer
    let path: String
    private var statements: [SQLiteStatement] = []
    private var closed = false

    /// The page cache of each connection, in KiB: the same budget as WALStore's two caches.
    static let cacheKiB = 64 << 10

    /// The database file in a store directory.
    static func databasePath(in directory: String) -> String { directory + "/kv.sqlite" }

    /// Opens (creating) the database in `directory` (created too) and sets it up.
    init(directory: String, synchronous: Synchronous, layout: Layout) throws {
        try ScratchDirectory.create(directory)
        path = Self.databasePath(in: directory)
        var db: OpaquePointer?
        let status = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_close_v2(db)
            throw BenchError("sqlite3_open_v2(\(path)): \(message)")
        }
        handle = db
        sqlite3_busy_timeout(db, 60_000)
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=\(synchronous.rawValue)")
        try execute("PRAGMA cache_size=-\(Self.cacheKiB)")
        try execute(layout.createTable)
    }

    deinit {
        close()
    }

    /// Finalizes every statement and closes the connection (idempotent).
    func close() {
        guard !closed else { return }
        closed = true
        for statement in statements { statement.finalize() }
        statements = []
        sqlite3_close_v2(handle)
    }

    /// Runs `sql` (any rows it returns are ignored).
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_free(message)
            throw BenchError("\(sql): \(text)")
        }
    }

    /// A prepared statement, finalized when the connection closes.
    func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError("prepare \(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
        let prepared = SQLiteStatement(statement, connection: self, sql: sql)
        statements.append(prepared)
        return prepared
    }

    /// The connection's last error message.
    var lastError: String { String(cString: sqlite3_errmsg(handle)) }
}

/// A prepared statement of a ``SQLiteConnection``.
final class SQLiteStatement {
    private var handle: OpaquePointer?
    private unowned let connection: SQLiteConnection
    private let sql: String

    init(_ handle: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    func finalize() {
        sqlite3_finalize(handle)
        handle = nil
    }

    /// Binds `bytes` as a blob to parameter `index` (1-based); SQLite copies them.
    func bind(_ bytes: [UInt8], at index: Int32) throws {
        let status = bytes.withUnsafeBytes { raw in
            sqlite3_bind_blob(handle, index, raw.baseAddress, Int32(raw.count), sqliteTransient)
        }
        guard status == SQLITE_OK else { throw error("bind") }
    }

    /// Steps once; true when a row is available, false when done.
    func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw error("step")
        }
    }

    /// Runs the statement to completion and resets it.
    func run() throws {
        defer { reset() }
        while try step() {}
    }

    /// Resets the statement and clears its bindings.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Column `column` of the current row as bytes (a copy), or nil for NULL.
    func blob(_ column: Int32) -> [UInt8]? {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let pointer = sqlite3_column_blob(handle, column) else { return count == 0 ? [] : nil }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Column `column` of the current row as an integer.
    func integer(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    private func error(_ what: String) -> BenchError {
        BenchError("\(what) \(sql): \(connection.lastError)")
    }
}
