import CSQLite
import Foundation

/// A prepared statement of a ``SQLiteDatabase``: bind parameters (1-based), step through rows,
/// read columns (0-based), reset to run it again.
public final class SQLiteStatement {
    private var handle: OpaquePointer?
    private unowned let database: SQLiteDatabase
    /// The statement's SQL text.
    public let sql: String

    init(_ handle: OpaquePointer, database: SQLiteDatabase, sql: String) {
        self.handle = handle
        self.database = database
        self.sql = sql
    }

    func finalize() {
        sqlite3_finalize(handle)
        handle = nil
    }

    /// Binds `bytes` as a blob to parameter `index`; SQLite copies them.
    public func bind(_ bytes: [UInt8], at index: Int32) throws {
        let status = bytes.withUnsafeBytes { raw in
            sqlite3_bind_blob(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), sqliteTransient)
        }
        try check(status, "bind")
    }

    /// Binds `data` as a blob to parameter `index`; SQLite copies it.
    public func bind(_ data: Data, at index: Int32) throws {
        let status = data.withUnsafeBytes { raw in
            sqlite3_bind_blob(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), sqliteTransient)
        }
        try check(status, "bind")
    }

    /// Binds an integer to parameter `index`.
    public func bind(_ value: Int64, at index: Int32) throws {
        try check(sqlite3_bind_int64(handle, index, value), "bind")
    }

    /// Binds a floating-point number to parameter `index`.
    public func bind(_ value: Double, at index: Int32) throws {
        try check(sqlite3_bind_double(handle, index, value), "bind")
    }

    /// Binds `text` (as UTF-8) to parameter `index`; SQLite copies it.
    public func bind(_ text: String, at index: Int32) throws {
        let status = text.withCString { chars in
            sqlite3_bind_text(handle, index, chars, Int32(text.utf8.count), sqliteTransient)
        }
        try check(status, "bind")
    }

    /// Binds NULL to parameter `index`.
    public func bindNull(at index: Int32) throws {
        try check(sqlite3_bind_null(handle, index), "bind")
    }

    /// Steps once; true when a row is available, false when done.
    public func step() throws -> Bool {
        let status = sqlite3_step(handle)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteError(code: database.lastErrorCode, context: sql, message: database.lastError)
        }
    }

    /// Runs the statement to completion and resets it (clearing its bindings).
    public func run() throws {
        defer { reset() }
        while try step() {}
    }

    /// Resets the statement and clears its bindings.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Whether column `column` of the current row is NULL.
    public func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    /// Column `column` of the current row as bytes (a copy), or nil for NULL.
    public func blob(_ column: Int32) -> [UInt8]? {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let pointer = sqlite3_column_blob(handle, column) else { return count == 0 && !isNull(column) ? [] : nil }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Column `column` of the current row as `Data` (a copy), or nil for NULL.
    public func data(_ column: Int32) -> Data? {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let pointer = sqlite3_column_blob(handle, column) else { return isNull(column) ? nil : Data() }
        return Data(bytes: pointer, count: count)
    }

    /// Column `column` of the current row as an integer.
    public func integer(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    /// Column `column` of the current row as a floating-point number.
    public func double(_ column: Int32) -> Double {
        sqlite3_column_double(handle, column)
    }

    /// Column `column` of the current row as text, or nil for NULL.
    public func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    private func check(_ status: Int32, _ what: String) throws {
        guard status == SQLITE_OK else {
            throw SQLiteError(code: status, context: "\(what) \(sql)", message: database.lastError)
        }
    }
}
