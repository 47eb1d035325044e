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
    private var objects: [PersistentIdentifier: any EntityModel] = [:]
    private var filling: Set<PersistentIdentifier> = []
    /// Class instances an upsert merged into another registered instance (``rekey(_:to:)``),
    /// by object identity → the identifier of the instance that stands for them now.
    /// (Held weakly: an identifier of a freed instance may be reused by a new one.)
    private var retired: [ObjectIdentifier: Retired] = [:]

    private final class Retired {
        weak var object: AnyObject?
        init(_ object: AnyObject) { self.object = object }
    }

    /// Whether any instance is retired (and still alive).
    package var hasRetiredObjects: Bool {
        retired = retired.filter { $0.value.object != nil }
        return !retired.isEmpty
    }
    private let load: Loader
    /// The context whose objects these are: what a ``ModelObject``'s `modelContext` says once
    /// it is registered here.
    weak var owner: ModelContext?
    /// The schema of the stores the objects come from: which listed class makes a stored
    /// object of a subclass model's entity.
    private let schema: Schema?
    /// The classes found so far for entities of subclass models, by entity and base class.
    private var subclassModels: [SubclassModelKey: any InheritableModel.Type] = [:]

    private struct SubclassModelKey: Hashable {
        let entityName: String
        let base: ObjectIdentifier
    }

    /// A map that fetches what it lacks through `load`, of objects stored as `schema` declares
    /// (`nil`: any class listed for an entity in a schema made from models).
    package init(schema: Schema? = nil, load: @escaping Loader) {
        self.schema = schema
        self.load = load
    }

    /// Makes `snapshots` known, replacing older values of objects not yet made.
    package func add(_ snapshots: some Sequence<DefaultSnapshot>) {
        for snapshot in snapshots { self.snapshots[snapshot.persistentIdentifier] = snapshot }
    }

    /// Registers `object` as the one object of its identifier.
    package func register<Model: EntityModel>(_ object: Model) {
        objects[object.persistentModelID] = object.boxedAsOwnClass
        attach(object)
    }

    /// Makes a ``ModelObject`` name this map's context as its own, not deleted.
    private func attach(_ object: some EntityModel) {
        guard let instance = object as? ModelObject, owner != nil || instance.modelContext != nil else { return }
        instance.modelContext = owner
        instance.isDeleted = false
    }

    /// The registered objects that are instances of classes (the ones a context can track),
    /// by identifier.
    package var registeredObjects: [PersistentIdentifier: any EntityModel] {
        objects.filter { type(of: $0.value) is AnyObject.Type }
    }

    /// Registers the object of `old` under `new` (after a save made `old` permanent), and
    /// gives a class object the new identifier.
    ///
    /// When another instance is already registered under `new` (the save upserted the insert
    /// into an object this map holds), that instance stays the one object of `new`: the
    /// inserted instance is retired (given `new` as its identifier, no longer registered) and
    /// the call returns `true`.
    @discardableResult
    package func rekey(_ old: PersistentIdentifier, to new: PersistentIdentifier) -> Bool {
        guard var object = objects.removeValue(forKey: old) else { return false }
        let isClass = type(of: object) is AnyObject.Type
        if isClass { object.persistentModelID = new }
        if let existing = objects[new], isClass, (existing as AnyObject) !== (object as AnyObject) {
            retired[ObjectIdentifier(object as AnyObject)] = Retired(object as AnyObject)
            (object as? ModelObject)?.modelContext = nil
            return true
        }
        objects[new] = object
        return false
    }

    /// Whether `object` is a class instance an upsert retired in favour of the registered one.
    package func isRetired(_ object: any EntityModel) -> Bool {
        guard !retired.isEmpty, type(of: object) is AnyObject.Type else { return false }
        let instance = object as AnyObject
        return retired[ObjectIdentifier(instance)]?.object === instance
    }

    /// Forgets every snapshot held for making objects (objects stay registered).
    package func clearSnapshots() { snapshots = [:] }

    /// Forgets the object of `identifier` (after a delete, or a remap).
    package func forget(_ identifier: PersistentIdentifier) {
        objects[identifier] = nil
        snapshots[identifier] = nil
    }

    /// The registered object of `identifier` when it is an instance of a class.
    package func registeredObject(for identifier: PersistentIdentifier) -> (any EntityModel)? {
        guard let object = objects[identifier], type(of: object) is AnyObject.Type else { return nil }
        return object
    }

    /// Whether an object of `identifier` is registered.
    package func isRegistered(_ identifier: PersistentIdentifier) -> Bool { objects[identifier] != nil }

    /// The registered object of `identifier`, when there is one of type `Model`.
    package func registered<Model: EntityModel>(_ type: Model.Type, for identifier: PersistentIdentifier) -> Model? {
        objects[identifier] as? Model
    }

    /// The object `identifier` names: the registered one, or one made from its snapshot (and
    /// registered before its relationships are resolved).
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/danglingReference`` when no snapshot of it
    ///   can be found; ``Snapshot/DataStoreError/Code/typeMismatch`` when it is registered as
    ///   another type, or when a struct model refers back to itself through its references
    ///   (only classes can be in cycles); the conversion's errors.
    package func model<Destination: EntityModel>(_ type: Destination.Type, for identifier: PersistentIdentifier) throws -> Destination {
        if let object = objects[identifier] {
            guard let model = object as? Destination else {
                throw DataStoreError(
                    .typeMismatch,
                    "\(identifier) is already a \(Swift.type(of: object)), not a \(Destination.self); declare the relationship with the model type of its entity.",
                    entityName: identifier.entityName, identifier: identifier)
            }
            return model
        }
        guard !filling.contains(identifier) else {
            throw DataStoreError(
                .typeMismatch,
                "\(identifier) refers back to itself through relationships of a struct model; hold such relationships as identifiers, or make the model a class.",
                entityName: identifier.entityName, identifier: identifier)
        }
        if snapshots[identifier] == nil { add(try load([identifier])) }
        guard let snapshot = snapshots[identifier] else {
            throw DataStoreError(
                .danglingReference, "No object \(identifier) was found; it was deleted, or belongs to a store this context does not read.",
                entityName: identifier.entityName, identifier: identifier)
        }
        var model = try makeObject(Destination.self, of: identifier.entityName, for: identifier)
        model.persistentModelID = identifier
        attach(model)
        if Destination.self is AnyObject.Type { objects[identifier] = model.boxedAsOwnClass }
        filling.insert(identifier)
        defer { filling.remove(identifier) }
        do {
            try model.update(from: snapshot, resolver: self)
        } catch {
            objects[identifier] = nil
            throw error
        }
        objects[identifier] = model.boxedAsOwnClass
        return model
    }

    /// The class, a `Base`, listed in a schema made from models for the entity `entityName`
    /// as this map's schema declares it (another schema may list another class under the same
    /// entity name).
    package func subclassModel<Base>(ofEntity entityName: String, kindOf _: Base.Type) -> (any InheritableModel.Type)? {
        let key = SubclassModelKey(entityName: entityName, base: ObjectIdentifier(Base.self))
        if let known = subclassModels[key] { return known }
        let found = ModelTypeRegistry.model(named: entityName, kindOf: Base.self, in: schema)
        subclassModels[key] = found
        return found
    }

    /// A new object for a stored object of `entityName`, to be filled from its snapshot: a
    /// `Destination`, or, for an entity of a subclass model, an instance of that subclass (the
    /// class listed for it in the schema).
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/unknownEntity`` when the entity is not
    ///   `Destination`'s and no subclass of `Destination` was listed for it.
    private func makeObject<Destination: EntityModel>(
        _: Destination.Type, of entityName: String, for identifier: PersistentIdentifier
    ) throws -> Destination {
        guard entityName != Destination.entityName, Destination.self is any InheritableModel.Type else { return Destination() }
        guard let subclass = subclassModel(ofEntity: entityName, kindOf: Destination.self), let object = subclass.init() as? Destination
        else {
            throw DataStoreError(
                .unknownEntity,
                "\(identifier) is a stored \(entityName), and no subclass model of \(Destination.self) for \(entityName) was listed in Schema(models:); list the class of \(entityName) there.",
                entityName: entityName, identifier: identifier)
        }
        return object
    }
}
