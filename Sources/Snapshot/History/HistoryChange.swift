/// One change of a transaction, as SwiftData's `HistoryChange`: an object inserted, updated or
/// deleted.
public enum HistoryChange: Hashable, Sendable {
    /// The object was inserted.
    case insert(HistoryInsert)
    /// Properties of the object changed.
    case update(HistoryUpdate)
    /// The object was deleted.
    case delete(HistoryDelete)

    /// The object the change is about.
    public var changedPersistentIdentifier: PersistentIdentifier {
        switch self {
        case .insert(let c): c.changedPersistentIdentifier
        case .update(let c): c.changedPersistentIdentifier
        case .delete(let c): c.changedPersistentIdentifier
        }
    }

    /// The change's position in its transaction.
    public var changeIdentifier: Int {
        switch self {
        case .insert(let c): c.changeIdentifier
        case .update(let c): c.changeIdentifier
        case .delete(let c): c.changeIdentifier
        }
    }
}
