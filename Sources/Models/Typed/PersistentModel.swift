import Snapshot

/// A Swift type whose values are objects of a store: it declares its entity (its properties,
/// by key path and name) and converts to and from a ``DefaultSnapshot``.
///
/// A model is a `final class` (as SwiftData's models are; relationships to it can then be held
/// as references, and objects can refer to each other in cycles) or a struct (whose
/// relationships are held as identifiers). It needs an `init()` (every stored property with a
/// default value: the model layer makes an instance, then fills it from a snapshot), its
/// identifier, and its property list:
///
/// ```swift
/// final class Post: PersistentModel {
///     var persistentModelID = PersistentIdentifier.temporary(entityName: "Post")
///     var title = ""
///     var date = Date.distantPast
///     var tags: [Tag] = []
///     init() {}
///
///     static let properties: [ModelProperty<Post>] = [
///         .attribute(\.title, "title"),
///         .attribute(\.date, "date"),
///         .toMany(\.tags, "tags", inverse: "posts"),
///     ]
/// }
/// ```
///
/// From the list come the entity (``entity``), the snapshot conversion (``snapshot``,
/// ``init(snapshot:resolver:)``) and the key-path map that `#Predicate` and `SortDescriptor`
/// translation reads (``propertyNames``). Without macros the list is written by hand; a key
/// path it does not name cannot be used in a predicate or sort (the translation says which).
public protocol PersistentModel: SendableMetatype {
    /// The entity's name; the type's name unless declared.
    static var entityName: String { get }
    /// The stored properties, in declaration order: attributes and relationships.
    static var properties: [ModelProperty<Self>] { get }
    /// Compound uniqueness constraints, as lists of property names (a single unique attribute
    /// is declared with ``Snapshot/Schema/Attribute/Options/unique`` instead). None unless
    /// declared.
    static var uniquenessConstraints: [[String]] { get }
    /// Indexes, as lists of property names. None unless declared.
    static var indexes: [[String]] { get }

    /// The object's identity: temporary until a save gives it its permanent identifier.
    var persistentModelID: PersistentIdentifier { get set }

    /// A value with every property at its default, and a temporary identifier.
    init()
}

extension PersistentModel {
    /// The type's name.
    public static var entityName: String { String(describing: Self.self) }
    /// None.
    public static var uniquenessConstraints: [[String]] { [] }
    /// None.
    public static var indexes: [[String]] { [] }

    /// The entity the model declares: its attributes and relationships in the order of
    /// ``properties``, its constraints and indexes.
    public static var entity: Schema.Entity {
        var attributes: [Schema.Attribute] = []
        var relationships: [Schema.Relationship] = []
        for property in properties {
            switch property.kind {
            case .attribute(let attribute): attributes.append(attribute)
            case .relationship(let relationship): relationships.append(relationship)
            }
        }
        return Schema.Entity(
            entityName, attributes: attributes, relationships: relationships, uniquenessConstraints: uniquenessConstraints,
            indexes: indexes)
    }

    /// Every declared key path and the name of the property it stands for.
    public static var propertyNames: [PartialKeyPath<Self>: String] {
        Dictionary(properties.map { ($0.keyPath, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// The declared property at `keyPath`, when there is one.
    static func property(at keyPath: AnyKeyPath) -> ModelProperty<Self>? {
        properties.first { $0.keyPath == keyPath }
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
