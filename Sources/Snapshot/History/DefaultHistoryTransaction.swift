import Foundation

/// A ``WALDataStore``'s history transaction, as SwiftData's `DefaultHistoryTransaction`: one save,
/// recorded in the same engine commit as the save itself.
public struct DefaultHistoryTransaction: HistoryTransaction {
    /// The identifier of the store that committed it.
    public let storeIdentifier: String
    /// The transaction's number (its token's ``DefaultHistoryToken/value``).
    public let transactionIdentifier: UInt64
    /// Its token.
    public let token: DefaultHistoryToken
    /// The author of the save (``EditingState/author``), when it had one.
    public let author: String?
    /// When the save was committed (the store's clock).
    public let timestamp: Date
    /// Its changes, in order (see ``WALDataStore/fetchHistory(_:)``).
    public let changes: [HistoryChange]

    /// ``transactionIdentifier``.
    public var id: UInt64 { transactionIdentifier }

    /// A transaction (the store makes these; tests and other stores may too).
    public init(storeIdentifier: String, transactionIdentifier: UInt64, author: String?, timestamp: Date, changes: [HistoryChange]) {
        self.storeIdentifier = storeIdentifier
        self.transactionIdentifier = transactionIdentifier
        self.token = DefaultHistoryToken(storeIdentifier: storeIdentifier, value: transactionIdentifier)
        self.author = author
        self.timestamp = timestamp
        self.changes = changes
    }
}
