/// A deleted object, as SwiftData's `HistoryDelete`: its identifier and its tombstone.
public struct HistoryDelete: Hashable, Sendable {
    /// The change's position in its transaction (0 for the first).
    public let changeIdentifier: Int
    /// The number of the transaction that holds it.
    public let transactionIdentifier: UInt64
    /// The deleted object.
    public let changedPersistentIdentifier: PersistentIdentifier
    /// The values of its attributes marked ``Schema/Attribute/Options/preserveValueOnDeletion``,
    /// as they were when it was deleted.
    public let tombstone: HistoryTombstone

    /// A delete change.
    public init(changeIdentifier: Int, transactionIdentifier: UInt64, changedPersistentIdentifier: PersistentIdentifier, tombstone: HistoryTombstone)
    {
        self.changeIdentifier = changeIdentifier
        self.transactionIdentifier = transactionIdentifier
        self.changedPersistentIdentifier = changedPersistentIdentifier
        self.tombstone = tombstone
    }
}
