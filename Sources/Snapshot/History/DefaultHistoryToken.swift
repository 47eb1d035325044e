/// A ``WALDataStore``'s history token, as SwiftData's `DefaultHistoryToken`: the store's
/// identifier and the transaction's number, which counts the store's transactions from 1 and
/// never goes back (not after ``WALDataStore/deleteHistory(_:)``, retention or an erase either).
public struct DefaultHistoryToken: HistoryToken {
    /// The identifier of the store whose transaction this is.
    public let storeIdentifier: String
    /// The transaction's number in the store: 1 for its first, one more for each later one.
    public let value: UInt64

    /// The token of transaction `value` of the store `storeIdentifier` (to rebuild a token a
    /// client kept; ``WALDataStore/fetchHistory(_:)`` checks it).
    public init(storeIdentifier: String, value: UInt64) {
        self.storeIdentifier = storeIdentifier
        self.value = value
    }

    /// ``value``.
    public var tokenValue: UInt64? { value }
    /// The token itself.
    public var id: DefaultHistoryToken { self }

    /// By transaction number (then, for tokens of different stores, by store identifier).
    public static func < (lhs: DefaultHistoryToken, rhs: DefaultHistoryToken) -> Bool {
        (lhs.value, lhs.storeIdentifier) < (rhs.value, rhs.storeIdentifier)
    }
}
