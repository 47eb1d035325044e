import CSQLite

/// `SQLITE_TRANSIENT` (the C macro `((sqlite3_destructor_type)-1)` is not imported): SQLite
/// copies a bound value before the bind returns.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection, with the statements prepared on it: what the benchmarks' SQLite
/// contenders are built on.
///
/// Used by one thread at a time (it is opened `SQLITE_OPEN_NOMUTEX`); its owner serialises
/// access.
public final class SQLiteDatabase {
    /// The connection.
    public let handle: OpaquePointer
    /// The database file.
    public let path: String
    private var statements: [SQLiteStatement] = []
    private var closed = false

    /// Opens (creating when `create`) the database file at `path`, with a busy timeout of a
    /// minute so that a second connection waits for a writer instead of failing.
    public init(path: String, create: Bool = true) throws {
        self.path = path
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0)
        let status = sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_close_v2(db)
            throw SQLiteError(code: status, context: "sqlite3_open_v2(\(path))", message: message)
        }
        handle = db
        sqlite3_busy_timeout(db, 60_000)
    }

    deinit {
        close()
    }

    /// Finalizes every statement and closes the connection (idempotent). In WAL mode the last
    /// connection to close checkpoints the WAL into the database and removes it.
    public func close() {
        guard !closed else { return }
        closed = true
        for statement in statements { statement.finalize() }
        statements = []
        sqlite3_close_v2(handle)
    }

    /// Runs `sql`, one statement or several separated by `;` (any rows are ignored).
    public func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_free(message)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), context: sql, message: text)
        }
    }

    /// The first column of the first row `sql` returns, as text (`nil` for no row or NULL).
    public func text(_ sql: String) throws -> String? {
        let statement = try prepare(sql)
        defer { forget(statement) }
        guard try statement.step() else { return nil }
        return statement.text(0)
    }

    /// A prepared statement, finalized when the connection closes (or by ``forget(_:)``).
    public func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else {
            throw SQLiteError(code: status, context: "prepare \(sql)", message: lastError)
        }
        let prepared = SQLiteStatement(statement, database: self, sql: sql)
        statements.append(prepared)
        return prepared
    }

    /// Finalizes `statement` now, instead of at close.
    public func forget(_ statement: SQLiteStatement) {
        statement.finalize()
        statements.removeAll { $0 === statement }
    }

    /// How many rows the last `INSERT`, `UPDATE` or `DELETE` changed.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// The connection's last error message.
    public var lastError: String { String(cString: sqlite3_errmsg(handle)) }

    /// The connection's last extended result code.
    public var lastErrorCode: Int32 { sqlite3_extended_errcode(handle) }

    /// The SQLite library's version.
    public static var version: String { String(cString: sqlite3_libversion()) }
}
