import CSQLite
import Foundation
import Snapshot
import SQLiteSupport

/// `ZCD_STRINGMATCH(haystack, needle, operation, options)`: the SQL function the store registers
/// for string operations with options (case- or diacritic-insensitive), as Core Data registers
/// its own (`NSCoreDataStringSearch`) for `CONTAINS[cd]` and the like. It follows
/// ``PredicateEvaluator``'s rule: both sides brought to NFC and folded with
/// `folding(options:locale: nil)`, then matched by `Character`. Operations without options are
/// plain SQL (`instr`, `substr`) when the needle and the stored string are printable ASCII
/// (where code points are `Character`s); otherwise this function decides them too.
enum StringMatchFunction {
    /// The function's SQL name.
    static let name = "ZCD_STRINGMATCH"

    /// The `operation` argument for each string operation.
    static func code(_ operation: FetchPredicate.StringOperation) -> Int64 {
        switch operation {
        case .contains: 0
        case .beginsWith: 1
        case .endsWith: 2
        }
    }

    /// Registers the function on `database`.
    static func register(on database: SQLiteDatabase) throws {
        let status = sqlite3_create_function_v2(
            database.handle, name, 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, count, arguments in
                guard count == 4, let arguments, let haystackText = sqlite3_value_text(arguments[0]),
                    let needleText = sqlite3_value_text(arguments[1])
                else {
                    sqlite3_result_int(context, 0)
                    return
                }
                let haystack = String(cString: haystackText)
                let needle = String(cString: needleText)
                let operation = sqlite3_value_int64(arguments[2])
                let options = FetchPredicate.StringOptions(rawValue: UInt8(truncatingIfNeeded: sqlite3_value_int64(arguments[3])))
                sqlite3_result_int(context, StringMatchFunction.matches(haystack, needle, operation, options) ? 1 : 0)
            }, nil, nil, nil)
        guard status == SQLITE_OK else {
            throw SQLiteError(code: status, context: "sqlite3_create_function_v2(\(name))", message: database.lastError)
        }
    }

    /// Whether `haystack` contains, begins or ends with `needle` under `options`.
    static func matches(_ haystack: String, _ needle: String, _ operation: Int64, _ options: FetchPredicate.StringOptions) -> Bool {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        // In NFC before folding, as the evaluator does, so equivalent spellings fold alike.
        func folded(_ s: String) -> String { String(decoding: CanonicalStringOrder.normalizedUTF8(s), as: UTF8.self).folding(options: folding, locale: nil) }
        let text = Array(folding.isEmpty ? haystack : folded(haystack))
        let pattern = Array(folding.isEmpty ? needle : folded(needle))
        if pattern.isEmpty { return true }
        guard pattern.count <= text.count else { return false }
        switch operation {
        case 1: return text.starts(with: pattern)
        case 2: return text.suffix(pattern.count).elementsEqual(pattern)
        default:
            for start in 0...(text.count - pattern.count) where text[start..<start + pattern.count].elementsEqual(pattern) { return true }
            return false
        }
    }
}
