import Snapshot

extension EntityModel {
    /// The model's values as a snapshot under its ``PersistentModel/persistentModelID``: every
    /// declared property, relationships as identifiers.
    public var snapshot: DefaultSnapshot {
        if let subclass = Self.subclassModel(of: self), let snapshot = subclass.snapshot(ofInstance: self) { return snapshot }
        var values: [String: PropertyValue] = [:]
        for property in Self.modelProperties { values[property.name] = property.read(self) }
        return DefaultSnapshot(persistentIdentifier: persistentModelID, values: values)
    }

    /// Sets the identifier and every declared property from `snapshot` (a property the
    /// snapshot does not hold is null), turning relationship identifiers into model references
    /// through `resolver`. (An instance of a subclass model, held as its superclass, is set as
    /// its own class: its own properties included.)
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/typeMismatch`` when a value does not fit its
    ///   property's type (the model then holds the properties set before it);
    ///   ``Snapshot/DataStoreError/Code/unknownEntity`` when the snapshot is of another entity;
    ///   the resolver's errors.
    public mutating func update(from snapshot: DefaultSnapshot, resolver: any ModelResolver = IdentifierOnlyResolver()) throws {
        if let subclass = Self.subclassModel(of: self) {
            try subclass.update(instance: self, from: snapshot, resolver: resolver)
            return
        }
        guard snapshot.persistentIdentifier.entityName == Self.entityName else {
            throw DataStoreError(
                .unknownEntity,
                "A snapshot of \(snapshot.persistentIdentifier.entityName) cannot fill a \(Self.self) (entity \(Self.entityName)); fetch it as its own model type.",
                entityName: snapshot.persistentIdentifier.entityName, identifier: snapshot.persistentIdentifier)
        }
        persistentModelID = snapshot.persistentIdentifier
        for property in Self.modelProperties {
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

extension EntityModel {
    /// The relationships held as model references, by name, and the model type each reaches.
    static var referencedModelTypes: [String: any EntityModel.Type] {
        var types: [String: any EntityModel.Type] = [:]
        for property in modelProperties { if let destination = property.destinationModel { types[property.name] = destination } }
        return types
    }

    /// The model objects this object's relationships held as references reach.
    var relatedModelObjects: [any EntityModel] {
        if let subclass = Self.subclassModel(of: self), let related = subclass.relatedModelObjects(ofInstance: self) { return related }
        return Self.modelProperties.flatMap { $0.relatedObjects(self) }.map(\.boxedAsOwnClass)
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
        if let subclass = Self.subclassModel(of: self), let changed = subclass.changedValues(ofInstance: self, from: current) { return changed }
        var changed: [String: PropertyValue] = [:]
        for property in Self.modelProperties {
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

// A class model instance may be held as one of its superclass models (`let media: Media =
// Photo()`); generic code then sees `Self` as the superclass. These reopen it as its own class,
// so what is read and written is all of its properties.
extension EntityModel {
    /// The model type of `object` when it is an instance of a subclass of `Self`.
    static func subclassModel(of object: Self) -> (any EntityModel.Type)? {
        // A struct's (and an exact instance's) own type is `Self`: one comparison.
        let ownType: Any.Type = type(of: object)
        guard ownType != Self.self else { return nil }
        return ownType as? any EntityModel.Type
    }

    /// The object as an existential of its own class (not of the superclass model it is held as),
    /// so that code opening it sees its own properties.
    var boxedAsOwnClass: any EntityModel {
        guard let subclass = Self.subclassModel(of: self) else { return self }
        return subclass.boxed(self) ?? self
    }

    private static func boxed(_ object: Any) -> (any EntityModel)? { object as? Self }

    private static func snapshot(ofInstance object: Any) -> DefaultSnapshot? { (object as? Self)?.snapshot }

    private static func relatedModelObjects(ofInstance object: Any) -> [any EntityModel]? { (object as? Self)?.relatedModelObjects }

    private static func changedValues(ofInstance object: Any, from current: DefaultSnapshot) -> [String: PropertyValue]? {
        (object as? Self)?.changedValues(from: current)
    }

    private static func update(instance object: Any, from snapshot: DefaultSnapshot, resolver: any ModelResolver) throws {
        guard var instance = object as? Self else { return }
        try instance.update(from: snapshot, resolver: resolver)
    }
}
