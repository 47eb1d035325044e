/// An updated object, as SwiftData's `HistoryUpdate`: which of its properties changed.
public struct HistoryUpdate: Hashable, Sendable {
    /// The change's position in its transaction (0 for the first).
    public let changeIdentifier: Int
    /// The number of the transaction that holds it.
    public let transactionIdentifier: UInt64
    /// The updated object.
    public let changedPersistentIdentifier: PersistentIdentifier
    /// The names of the properties whose stored value the save changed, sorted: attributes, and
    /// relationships whose target (to-one) or set of targets (to-many) changed — an inverse
    /// maintained or a reference a delete rule nullified included. Names as the schema had them
    /// when the transaction was recorded.
    public let updatedAttributes: [String]

    /// An update change.
    public init(changeIdentifier: Int, transactionIdentifier: UInt64, changedPersistentIdentifier: PersistentIdentifier, updatedAttributes: [String])
    {
        self.changeIdentifier = changeIdentifier
        self.transactionIdentifier = transactionIdentifier
        self.changedPersistentIdentifier = changedPersistentIdentifier
        self.updatedAttributes = updatedAttributes
    }
}
