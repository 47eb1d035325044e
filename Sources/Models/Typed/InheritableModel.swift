import Snapshot
import Synchronization

/// A class model that other class models may subclass, as SwiftData's `@Model class Media`
/// and `@Model final class Photo: Media`: the root of an entity hierarchy, whose subclasses are
/// its sub-entities.
///
/// A class that subclasses may extend cannot state a `[ModelProperty<Self>]` list (a non-final
/// class cannot witness a requirement of `Self` type), so each class of a hierarchy states what
/// **it** declares in ``declaration``, a `class var` every subclass overrides with its own:
///
/// ```swift
/// class Media: ModelObject, InheritableModel {
///     final var title = ""
///     final var albums: [Album] = []
///     class var declaration: ModelClassDeclaration {
///         ModelClassDeclaration(Media.self, isAbstract: true, properties: [.attribute(\.title), .toMany(\.albums, inverse: \Album.items)])
///     }
/// }
///
/// final class Photo: Media {
///     final var lens = ""
///     override class var declaration: ModelClassDeclaration { ModelClassDeclaration(Photo.self, properties: [.attribute(\.lens)]) }
/// }
/// ```
///
/// From the declarations come the ``EntityModel`` requirements: a class's
/// ``properties`` are those of its superclasses, root first, then its own (so
/// `\Photo.title` names the inherited `title` in a predicate or sort), and its
/// ``PersistentModel/entity`` declares only its own properties, with its superclass's entity
/// as ``Snapshot/Schema/Entity/superentityName``. A class that does not override
/// ``declaration`` is a sub-entity with no properties of its own.
///
/// **Rules.** Stored properties of a class that has subclasses are declared `final var` (a
/// non-final property's key path does not show its name, and an override would not be
/// stored). List every class of the hierarchy that is saved in
/// ``Snapshot/Schema/init(models:)-([any EntityModel.Type])``: that is how a fetch of
/// `Media` knows to make a `Photo` of a stored `Photo`. An abstract class (`isAbstract: true`)
/// has no instances of its own in the store: a context refuses to insert one.
///
/// **Entity names.** Each class's entity is named as the class unless the root declares
/// `class var entityName` and every subclass overrides it with its own name (a subclass that
/// does not would share its superclass's name, which the schema refuses). A `static let
/// entityName` in a subclass is not seen: the subclass takes its conformance from the root.
public protocol InheritableModel: ModelObject, EntityModel {
    /// What this class declares itself: the properties, constraints and indexes it adds to
    /// those it inherits. Every subclass model overrides it, naming itself.
    static var declaration: ModelClassDeclaration { get }
}

/// What one class of an ``InheritableModel`` hierarchy declares itself: whether it is
/// abstract, its own stored properties (those it adds to its superclasses'), its transient
/// properties, its uniqueness constraints and indexes.
public struct ModelClassDeclaration: Sendable {
    /// The class that makes the declaration.
    let model: any InheritableModel.Type
    /// Whether objects of exactly this class may not be saved (only of its subclasses).
    public let isAbstract: Bool
    /// Compound uniqueness constraints among the class's properties (inherited ones included).
    public let uniquenessConstraints: [[String]]
    /// Indexes, as lists of property names.
    public let indexes: [[String]]
    let declared: any DeclaredModelProperties

    /// The declaration of `model`: its own `properties` and `transientProperties` (by key
    /// path, as ``PersistentModel/properties`` and ``PersistentModel/transientProperties``
    /// are), and whether it is abstract.
    public init<Model: InheritableModel>(
        _ model: Model.Type, isAbstract: Bool = false, properties: [ModelProperty<Model>], transientProperties: [PartialKeyPath<Model>] = [],
        uniquenessConstraints: [[String]] = [], indexes: [[String]] = []
    ) {
        self.model = model
        self.isAbstract = isAbstract
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
        self.declared = ClassProperties(properties: properties, transientProperties: transientProperties.map(KeyPathBox.init))
    }

    /// Whether `type` made this declaration (rather than inheriting it from a superclass).
    func isMade(by type: Any.Type) -> Bool { ObjectIdentifier(model) == ObjectIdentifier(type) }
}

/// The properties one class declares, as those of any of its subclasses.
protocol DeclaredModelProperties: Sendable {
    /// The declared properties, as properties of `Subclass` (the declaring class or a subclass).
    func properties<Subclass: EntityModel>(as _: Subclass.Type) -> [ModelProperty<Subclass>]
    /// The declared transient properties, as key paths from `Subclass`.
    func transientProperties<Subclass: EntityModel>(as _: Subclass.Type) -> [PartialKeyPath<Subclass>]
}

private struct ClassProperties<Model: InheritableModel>: DeclaredModelProperties {
    let properties: [ModelProperty<Model>]
    let transientProperties: [KeyPathBox<Model>]

    func properties<Subclass: EntityModel>(as _: Subclass.Type) -> [ModelProperty<Subclass>] {
        if let own = properties as? [ModelProperty<Subclass>] { return own }
        return properties.compactMap { $0.inherited(by: Subclass.self) }
    }

    func transientProperties<Subclass: EntityModel>(as _: Subclass.Type) -> [PartialKeyPath<Subclass>] {
        transientProperties.compactMap { Subclass.keyPath(throughSuperclass: $0.keyPath) }
    }
}

extension InheritableModel {
    /// The properties of the class's superclass models, root first, then its own.
    public static var properties: [ModelProperty<Self>] { layout.properties }

    /// The transient properties of the class and its superclass models.
    public static var transientProperties: [PartialKeyPath<Self>] {
        layout.levels.flatMap { $0.declared.transientProperties(as: Self.self) }
    }

    /// ``properties``, for `Model` the class itself (generic code reaches a subclass's through
    /// it: a class with subclasses cannot state a `[ModelProperty<Self>]` requirement).
    public static func declaredProperties<Model: EntityModel>(of _: Model.Type) -> [ModelProperty<Model>] {
        Model.self == Self.self ? unsafeBitCast(layout.properties, to: [ModelProperty<Model>].self) : []
    }

    /// The names of ``transientProperties``.
    public static var transientPropertyNames: Set<String> {
        Set(transientProperties.compactMap { ModelProperty<Self>.swiftName(of: $0) })
    }

    /// The class's own compound uniqueness constraints (a sub-entity inherits its superclass's).
    public static var uniquenessConstraints: [[String]] { layout.own?.uniquenessConstraints ?? [] }

    /// The class's own indexes.
    public static var indexes: [[String]] { layout.own?.indexes ?? [] }

    /// The entity of the class: its own properties, its superclass's entity as superentity.
    static var hierarchyEntity: Schema.Entity {
        let layout = self.layout
        var attributes: [Schema.Attribute] = []
        var relationships: [Schema.Relationship] = []
        for property in layout.own?.declared.properties(as: Self.self) ?? [] {
            switch property.kind {
            case .attribute(let attribute): attributes.append(attribute)
            case .relationship(let relationship): relationships.append(relationship)
            }
        }
        return Schema.Entity(
            entityName, superentity: layout.superclass?.entityName, isAbstract: layout.own?.isAbstract ?? false, attributes: attributes,
            relationships: relationships, uniquenessConstraints: uniquenessConstraints, indexes: indexes)
    }

    /// The class's place in its hierarchy, worked out once per class.
    static var layout: HierarchyLayout<Self> { HierarchyLayout.of(Self.self) }
}

/// Where a class of an ``InheritableModel`` hierarchy sits: its superclass models and the
/// declarations that make up its properties.
struct HierarchyLayout<Model: InheritableModel>: Sendable {
    /// The declarations the class and its superclass models make themselves, root first.
    let levels: [ModelClassDeclaration]
    /// The class's own declaration, when it overrides ``InheritableModel/declaration``.
    let own: ModelClassDeclaration?
    /// Its superclass model, `nil` for the root.
    let superclass: (any InheritableModel.Type)?
    /// Every property, inherited ones first.
    let properties: [ModelProperty<Model>]

    static func of(_ model: Model.Type) -> HierarchyLayout {
        let key = ObjectIdentifier(model)
        if let cached = hierarchyLayouts.withLock({ $0[key] }) as? HierarchyLayout { return cached }
        var chain: [any InheritableModel.Type] = []
        var mirror: Mirror? = Mirror(reflecting: Model())
        while let current = mirror, let type = current.subjectType as? any InheritableModel.Type {
            chain.insert(type, at: 0)
            mirror = current.superclassMirror
        }
        var levels: [ModelClassDeclaration] = []
        for type in chain {
            let declaration = type.declaration
            if declaration.isMade(by: type) { levels.append(declaration) }
        }
        let own = levels.last.flatMap { $0.isMade(by: model) ? $0 : nil }
        let layout = HierarchyLayout(
            levels: levels, own: own, superclass: chain.dropLast().last,
            properties: levels.flatMap { $0.declared.properties(as: Model.self) })
        hierarchyLayouts.withLock { $0[key] = layout }
        return layout
    }
}

/// Every ``HierarchyLayout`` worked out so far, by class.
private let hierarchyLayouts = Mutex<[ObjectIdentifier: any Sendable]>([:])

/// The hierarchy classes listed in a schema made with
/// ``Snapshot/Schema/init(models:)-([any EntityModel.Type])``, by entity name: how a fetch
/// of a superclass model makes objects of the subclass each stored object belongs to.
enum ModelTypeRegistry {
    private static let types = Mutex<[String: [any InheritableModel.Type]]>([:])

    /// Makes the hierarchy classes among `models` known.
    static func register(_ models: [any EntityModel.Type]) {
        let classes = models.compactMap { $0 as? any InheritableModel.Type }
        guard !classes.isEmpty else { return }
        types.withLock { types in
            for type in classes where !(types[type.entityName] ?? []).contains(where: { ObjectIdentifier($0) == ObjectIdentifier(type) }) {
                types[type.entityName, default: []].append(type)
            }
        }
    }

    /// The registered class of the entity `entityName` that is a `Base` (a subclass of it) and,
    /// given the `schema` of the store the object comes from, declares the entity as that
    /// schema does (two schemas may list different classes under one entity name); `nil` when
    /// none is.
    static func model<Base>(named entityName: String, kindOf _: Base.Type, in schema: Schema?) -> (any InheritableModel.Type)? {
        let candidates = (types.withLock { $0[entityName] } ?? []).filter { $0 is Base.Type }
        guard let schema else { return candidates.last }
        let declared = schema.entity(named: entityName)
        return candidates.last { $0.entity == declared }
    }
}
