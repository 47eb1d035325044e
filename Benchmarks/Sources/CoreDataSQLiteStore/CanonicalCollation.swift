import CSQLite
import Snapshot
import SQLiteSupport

/// `ZCD_NFC`: the SQLite collation the store declares on its string and URL columns, so that
/// SQL compares, sorts, indexes and enforces uniqueness of strings in the order every store of
/// this package uses (``CanonicalStringOrder``: the byte order of the strings' NFC forms, so
/// canonically equivalent spellings are equal). SQLite's own `BINARY` would tell
/// `"e\u{301}"` and `"\u{e9}"` apart.
enum CanonicalCollation {
    /// The collation's SQL name.
    static let name = "ZCD_NFC"

    /// Registers the collation on `database`; before any statement reads a table or index
    /// declared with it.
    static func register(on database: SQLiteDatabase) throws {
        let status = sqlite3_create_collation_v2(
            database.handle, name, SQLITE_UTF8, nil,
            { _, count1, bytes1, count2, bytes2 in
                let a = UnsafeRawBufferPointer(start: bytes1, count: Int(max(0, count1)))
                let b = UnsafeRawBufferPointer(start: bytes2, count: Int(max(0, count2)))
                return Int32(CanonicalStringOrder.compare(utf8: a, b))
            }, nil)
        guard status == SQLITE_OK else {
            throw SQLiteError(code: status, context: "sqlite3_create_collation_v2(\(name))", message: database.lastError)
        }
    }

    /// `value` with a string or URL in NFC: the form in which two inserts of one save are
    /// told to be the same unique value (as the collation tells stored rows).
    static func claimForm(_ value: PropertyValue) -> String {
        switch value {
        case .string(let s): "string:" + String(decoding: CanonicalStringOrder.normalizedUTF8(s), as: UTF8.self)
        case .url(let u): "url:" + String(decoding: CanonicalStringOrder.normalizedUTF8(u.absoluteString), as: UTF8.self)
        default: "\(value)"
        }
    }
}
