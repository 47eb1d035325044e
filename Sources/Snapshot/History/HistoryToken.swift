/// A bookmark in a store's history, as SwiftData's `HistoryToken`: a fetch "after" a token
/// returns the transactions committed after the one that token marks.
///
/// Tokens of one store are totally ordered (a later transaction has a greater token) and
/// `Codable`, so a client keeps the last one it processed (on disk, say) and asks for what came
/// after it.
public protocol HistoryToken: Comparable, Codable, Hashable, Identifiable, Sendable {
    /// The raw value a token holds.
    associatedtype TokenType: Codable, Hashable, Sendable

    /// The identifier of the store whose history the token belongs to.
    var storeIdentifier: String { get }
    /// The token's raw value, when it has one.
    var tokenValue: TokenType? { get }
}
