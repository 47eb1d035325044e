import Snapshot

extension ModelContext {
    /// Stages `model` and every new object (temporary identifier, not yet inserted) its
    /// relationships reach, as SwiftData's `insert`.
    ///
    /// Inserting an object already inserted (and not yet saved) does nothing.
    ///
    /// - Throws: ``ContainerError/Code/unknownEntity`` for a model whose entity the container's
    ///   schema does not declare, ``Snapshot/DataStoreError/Code/invalidRequest`` for a model
    ///   already saved or an instance of an abstract ``InheritableModel`` class; nothing is
    ///   staged then.
    public func insert<Model: EntityModel>(_ model: Model) throws {
        try requireRegisteredInstance(model)
        guard model.persistentModelID.isTemporary else {
            let id = model.persistentModelID
            throw DataStoreError(
                .invalidRequest, "\(id) is already saved; change its properties and save instead of inserting it again.",
                entityName: id.entityName, identifier: id)
        }
        var reached: [any EntityModel] = []
        var pending: [any EntityModel] = [model.boxedAsOwnClass]
        var seen: Set<PersistentIdentifier> = []
        while let next = pending.popLast() {
            let id = next.persistentModelID
            guard id.isTemporary, seen.insert(id).inserted, !objects.isRegistered(id) else { continue }
            reached.append(next)
            pending += next.relatedModelObjects
        }
        // An object of an entity the schema lacks (a subclass model not listed) is refused before
        // anything is staged: undoing an insert whose relationships reach it would fail.
        for object in reached { _ = try storeContext.requireEntity(object.persistentModelID.entityName) }
        var inserted: [any EntityModel] = []
        do {
            for next in reached {
                try storeContext.insert(next.snapshot)
                objects.register(next)
                deletedObjects[next.persistentModelID] = nil
                inserted.append(next)
            }
            for object in inserted { _ = try maintainInverses(of: object, from: nil) }
        } catch {
            for object in inserted {
                try? storeContext.delete(object.persistentModelID)
                objects.forget(object.persistentModelID)
            }
            throw error
        }
    }

    /// Stages the properties of `model` that differ from what the context knows of it: how a
    /// struct model (a copy) is written back; a class object's changes are found without it.
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/danglingReference`` when the object is not in
    ///   its store or is pending deletion; ``Snapshot/DataStoreError/Code/invalidRequest`` for a
    ///   class instance that is not the one the context tracks for its identifier (an instance
    ///   an upsert retired: see ``save()``); the store's errors.
    public func update<Model: EntityModel>(_ model: Model) throws {
        try requireRegisteredInstance(model)
        let id = model.persistentModelID
        guard let current = try storeContext.snapshot(for: id) else {
            throw DataStoreError(
                .danglingReference, "\(id) is not in its store or is pending deletion; insert it instead.", entityName: id.entityName, identifier: id)
        }
        let changes = Model.changes(in: model.snapshot, from: current)
        if !changes.isEmpty { try storeContext.update(id, changes) }
        objects.register(model)
    }

    /// Stages the deletion of `model` and what the delete rules imply (``StoreContext/delete(_:)``);
    /// the registered objects then show it (nullified references, cascaded objects gone). The
    /// object and those its `cascade` rules reach are deleted objects from then on
    /// (``isDeleted(_:)``, ``ModelObject/isDeleted``): they keep their values (a cascaded
    /// child still refers to its deleted parent, which reads as deleted), and a change made to
    /// one of them is refused by the next ``save()``.
    ///
    /// As SwiftData's `delete`, it does nothing for an object never inserted (or whose insert
    /// was discarded), one already deleted in this context, and one no longer in its store.
    ///
    /// - Throws: as ``StoreContext/delete(_:)`` (`deleteDenied`), with nothing staged by the
    ///   delete; ``ContainerError/Code/foreignIdentifier`` for an object of another container's
    ///   store.
    public func delete<Model: EntityModel>(_ model: Model) throws {
        try processPendingChanges()
        let id = storeContext.current(model.persistentModelID)
        if id.isTemporary ? storeContext.inserts[id] == nil : try storeContext.snapshot(for: id) == nil { return }
        for deleted in try storeContext.stageDeletion(id) {
            guard let object = objects.registeredObject(for: deleted) else { continue }
            deletedObjects[deleted] = DeletedObject(object: object, values: object.snapshot)
            (object as? ModelObject)?.isDeleted = true
        }
        try refreshRegisteredObjects()
    }

    /// Saves every change: those found on registered objects, then all staged ones, in one
    /// save across the container's stores (``StoreContext/save()``). Afterwards class objects
    /// inserted under temporary identifiers have their permanent ones, and registered objects
    /// hold what was saved (inverses the stores set included).
    ///
    /// When it returns, the save is as durable as ``StoreContainer/save(_:)`` promises; if it
    /// throws, no store changed and the changes stay pending: fix them and save again, or
    /// ``rollback()``.
    ///
    /// **Upserts: one instance per identifier.** An inserted object whose unique values (a
    /// `unique` attribute, a uniqueness constraint) match a stored object is saved into that
    /// object, as SwiftData's upsert: its attributes win, a to-one relationship takes its target
    /// when it has one, a to-many relationship gains its links (the store's rules). When this
    /// context already holds an instance of the stored object, **that instance stays the one
    /// object of the identifier**: it takes the saved values (the links of both included), every
    /// registered object that referred to the inserted instance now refers to it (both sides of
    /// each relationship hold it), and fetches return it. The registered instance is kept, not
    /// the inserted one, because it is the one already spread through the app (in fetched
    /// results, in other objects' relationships, in views), while the inserted one was made a
    /// moment ago at one place the app can see.
    ///
    /// The inserted instance is **retired**: it gets the permanent identifier (so
    /// `context.model(Tag.self, for: tag.persistentModelID)` finds the registered instance),
    /// keeps the values it had, and is no longer tracked — changing it saves nothing,
    /// ``update(_:)`` and ``insert(_:)`` refuse it (`invalidRequest`), and putting it in a
    /// registered object's relationship stages a link to the registered instance, which
    /// replaces it there at the next save. When the context held no instance of the stored
    /// object, the inserted instance becomes that object's one instance, with the saved values.
    ///
    /// **Two inserts with the same unique values** in one save are refused
    /// (``Snapshot/DataStoreError/Code/uniqueness`` naming both temporary identifiers, the
    /// entity and the rule), with nothing saved: both stay pending and the context stays
    /// usable; change or delete one, and save again.
    ///
    /// **Deleted objects.** A property changed on an object deleted in this context (by
    /// ``delete(_:)`` or a cascade) since its deletion is refused, rather than dropped without a
    /// word: the deletion wins, so the change could never be saved. After the save the deleted
    /// objects belong to no context (``ModelObject/modelContext`` is `nil`) and stay
    /// ``ModelObject/isDeleted``.
    ///
    /// - Returns: every inserted temporary identifier → its permanent identifier.
    /// - Throws: ``Snapshot/DataStoreError/Code/conflictingChanges`` when an object deleted in
    ///   this context was changed after its deletion (``Snapshot/DataStoreError/identifier``
    ///   names it, ``Snapshot/DataStoreError/propertyName`` a changed property,
    ///   ``Snapshot/DataStoreError/relatedIdentifiers`` any other deleted object changed); as
    ///   ``StoreContext/save()``. Nothing is saved then and every change stays pending.
    @discardableResult
    public func save() throws -> [PersistentIdentifier: PersistentIdentifier] {
        try processPendingChanges()
        try checkDeletedObjectsUnchanged()
        let remapped = try storeContext.save()
        for deleted in deletedObjects.values { (deleted.object as? ModelObject)?.modelContext = nil }
        deletedObjects = [:]
        for (temporary, permanent) in remapped.sorted(by: { $0.key < $1.key }) { objects.rekey(temporary, to: permanent) }
        try refreshRegisteredObjects()
        return remapped
    }

    /// Discards every pending change; registered objects take back their last saved values,
    /// and objects inserted since are forgotten (their ``ModelObject/modelContext`` is `nil`).
    /// Stored objects deleted since the last save are tracked again, not deleted, with their
    /// saved values.
    ///
    /// - Throws: the stores' errors while reading objects the restored values refer to.
    public func rollback() throws {
        storeContext.rollback()
        for (id, deleted) in deletedObjects {
            if storeContext.registeredSnapshot(for: id) != nil {
                objects.register(deleted.object)
            } else if let object = deleted.object as? ModelObject {
                object.isDeleted = false
                object.modelContext = nil
            }
        }
        deletedObjects = [:]
        try refreshRegisteredObjects()
    }

    /// Stages what changed on registered class objects: new objects their relationships
    /// reach are inserted, and properties that differ from what the context knew are staged as
    /// updates. Fetches, deletes and saves call it first.
    public func processPendingChanges() throws {
        var changed: [PersistentIdentifier: [String: PropertyValue]] = [:]
        for (id, object) in objects.registeredObjects {
            guard let current = storeContext.registeredSnapshot(for: id) else { continue }
            let changes = Self.changes(of: object, from: current)
            if changes.isEmpty { continue }
            changed[id] = changes
            // New objects the changed relationships reach are inserted (with their own reach).
            let reachesNewObjects = changes.values.contains { value in
                value.referencedIdentifiers.contains { $0.isTemporary && !objects.isRegistered($0) }
            }
            guard reachesNewObjects else { continue }
            for related in object.relatedModelObjects
            where related.persistentModelID.isTemporary && !objects.isRegistered(related.persistentModelID) {
                try insertAny(related)
            }
        }
        let adjusted = try maintainInverses(startingWith: changed)
        let registered = objects.registeredObjects
        for id in Set(changed.keys).union(adjusted).sorted() {
            guard let object = registered[id], let current = storeContext.registeredSnapshot(for: id) else { continue }
            let changes = Self.changes(of: object, from: current)
            if !changes.isEmpty { try storeContext.update(id, changes) }
        }
    }

    private func insertAny(_ object: any EntityModel) throws {
        try insert(object)
    }

    /// Gives every registered class object the values the context now holds for it (and
    /// forgets those it no longer holds: deleted, or discarded inserts).
    func refreshRegisteredObjects() throws {
        for (id, object) in objects.registeredObjects {
            guard let current = storeContext.registeredSnapshot(for: id) else {
                objects.forget(id)
                if deletedObjects[id] == nil { (object as? ModelObject)?.modelContext = nil }
                continue
            }
            if !Self.changes(of: object, from: current).isEmpty {
                var updated = object
                try updated.update(from: current, resolver: objects)
            }
        }
        try redirectReferencesToRetiredObjects()
        objects.clearSnapshots()
    }
}
