import Foundation
import SQLiteSupport

/// A value bound to a `?` of a statement the store builds.
enum SQLArgument: Hashable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
    case null

    /// Binds `arguments` to `statement`'s parameters 1, 2, ….
    static func bind(_ arguments: [SQLArgument], to statement: SQLiteStatement) throws {
        for (i, argument) in arguments.enumerated() {
            let index = Int32(i + 1)
            switch argument {
            case .integer(let v): try statement.bind(v, at: index)
            case .real(let v): try statement.bind(v, at: index)
            case .text(let v): try statement.bind(v, at: index)
            case .blob(let v): try statement.bind(v, at: index)
            case .null: try statement.bindNull(at: index)
            }
        }
    }
}
