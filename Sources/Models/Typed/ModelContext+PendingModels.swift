import Snapshot

extension ModelContext {
    /// The objects inserted into this context and not yet saved (the new objects an insert
    /// reached included), in the order inserted: SwiftData's `insertedModelsArray`.
    public var insertedModelsArray: [any EntityModel] {
        let registered = objects.registeredObjects
        return storeContext.insertedIdentifiers.compactMap { registered[$0] }
    }

    /// The stored objects this context holds with changes it has not saved — staged updates
    /// first, in the order first changed, then objects whose properties differ from what the
    /// context last knew, in identifier order — neither inserted nor deleted: SwiftData's
    /// `changedModelsArray`. Found by comparison, as a save finds them (``hasChanges``).
    public var changedModelsArray: [any EntityModel] {
        let registered = objects.registeredObjects
        let staged = storeContext.changedIdentifiers
        let stagedSet = Set(staged)
        let inserted = Set(storeContext.insertedIdentifiers)
        let deleted = Set(storeContext.deletedIdentifiers)
        var result = staged.filter { !deleted.contains($0) }.compactMap { registered[$0] }
        for id in registered.keys.sorted() where !stagedSet.contains(id) && !inserted.contains(id) && !deleted.contains(id) {
            guard let object = registered[id], let known = storeContext.registeredSnapshot(for: id) else { continue }
            if !Self.changes(of: object, from: known).isEmpty { result.append(object) }
        }
        return result
    }

    /// The objects deleted in this context and not yet saved (cascades included), in the order
    /// deleted: SwiftData's `deletedModelsArray`. A struct model's deletion is listed by the
    /// value the context holds for it, when it holds one.
    public var deletedModelsArray: [any EntityModel] {
        let registered = objects.registeredObjects
        return storeContext.deletedIdentifiers.compactMap { deletedObjects[$0]?.object ?? registered[$0] }
    }
}
