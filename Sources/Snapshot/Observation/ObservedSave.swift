import Foundation

/// What one committed write tells the store's observers: its changes as history records them
/// (entity, primary key, kind, changed property names), and its history token when history is on.
struct ObservedSave: Sendable {
    var changes: [HistoryRecord.Change]
    /// The new objects' saved state (defaults applied), by primary key: an insert a fetch's
    /// predicate rejects cannot change its answer.
    var inserted: [UUID: DefaultSnapshot] = [:]
    /// The transaction's number, when the store recorded one.
    var token: UInt64?
    /// Whether the write may have changed any object (an erase): every observed fetch re-runs.
    var changesEverything = false

    static let erased = ObservedSave(changes: [], token: nil, changesEverything: true)

    /// The changes of `planner`'s save, with its new objects.
    init(_ changes: [HistoryRecord.Change], of planner: SavePlanner, token: UInt64?) throws {
        self.changes = changes
        self.token = token
        for id in planner.inserted {
            if let pk = RecordMapper.primaryKey(of: id), let s = try planner.whole(id) { inserted[pk] = s }
        }
    }

    init(changes: [HistoryRecord.Change], token: UInt64?, changesEverything: Bool) {
        self.changes = changes
        self.token = token
        self.changesEverything = changesEverything
    }
}
