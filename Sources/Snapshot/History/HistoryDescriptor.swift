/// Which transactions a history fetch returns, and in which order, as SwiftData's
/// `HistoryDescriptor` (with explicit filters in place of a `Predicate`).
///
/// Every filter left `nil` selects everything; the filters combine with *and*.
public struct HistoryDescriptor<TransactionType: HistoryTransaction>: Sendable {
    /// Which end of the history a fetch starts from.
    public enum Order: Hashable, Sendable {
        /// Ascending tokens: the oldest transaction first.
        case oldestFirst
        /// Descending tokens: the newest transaction first.
        case newestFirst
    }

    /// Only the transactions committed after this token's (exclusive). A token older than what
    /// the store keeps makes the fetch throw ``DataStoreError/Code/historyTokenExpired``.
    public var after: TransactionType.TokenType?
    /// Only the transactions committed before this token's (exclusive); for
    /// ``WALDataStore/deleteHistory(_:)``, the transactions to delete.
    public var before: TransactionType.TokenType?
    /// Only the transactions whose author is one of these.
    public var authors: Set<String>?
    /// Only the transactions that change an object of one of these entities (or of their
    /// sub-entities), each with only those changes.
    public var entityNames: Set<String>?
    /// At most this many transactions (after filtering), from the end ``sortOrder`` starts at.
    public var fetchLimit: Int?
    /// Oldest or newest first.
    public var sortOrder: Order

    /// A descriptor; with no arguments it selects the whole history, oldest first.
    public init(
        after: TransactionType.TokenType? = nil, before: TransactionType.TokenType? = nil, authors: Set<String>? = nil,
        entityNames: Set<String>? = nil, fetchLimit: Int? = nil, sortOrder: Order = .oldestFirst
    ) {
        self.after = after
        self.before = before
        self.authors = authors
        self.entityNames = entityNames
        self.fetchLimit = fetchLimit
        self.sortOrder = sortOrder
    }
}
