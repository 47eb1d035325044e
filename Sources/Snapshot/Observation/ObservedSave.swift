/// What one committed write tells the store's observers: its changes as history records them
/// (entity, primary key, kind, changed property names), and its history token when history is on.
struct ObservedSave: Sendable {
    var changes: [HistoryRecord.Change]
    /// The transaction's number, when the store recorded one.
    var token: UInt64?
    /// Whether the write may have changed any object (an erase): every observed fetch re-runs.
    var changesEverything = false

    static let erased = ObservedSave(changes: [], token: nil, changesEverything: true)
}

