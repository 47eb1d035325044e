import Foundation

/// One committed save, as SwiftData's `HistoryTransaction`: who made it, when, its token and
/// its changes in order.
public protocol HistoryTransaction: Hashable, Identifiable, Sendable {
    /// The token type that orders the store's transactions.
    associatedtype TokenType: HistoryToken
    /// The type of ``transactionIdentifier``.
    associatedtype TransactionIdentifier: Comparable, Hashable, Sendable

    /// The author of the save (its editing state's author), when it had one.
    var author: String? { get }
    /// Its changes, in order; each object at most once.
    var changes: [HistoryChange] { get }
    /// The identifier of the store that committed it.
    var storeIdentifier: String { get }
    /// When it was committed (the store's clock).
    var timestamp: Date { get }
    /// Its place in the store's history.
    var token: TokenType { get }
    /// Its identifier in the store.
    var transactionIdentifier: TransactionIdentifier { get }
}
