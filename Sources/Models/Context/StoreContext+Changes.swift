import Snapshot

extension StoreContext {
    /// Stages a new object. `snapshot` carries a temporary identifier
    /// (``PersistentIdentifier/temporary(entityName:)``); properties it leaves out get their
    /// defaults (an attribute's default value or null, an empty relationship), as the store
    /// gives them.
    ///
    /// - Returns: the object's temporary identifier.
    /// - Throws: ``DataStoreError/Code/invalidRequest`` for a permanent identifier, an abstract
    ///   entity or an identifier already inserted; ``ContainerError/Code/unknownEntity``;
    ///   ``DataStoreError/Code/unknownProperty`` for a property the entity does not have.
    @discardableResult
    public func insert(_ snapshot: DefaultSnapshot) throws -> PersistentIdentifier {
        let id = snapshot.persistentIdentifier
        guard id.isTemporary, inserts[id] == nil, remapped[id] == nil else {
            throw DataStoreError(
                .invalidRequest, "\(id) is not a new temporary identifier; insert new objects under PersistentIdentifier.temporary(entityName:).",
                entityName: id.entityName, identifier: id)
        }
        let entity = try requireEntity(id.entityName)
        guard !entity.isAbstract else {
            throw DataStoreError(
                .invalidRequest, "\(entity.name) is abstract; insert an object of one of its sub-entities.", entityName: entity.name, identifier: id)
        }
        try checkProperties(snapshot.values.keys, of: id)
        var full = DefaultSnapshot(persistentIdentifier: id, values: template(of: id.entityName).defaults)
        full.values.merge(snapshot.values) { _, new in new }
        insertOrder.append(id)
        inserts[id] = full
        return id
    }

    /// Stages new values for the properties named in `values` of the object `identifier` (a
    /// pending insert, or a stored object, read from its store when not registered).
    ///
    /// - Throws: ``DataStoreError/Code/danglingReference`` when the object does not exist or is
    ///   pending deletion; ``DataStoreError/Code/unknownProperty``; the store's errors.
    public func update(_ identifier: PersistentIdentifier, _ values: [String: PropertyValue]) throws {
        let id = current(identifier)
        try checkProperties(values.keys, of: id)
        if var inserted = inserts[id] {
            inserted.values.merge(values) { _, new in new }
            inserts[id] = inserted
            return
        }
        guard var base = try snapshot(for: id) else {
            throw DataStoreError(
                .danglingReference, "\(id) is not in its store or is pending deletion; insert it instead.", entityName: id.entityName, identifier: id)
        }
        base.values.merge(values) { _, new in new }
        if updates[id] == nil { updateOrder.append(id) }
        updates[id] = base
        changedKeys[id, default: []].formUnion(values.keys)
    }

    /// Stages the value of one property; see ``update(_:_:)``.
    public func setValue(_ value: PropertyValue, forKey name: String, of identifier: PersistentIdentifier) throws {
        try update(identifier, [name: value])
    }

    /// Discards every pending insert, update and delete; registered objects keep the values
    /// last read or saved. The temporary identifiers of discarded inserts name nothing after.
    public func rollback() {
        insertOrder = []
        inserts = [:]
        updateOrder = []
        updates = [:]
        changedKeys = [:]
        deleteOrder = []
        deletes = []
    }

    func requireEntity(_ name: String) throws -> Schema.Entity {
        guard let entity = schema.entity(named: name) else {
            throw ContainerError(.unknownEntity, "The schema declares no entity \(name); use a declared name.", entityName: name)
        }
        return entity
    }

    /// The defaults and property names of `entityName` (declared, as the schema says).
    func template(of entityName: String) -> (defaults: [String: PropertyValue], names: Set<String>) {
        if let known = templates[entityName] { return known }
        var defaults: [String: PropertyValue] = [:]
        for property in schema.allProperties(of: entityName) {
            switch property {
            case .attribute(let a): defaults[a.name] = a.defaultValue ?? .null
            case .relationship(let r): defaults[r.name] = r.isToMany ? .toMany([]) : .toOne(nil)
            }
        }
        let made = (defaults: defaults, names: Set(defaults.keys))
        templates[entityName] = made
        return made
    }

    func checkProperties(_ names: some Sequence<String>, of id: PersistentIdentifier) throws {
        _ = try requireEntity(id.entityName)
        let known = template(of: id.entityName).names
        for name in names where !known.contains(name) {
            throw DataStoreError(
                .unknownProperty, "\(id.entityName) neither declares nor inherits \(name); use a property of the schema.",
                entityName: id.entityName, propertyName: name, identifier: id)
        }
    }
}
