import Snapshot

/// What a key path of a predicate reaches: a place in the object graph, relative to the object
/// a scope evaluates (the fetched object, or an object of a to-many relationship inside
/// `contains(where:)` / `allSatisfy`).
struct StorePath {
    /// What sits at the end of the path.
    enum Target {
        /// A model object: the scope's object itself (no components), or the target of a to-one
        /// relationship held as a reference.
        case object(any EntityModel.Type)
        /// The objects of a to-many relationship held as references.
        case objects(any EntityModel.Type)
        /// A to-one relationship held as an identifier.
        case reference
        /// A to-many relationship held as identifiers.
        case references
        /// An attribute's value.
        case attribute(Schema.Attribute.ValueType)
        /// The identifier (`persistentModelID`) of the object at the path.
        case identifier
    }

    /// The property names from the scope's object.
    var components: [String]
    /// The nesting depth of the scope the path starts from (0: the fetched object).
    var scope: Int
    /// What the path reaches.
    var target: Target
    /// The entities the scope's object was cast to (`$0 as? Photo`), outermost first: the
    /// path reads a value only of an object that is of each (or of a sub-entity); of any other
    /// object the optional chain ends in `nil`.
    var casts: [String] = []

    var propertyPath: PropertyPath { PropertyPath(components: components) }
    var dotted: String { components.isEmpty ? "the object itself" : components.joined(separator: ".") }
}

/// The translation of one sub-expression of a predicate.
enum StoreTerm {
    /// A condition.
    case predicate(FetchPredicate)
    /// A place in the object graph.
    case path(StorePath)
    /// A Swift constant captured by the predicate.
    case constant(Any)
    /// `path ?? fallback`.
    case coalesced(StorePath, fallback: PropertyValue)
}
