extension Schema {
    /// A declared index over one property or several (a compound index), as SwiftData's
    /// `#Index`: the store keeps it up to date and may use it for fetches that filter or sort
    /// by its properties, in order.
    public struct Index: Hashable, Codable, Sendable {
        /// The indexed properties (attributes or to-one relationships), most significant first.
        public var properties: [String]
        /// An index over `properties`, most significant first.
        public init(_ properties: [String]) { self.properties = properties }
    }

    /// A set of properties whose values together are unique among the objects of an entity
    /// (and its sub-entities), as SwiftData's `#Unique`. An insert that collides with an
    /// existing object on all of them updates that object instead (an upsert).
    public struct UniquenessConstraint: Hashable, Codable, Sendable {
        /// The constrained properties (attributes or to-one relationships).
        public var properties: [String]
        /// A constraint over `properties`.
        public init(_ properties: [String]) { self.properties = properties }
    }

    /// A property of an entity: an attribute or a relationship.
    public enum Property: Hashable, Sendable {
        /// A stored value.
        case attribute(Attribute)
        /// A reference to other objects.
        case relationship(Relationship)

        /// The property's name.
        public var name: String {
            switch self {
            case .attribute(let a): a.name
            case .relationship(let r): r.name
            }
        }
    }
}
