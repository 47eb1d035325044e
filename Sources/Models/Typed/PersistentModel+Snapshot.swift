import Snapshot

extension PersistentModel {
    /// The model's values as a snapshot under its ``PersistentModel/persistentModelID``: every
    /// declared property, relationships as identifiers.
    public var snapshot: DefaultSnapshot {
        var values: [String: PropertyValue] = [:]
        for property in Self.properties { values[property.name] = property.read(self) }
        return DefaultSnapshot(persistentIdentifier: persistentModelID, values: values)
    }

    /// Sets the identifier and every declared property from `snapshot` (a property the
    /// snapshot does not hold is null), turning relationship identifiers into model references
    /// through `resolver`.
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/typeMismatch`` when a value does not fit its
    ///   property's type (the model then holds the properties set before it);
    ///   ``Snapshot/DataStoreError/Code/unknownEntity`` when the snapshot is of another entity;
    ///   the resolver's errors.
    public mutating func update(from snapshot: DefaultSnapshot, resolver: any ModelResolver = IdentifierOnlyResolver()) throws {
        guard snapshot.persistentIdentifier.entityName == Self.entityName else {
            throw DataStoreError(
                .unknownEntity, "A snapshot of \(snapshot.persistentIdentifier.entityName) cannot fill a \(Self.self) (entity \(Self.entityName)); fetch it as its own model type.",
                entityName: snapshot.persistentIdentifier.entityName, identifier: snapshot.persistentIdentifier)
        }
        persistentModelID = snapshot.persistentIdentifier
        for property in Self.properties {
            do {
                try property.write(&self, snapshot[property.name] ?? .null, resolver)
            } catch var error as DataStoreError {
                if error.propertyName == nil {
                    error.entityName = Self.entityName
                    error.propertyName = property.name
                }
                error.identifier = error.identifier ?? snapshot.persistentIdentifier
                throw error
            }
        }
    }

    /// A model made from `snapshot`: ``init()``, then ``update(from:resolver:)``.
    public init(snapshot: DefaultSnapshot, resolver: any ModelResolver = IdentifierOnlyResolver()) throws {
        self.init()
        try update(from: snapshot, resolver: resolver)
    }
}

extension PersistentModel {
    /// The relationships held as model references, by name, and the model type each reaches.
    static var referencedModelTypes: [String: any PersistentModel.Type] {
        var types: [String: any PersistentModel.Type] = [:]
        for property in properties { if let destination = property.destinationModel { types[property.name] = destination } }
        return types
    }

    /// The model objects this object's relationships held as references reach.
    var relatedModelObjects: [any PersistentModel] {
        Self.properties.flatMap { $0.relatedObjects(self) }
    }

    /// The properties of `snapshot` whose values differ from `current`'s (to-many
    /// relationships compared as sets: they are unordered), with `snapshot`'s values.
    static func changes(in snapshot: DefaultSnapshot, from current: DefaultSnapshot) -> [String: PropertyValue] {
        var changed: [String: PropertyValue] = [:]
        for (name, value) in snapshot.values where differs(value, current[name] ?? .null) { changed[name] = value }
        return changed
    }

    /// The declared properties of this object whose values differ from `current`'s, with this
    /// object's values (as ``changes(in:from:)`` of its snapshot, without making the snapshot).
    func changedValues(from current: DefaultSnapshot) -> [String: PropertyValue] {
        var changed: [String: PropertyValue] = [:]
        for property in Self.properties {
            let value = property.read(self)
            if Self.differs(value, current[property.name] ?? .null) { changed[property.name] = value }
        }
        return changed
    }

    private static func differs(_ value: PropertyValue, _ old: PropertyValue) -> Bool {
        switch (value, old) {
        case let (.toMany(a), .toMany(b)): return a.count != b.count || (a != b && Set(a) != Set(b))
        case _ where value.isNull && old.isNull: return false
        default: return value != old
        }
    }
}
