import Snapshot

extension StoreContext {
    /// Saves every pending change through the container, as one save (atomic across stores:
    /// ``StoreContainer/save(_:)``), one request per store; then registers the saved objects
    /// under their permanent identifiers, rewrites every reference the context holds to a
    /// temporary identifier of the save, and registers the objects the save changed otherwise
    /// (``StoreContainer/SaveResult/snapshotsToReregister``). Updates state only the
    /// properties changed. Nothing is pending afterwards.
    ///
    /// When it returns, the save is as durable as ``StoreContainer/save(_:)`` says. If it
    /// throws, no store changed and every change stays pending (fix it, or ``rollback()``).
    ///
    /// An insert whose unique values match a stored object is saved into that object (an
    /// upsert): the result maps its temporary identifier to the stored object's. Two pending
    /// inserts that share unique values are refused before anything is saved (see below).
    ///
    /// - Returns: every inserted temporary identifier → its permanent identifier.
    /// - Throws: ``Snapshot/DataStoreError/Code/uniqueness`` when two pending inserts share the
    ///   values of a uniqueness rule (naming both, the entity and the rule), with nothing saved;
    ///   as ``StoreContainer/save(_:)``.
    @discardableResult
    public func save() throws -> [PersistentIdentifier: PersistentIdentifier] {
        guard hasChanges else { return [:] }
        try checkInsertsShareNoUniqueValues()
        let request = DataStoreSaveChangesRequest(
            inserted: insertOrder.map { inserts[$0]! },
            updated: updateOrder.map { updates[$0]!.keeping(Array(changedKeys[$0] ?? [])) },
            deleted: deleteOrder.map { registered[$0] ?? DefaultSnapshot(persistentIdentifier: $0) },
            editingState: editingState)
        let result = try container.save(request)
        let map = result.remappedIdentifiers
        remapped.merge(map) { _, new in new }
        for id in insertOrder {
            guard let permanent = map[id] else { continue }
            registered[permanent] = Self.canonical(inserts[id]!.copy(persistentIdentifier: permanent, remappedIdentifiers: map))
        }
        for id in updateOrder { registered[id] = Self.canonical(updates[id]!.copy(persistentIdentifier: id, remappedIdentifiers: map)) }
        for id in deleteOrder { registered[id] = nil }
        for (id, s) in result.snapshotsToReregister { registered[id] = s }
        rollback()
        return map
    }

    /// `snapshot` with its to-many arrays in the stores' canonical order (entity, then
    /// primary key), as a fetch returns them.
    static func canonical(_ snapshot: DefaultSnapshot) -> DefaultSnapshot {
        var s = snapshot
        for (name, value) in s.values { if case .toMany(let ids) = value { s.values[name] = .toMany(ids.sorted()) } }
        return s
    }
}
