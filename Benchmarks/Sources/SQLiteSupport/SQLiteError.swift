import CSQLite

/// A failure reported by SQLite: its result code, the statement or call that failed, and
/// SQLite's message.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// SQLite's (extended) result code, `SQLITE_CONSTRAINT` and so on.
    public var code: Int32
    /// What was being done: the SQL text or the call.
    public var context: String
    /// SQLite's message for the failure.
    public var message: String

    /// An error with SQLite's `code` for `context`, worded by `message`.
    public init(code: Int32, context: String, message: String) {
        self.code = code
        self.context = context
        self.message = message
    }

    /// `<context>: <message> (SQLite code <n>)`.
    public var description: String { "\(context): \(message) (SQLite code \(code))" }

    /// Whether SQLite refused the statement on a constraint (a unique index, say).
    public var isConstraintViolation: Bool { code & 0xFF == SQLITE_CONSTRAINT }
}
