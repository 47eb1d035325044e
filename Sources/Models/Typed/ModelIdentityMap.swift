import Snapshot

/// One model object per identifier, made from snapshots on first use: the resolver a context
/// uses, so relationships between fetched objects (cycles included) resolve to the same
/// instances.
///
/// Without macros a model cannot fault on property access, so making an object makes, through
/// this map, every object its relationships held as references reach; ``load`` is asked for the
/// snapshots the map does not hold yet, a batch at a time.
package final class ModelIdentityMap: ModelResolver {
    /// Fetches the snapshots of identifiers the map does not hold (those it cannot find are
    /// missing from the result).
    package typealias Loader = ([PersistentIdentifier]) throws -> [DefaultSnapshot]

    private var snapshots: [PersistentIdentifier: DefaultSnapshot] = [:]
    private var objects: [PersistentIdentifier: any PersistentModel] = [:]
    private var filling: Set<PersistentIdentifier> = []
    private let load: Loader

    /// A map that fetches what it lacks through `load`.
    package init(load: @escaping Loader) {
        self.load = load
    }

    /// Makes `snapshots` known, replacing older values of objects not yet made.
    package func add(_ snapshots: some Sequence<DefaultSnapshot>) {
        for snapshot in snapshots { self.snapshots[snapshot.persistentIdentifier] = snapshot }
    }

    /// Registers `object` as the one object of its identifier.
    package func register<Model: PersistentModel>(_ object: Model) {
        objects[object.persistentModelID] = object
    }

    /// The registered objects that are instances of classes (the ones a context can track),
    /// by identifier.
    package var registeredObjects: [PersistentIdentifier: any PersistentModel] {
        objects.filter { type(of: $0.value) is AnyObject.Type }
    }

    /// Registers the object of `old` under `new` (after a save made `old` permanent), and
    /// gives a class object the new identifier.
    package func rekey(_ old: PersistentIdentifier, to new: PersistentIdentifier) {
        guard var object = objects.removeValue(forKey: old) else { return }
        if type(of: object) is AnyObject.Type { object.persistentModelID = new }
        objects[new] = object
    }

    /// Forgets every snapshot held for making objects (objects stay registered).
    package func clearSnapshots() { snapshots = [:] }

    /// Forgets the object of `identifier` (after a delete, or a remap).
    package func forget(_ identifier: PersistentIdentifier) {
        objects[identifier] = nil
        snapshots[identifier] = nil
    }

    /// The registered object of `identifier` when it is an instance of a class.
    package func registeredObject(for identifier: PersistentIdentifier) -> (any PersistentModel)? {
        guard let object = objects[identifier], type(of: object) is AnyObject.Type else { return nil }
        return object
    }

    /// Whether an object of `identifier` is registered.
    package func isRegistered(_ identifier: PersistentIdentifier) -> Bool { objects[identifier] != nil }

    /// The registered object of `identifier`, when there is one of type `Model`.
    package func registered<Model: PersistentModel>(_ type: Model.Type, for identifier: PersistentIdentifier) -> Model? {
        objects[identifier] as? Model
    }

    /// The object `identifier` names: the registered one, or one made from its snapshot (and
    /// registered before its relationships are resolved).
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/danglingReference`` when no snapshot of it
    ///   can be found; ``Snapshot/DataStoreError/Code/typeMismatch`` when it is registered as
    ///   another type, or when a struct model refers back to itself through its references
    ///   (only classes can be in cycles); the conversion's errors.
    package func model<Destination: PersistentModel>(_ type: Destination.Type, for identifier: PersistentIdentifier) throws -> Destination {
        if let object = objects[identifier] {
            guard let model = object as? Destination else {
                throw DataStoreError(
                    .typeMismatch, "\(identifier) is already a \(Swift.type(of: object)), not a \(Destination.self); declare the relationship with the model type of its entity.",
                    entityName: identifier.entityName, identifier: identifier)
            }
            return model
        }
        guard !filling.contains(identifier) else {
            throw DataStoreError(
                .typeMismatch, "\(identifier) refers back to itself through relationships of a struct model; hold such relationships as identifiers, or make the model a class.",
                entityName: identifier.entityName, identifier: identifier)
        }
        if snapshots[identifier] == nil { add(try load([identifier])) }
        guard let snapshot = snapshots[identifier] else {
            throw DataStoreError(
                .danglingReference, "No object \(identifier) was found; it was deleted, or belongs to a store this context does not read.",
                entityName: identifier.entityName, identifier: identifier)
        }
        var model = Destination()
        model.persistentModelID = identifier
        if Destination.self is AnyObject.Type { objects[identifier] = model }
        filling.insert(identifier)
        defer { filling.remove(identifier) }
        do {
            try model.update(from: snapshot, resolver: self)
        } catch {
            objects[identifier] = nil
            throw error
        }
        objects[identifier] = model
        return model
    }
}
