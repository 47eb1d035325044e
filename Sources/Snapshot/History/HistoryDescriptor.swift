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

    /// Only the transactions committed after this token's (exclusive). A token whose transaction
    /// the store no longer keeps (deleted by ``WALDataStore/deleteHistory(_:)``, retention or an
    /// erase), or newer than its newest transaction, makes the fetch throw
    /// ``DataStoreError/Code/historyTokenExpired``.
    public var after: TransactionType.TokenType?
    /// Only the transactions committed before this token's (exclusive); for
    /// ``WALDataStore/deleteHistory(_:)``, the transactions to delete (the token's own is kept,
    /// so the token stays valid). A token newer than the newest transaction is
    /// ``DataStoreError/Code/historyTokenExpired``.
    public var before: TransactionType.TokenType?
    /// Only the transactions whose author is one of these (and, with ``withoutAuthor``, those
    /// saved without an author).
    public var authors: Set<String>?
    /// Whether the transactions saved without an author (``EditingState/author`` `nil`) are
    /// selected by the author filter: with ``authors`` `nil`, only they are; with ``authors``,
    /// they and the transactions of those authors are. `false` (the default) leaves the author
    /// filter to ``authors`` alone.
    public var withoutAuthor: Bool
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
        entityNames: Set<String>? = nil, fetchLimit: Int? = nil, sortOrder: Order = .oldestFirst, withoutAuthor: Bool = false
    ) {
        self.after = after
        self.before = before
        self.authors = authors
        self.withoutAuthor = withoutAuthor
        self.entityNames = entityNames
        self.fetchLimit = fetchLimit
        self.sortOrder = sortOrder
    }
}

extension HistoryDescriptor {
    /// Whether the descriptor filters by author (``authors`` or ``withoutAuthor`` given).
    var filtersByAuthor: Bool { authors != nil || withoutAuthor }
}
