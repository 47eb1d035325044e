import Snapshot

extension ModelContext {
    /// Whether `model` was deleted in this context, as SwiftData's `isDeleted`: a
    /// ``ModelObject`` answers as its own ``ModelObject/isDeleted`` (still true after the save
    /// that deleted it); any other model (a struct, or a class that does not inherit
    /// `ModelObject`) is deleted while its deletion is pending in this context, from
    /// ``delete(_:)`` (of it or of an object whose `cascade` rule reaches it) to the next save or
    /// rollback.
    public func isDeleted<Model: EntityModel>(_ model: Model) -> Bool {
        if let object = model as? ModelObject { return object.isDeleted }
        let id = storeContext.current(model.persistentModelID)
        return deletedObjects[id] != nil || storeContext.deletes.contains(id)
    }

    /// Whether `model` has changes this context has not saved, as SwiftData's `hasChanges`: it
    /// is a pending insert, pending deletion, has staged updates, or a declared property differs
    /// from what the context last knew of it. `false` for an object the context does not track
    /// (never inserted, or a class instance other than the one it holds for the identifier).
    public func hasChanges<Model: EntityModel>(_ model: Model) -> Bool {
        let id = storeContext.current(model.persistentModelID)
        if Model.self is AnyObject.Type {
            let tracked = objects.registeredObject(for: id) ?? deletedObjects[id]?.object
            guard let tracked, (tracked as AnyObject) === (model as AnyObject) else { return false }
        }
        if deletedObjects[id] != nil || storeContext.deletes.contains(id) || storeContext.inserts[id] != nil { return true }
        if !storeContext.changedProperties(of: id).isEmpty { return true }
        guard let known = storeContext.registeredSnapshot(for: id) else { return false }
        return !Self.changes(of: model, from: known).isEmpty
    }

    /// Refuses a save while an object deleted in this context has been changed since its
    /// deletion: the change would be dropped without a word.
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/conflictingChanges`` naming the first such
    ///   object (in identifier order), a property it changed, and every other such object.
    func checkDeletedObjectsUnchanged() throws {
        guard !deletedObjects.isEmpty else { return }
        var changed: [(id: PersistentIdentifier, properties: [String])] = []
        for (id, deleted) in deletedObjects {
            let properties = deleted.object.changedValues(from: deleted.values).keys.sorted()
            if !properties.isEmpty { changed.append((id, properties)) }
        }
        guard let first = changed.min(by: { $0.id < $1.id }) else { return }
        let others = changed.map(\.id).filter { $0 != first.id }.sorted()
        let more =
            others.isEmpty
            ? ""
            : " (and \(others.count) more deleted object\(others.count == 1 ? "" : "s") changed: \(others.map(\.description).joined(separator: ", ")))"
        throw DataStoreError(
            .conflictingChanges,
            "\(first.id) was deleted in this context (by delete(_:) or a cascade) and then its \(first.properties.joined(separator: ", ")) changed\(more); a deleted object's changes cannot be saved. Set the values back, or rollback() to undo the deletion too; nothing was saved.",
            entityName: first.id.entityName, propertyName: first.properties.first, identifier: first.id, relatedIdentifiers: others)
    }
}
