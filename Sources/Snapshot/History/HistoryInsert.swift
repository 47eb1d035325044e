/// An inserted object, as SwiftData's `HistoryInsert`.
public struct HistoryInsert: Hashable, Sendable {
    /// The change's position in its transaction (0 for the first).
    public let changeIdentifier: Int
    /// The number of the transaction that holds it.
    public let transactionIdentifier: UInt64
    /// The inserted object.
    public let changedPersistentIdentifier: PersistentIdentifier

    /// An insert change.
    public init(changeIdentifier: Int, transactionIdentifier: UInt64, changedPersistentIdentifier: PersistentIdentifier) {
        self.changeIdentifier = changeIdentifier
        self.transactionIdentifier = transactionIdentifier
        self.changedPersistentIdentifier = changedPersistentIdentifier
    }
}
