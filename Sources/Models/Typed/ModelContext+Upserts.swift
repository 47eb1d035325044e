import Snapshot

extension ModelContext {
    /// Replaces, in every registered object's relationships held as references, each instance
    /// an upsert retired (``ModelIdentityMap/rekey(_:to:)``) with the registered instance of
    /// its identifier, so that both sides of every relationship hold the one instance. Runs
    /// only while retired instances exist; costs one look at each registered object's
    /// references then.
    func redirectReferencesToRetiredObjects() throws {
        guard objects.hasRetiredObjects else { return }
        for (_, object) in objects.registeredObjects { try redirectReferences(of: object) }
    }

    private func redirectReferences<Model: EntityModel>(of object: Model) throws {
        var object = object
        for property in Model.modelProperties where property.destinationModel != nil {
            guard property.relatedObjects(object).contains(where: objects.isRetired) else { continue }
            // Reading gives identifiers (a retired instance carries its successor's), and
            // writing resolves each through the identity map: to the registered instance.
            try property.write(&object, property.read(object), objects)
        }
    }

    /// Refuses a class instance that is not the registered object of its identifier (one an
    /// upsert retired, or an instance made outside this context for a stored object).
    func requireRegisteredInstance<Model: EntityModel>(_ model: Model) throws {
        guard Model.self is AnyObject.Type, let registered = objects.registeredObject(for: model.persistentModelID),
            (registered as AnyObject) !== (model as AnyObject)
        else { return }
        let id = model.persistentModelID
        let reason =
            objects.isRetired(model)
            ? "an upsert saved it into the object this context already held for \(id), which stands for it now"
            : "this context holds another instance for \(id)"
        throw DataStoreError(
            .invalidRequest,
            "This \(Model.self) instance is not the one this context tracks: \(reason). Change that instance instead (context.model(\(Model.self).self, for: id) returns it).",
            entityName: id.entityName, identifier: id)
    }
}
