extension SavePlanner {
    /// How the save changes the number of objects of each concrete entity: +1 per new object
    /// (an upsert is an update, not counted), −1 per stored object it deletes (cascades
    /// included). Call once ``plan(_:)`` has returned.
    func countChanges() -> [String: Int] {
        var changes: [String: Int] = [:]
        for id in inserted where !deleted.contains(id) { changes[id.entityName, default: 0] += 1 }
        for id in deleted { changes[id.entityName, default: 0] -= 1 }
        return changes
    }
}
