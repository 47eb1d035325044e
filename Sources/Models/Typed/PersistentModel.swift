import Snapshot

/// A Swift type whose values are objects of a store: it declares its entity (its properties,
/// by key path) and converts to and from a ``DefaultSnapshot``.
///
/// A model is a `final class` (as SwiftData's models are; relationships to it can then be held
/// as references, and objects can refer to each other in cycles), a class of a hierarchy of
/// class models (``InheritableModel``: `class Media` and `final class Photo: Media`), or a
/// struct (whose relationships are held as identifiers). It needs an `init()` (every stored property with a
/// default value: the model layer makes an instance, then fills it from a snapshot), its
/// identifier, and its property list. A class gets the first two from ``ModelObject``:
///
/// ```swift
/// final class Post: ModelObject, PersistentModel {
///     var title = ""
///     var date = Date.distantPast
///     var tags: [Tag] = []
///     static let properties: [ModelProperty<Post>] = [.attribute(\.title), .attribute(\.date), .toMany(\.tags, inverse: \Tag.posts)]
/// }
/// ```
///
/// From the list come the entity (``entity``), the snapshot conversion (``snapshot``,
/// ``init(snapshot:resolver:)``) and the key-path map that `#Predicate` and `SortDescriptor`
/// translation reads (``propertyNames``). Without macros the list is written by hand; a key
/// path it does not name cannot be used in a predicate or sort (the translation says which).
///
/// **No silent loss.** A stored property the list leaves out would not be saved, so
/// ``Snapshot/Schema/init(models:)-([any EntityModel.Type])`` refuses it (reflecting on an
/// instance made with `init()`) unless ``transientProperties`` names it, as SwiftData's
/// `@Transient` does. A `lazy var` counts as transient: it is recomputed, never saved.
public protocol PersistentModel: EntityModel {
    /// The stored properties, in declaration order: attributes and relationships.
    static var properties: [ModelProperty<Self>] { get }
    /// Stored properties that are not saved (caches, state of the app's own), by key path: a
    /// new or fetched object has their `init()` values. None unless declared.
    static var transientProperties: [PartialKeyPath<Self>] { get }
    /// Uniqueness constraints and indexes, declared by key path (``ModelConstraint``): they
    /// join ``EntityModel/uniquenessConstraints`` and ``EntityModel/indexes``. None unless
    /// declared.
    static var constraints: [ModelConstraint<Self>] { get }
}

/// What every model type is — a ``PersistentModel`` (a final class or a struct) or a class of
/// an ``InheritableModel`` hierarchy — and what generic code over models (`FetchDescriptor`,
/// `ModelContext`'s methods, ``ModelProperty``) takes.
///
/// A model does not conform to it directly: those two protocols provide
/// ``declaredProperties(of:)`` and ``transientPropertyNames`` from what the model declares.
/// (Its requirements do not name `Self` in a list, so that a class with subclasses can meet them.)
public protocol EntityModel: SendableMetatype {
    /// The entity's name; the type's name unless declared.
    static var entityName: String { get }
    /// Compound uniqueness constraints, as lists of property names (a single unique attribute
    /// is declared with ``Snapshot/Schema/Attribute/Options/unique`` instead; a
    /// ``PersistentModel`` can declare both by key path, ``PersistentModel/constraints``). None
    /// unless declared.
    static var uniquenessConstraints: [[String]] { get }
    /// Indexes, as lists of property names (or by key path, ``PersistentModel/constraints``).
    /// None unless declared.
    static var indexes: [[String]] { get }
    /// Every stored property of the model (inherited ones first), as properties of `Model`,
    /// the model type itself; none for another type. ``modelProperties`` reads it.
    static func declaredProperties<Model: EntityModel>(of _: Model.Type) -> [ModelProperty<Model>]
    /// The Swift names of the stored properties that are not saved.
    static var transientPropertyNames: Set<String> { get }

    /// The object's identity: temporary until a save gives it its permanent identifier.
    var persistentModelID: PersistentIdentifier { get set }

    /// A value with every property at its default, and a temporary identifier.
    init()
}

extension PersistentModel {
    /// ``properties``.
    public static func declaredProperties<Model: EntityModel>(of _: Model.Type) -> [ModelProperty<Model>] {
        // The same type: the cast only restates it.
        Model.self == Self.self ? unsafeBitCast(properties, to: [ModelProperty<Model>].self) : []
    }

    /// The names of ``transientProperties``.
    public static var transientPropertyNames: Set<String> {
        Set(transientProperties.compactMap { ModelProperty<Self>.swiftName(of: $0) })
    }

    /// None.
    public static var transientProperties: [PartialKeyPath<Self>] { [] }
}

extension EntityModel {
    /// The type's name.
    public static var entityName: String { String(describing: Self.self) }
    /// None.
    public static var uniquenessConstraints: [[String]] { [] }
    /// None.
    public static var indexes: [[String]] { [] }

    /// Every stored property, in declaration order (a subclass model's inherited ones first):
    /// a ``PersistentModel``'s ``PersistentModel/properties``, or what the classes of an
    /// ``InheritableModel`` hierarchy declare.
    public static var modelProperties: [ModelProperty<Self>] { declaredProperties(of: Self.self) }

    /// The entity the model declares: its attributes and relationships in the order of
    /// ``properties``, its constraints and indexes.
    public static var entity: Schema.Entity {
        if let hierarchyClass = Self.self as? any InheritableModel.Type { return hierarchyClass.hierarchyEntity }
        var attributes: [Schema.Attribute] = []
        var relationships: [Schema.Relationship] = []
        for property in modelProperties {
            switch property.kind {
            case .attribute(let attribute): attributes.append(attribute)
            case .relationship(let relationship): relationships.append(relationship)
            }
        }
        let byKeyPath: (unique: [[String]], indexes: [[String]]) = (Self.self as? any PersistentModel.Type)?.constraintPropertyNames ?? ([], [])
        return Schema.Entity(
            entityName, attributes: attributes, relationships: relationships, uniquenessConstraints: uniquenessConstraints + byKeyPath.unique,
            indexes: indexes + byKeyPath.indexes)
    }

    /// Every declared key path and the name of the property it stands for. A property a class
    /// model inherits from a superclass model is held under its ``ModelProperty/keyPath``, a key
    /// path through the superclass, so `\Photo.title` as the app writes it is not a key here
    /// (predicates, sorts and prefetching match it by name all the same).
    public static var propertyNames: [PartialKeyPath<Self>: String] {
        Dictionary(modelProperties.map { ($0.keyPath, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// The declared property at `keyPath`, when there is one.
    static func property(at keyPath: AnyKeyPath) -> ModelProperty<Self>? {
        modelProperties.first { $0.isDeclared(at: keyPath) }
    }

    /// Whether `keyPath` reads ``persistentModelID``: it reads a fresh identifier back from a
    /// probe instance given it. (A key path made in generic code, `\Self.persistentModelID`,
    /// goes through the protocol requirement and never equals the concrete `\Post.persistentModelID`.)
    static func isIdentifierKeyPath(_ keyPath: AnyKeyPath) -> Bool {
        if keyPath == \Self.persistentModelID as AnyKeyPath { return true }
        guard let identifierPath = keyPath as? KeyPath<Self, PersistentIdentifier> else { return false }
        var probe = Self()
        let marker = PersistentIdentifier.temporary(entityName: entityName)
        probe.persistentModelID = marker
        return probe[keyPath: identifierPath] == marker
    }
}

extension EntityModel {
    /// Refuses a model that would lose data silently: a stored property (as reflection on an
    /// `init()` instance shows it) that neither ``properties`` nor ``transientProperties``
    /// names, or a property whose name could not be read from its key path.
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/invalidSchema`` naming the model's entity and the
    ///   property.
    static func checkDeclaresEveryStoredProperty() throws {
        try (Self.self as? any PersistentModel.Type)?.checkConstraintKeyPaths()
        let properties = modelProperties
        for property in properties where property.name.isEmpty {
            throw DataStoreError(
                .invalidSchema,
                "\(Self.self) declares the property at \(property.keyPath) without a name, and the key path does not show one; pass its name (.attribute(keyPath, \"name\")), or, in a class that has subclasses, declare the property final var (the key path of an overridable property does not show its name).",
                entityName: entityName)
        }
        var declared: Set<String> = ["persistentModelID"]
        for property in properties { if let name = property.swiftName { declared.insert(name) } }
        declared.formUnion(transientPropertyNames)
        var mirror: Mirror? = Mirror(reflecting: Self())
        while let current = mirror, current.subjectType != ModelObject.self {
            for child in current.children {
                guard let label = child.label else { continue }
                // A lazy property is recomputed, never saved (its key path does not show its
                // name either); property-wrapper storage stands for the property it backs.
                if label.hasPrefix("$__lazy_storage_$_") { continue }
                var name = label
                if name.hasPrefix("_"), declared.contains(String(name.dropFirst())) { name.removeFirst() }
                guard !declared.contains(name) else { continue }
                throw DataStoreError(
                    .invalidSchema,
                    "\(Self.self) has a stored property \(name) that its properties list leaves out, so it would never be saved; declare it there (.attribute(\\.\(name)) or a relationship), or list it in transientProperties if it is not meant to be saved.",
                    entityName: entityName, propertyName: name)
            }
            mirror = current.superclassMirror
        }
    }
}

/// A base class for class models: it holds the ``PersistentModel/persistentModelID`` (temporary,
/// of the model's entity, until a save) and provides the `init()` a model needs, so a model
/// declares only its properties and their list.
///
/// A subclass whose stored properties all have default values inherits `init()`; one that
/// declares a designated initializer of its own writes `required init() { super.init() }` too
/// (or makes its initializers `convenience`, calling `self.init()`).
///
/// **State, as SwiftData's models report it** (a model that does not inherit `ModelObject` asks
/// its context instead: ``ModelContext/isDeleted(_:)``, ``ModelContext/hasChanges(_:)``):
/// ``modelContext`` (the context that tracks the object), ``isDeleted`` and ``hasChanges``.
open class ModelObject {
    /// The object's identity: temporary until a save gives it its permanent identifier.
    public final var persistentModelID: PersistentIdentifier

    /// The context that tracks the object, as SwiftData's `modelContext`: the one it was
    /// inserted into or fetched from. `nil` for an object never inserted, an insert that was
    /// rolled back or deleted before any save, an object whose deletion was saved, and an
    /// instance an upsert retired (``ModelContext/save()``). Held weakly: the context does not
    /// outlive its last use because an object refers to it.
    public internal(set) final weak var modelContext: ModelContext?

    /// Whether the object was deleted in its context, as SwiftData's `isDeleted`: true from
    /// ``ModelContext/delete(_:)`` (of it, or of an object whose `cascade` rule reaches it) on,
    /// and still after the save that deletes it (its ``modelContext`` is then `nil`); false again
    /// after a ``ModelContext/rollback()`` before that save. A change made to a deleted object is
    /// refused by the next save (``Snapshot/DataStoreError/Code/conflictingChanges``).
    public internal(set) final var isDeleted = false

    /// Whether the object has changes its context has not saved, as SwiftData's `hasChanges`:
    /// it is inserted and not yet saved, pending deletion, or a property differs from what was
    /// last saved or fetched. `false` for an object no context tracks.
    public final var hasChanges: Bool {
        guard let modelContext, let model = self as? any EntityModel else { return false }
        return modelContext.hasChanges(model)
    }

    /// An object with a temporary identifier of its model's entity.
    public required init() {
        let type = type(of: self)
        persistentModelID = .temporary(entityName: (type as? any EntityModel.Type)?.entityName ?? String(describing: type))
    }
}
