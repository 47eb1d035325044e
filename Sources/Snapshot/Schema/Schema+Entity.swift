extension Schema {
    /// A kind of object: its properties, its place in an inheritance tree, its uniqueness
    /// constraints and indexes.
    ///
    /// A sub-entity (``superentityName`` set) inherits every property, constraint and index of
    /// its superentities and is stored under its root entity.
    public struct Entity: Hashable, Codable, Sendable {
        /// The entity's name, unique in the schema.
        public var name: String
        /// The entity it inherits from, or `nil` for a root entity.
        public var superentityName: String?
        /// Whether objects of exactly this entity may not exist (only of its sub-entities).
        public var isAbstract: Bool
        /// The attributes it declares (not those it inherits).
        public var attributes: [Attribute]
        /// The relationships it declares (not those it inherits).
        public var relationships: [Relationship]
        /// Its compound uniqueness constraints (an attribute's ``Attribute/Options/unique`` is
        /// a one-property constraint of its own).
        public var uniquenessConstraints: [UniquenessConstraint]
        /// Its declared indexes.
        public var indexes: [Index]
        /// The entity's name in the previous version of the schema, when it was renamed.
        public var originalName: String?

        /// An entity; uniqueness constraints and indexes are given as lists of property names.
        public init(
            _ name: String, superentity: String? = nil, isAbstract: Bool = false, attributes: [Attribute] = [],
            relationships: [Relationship] = [], uniquenessConstraints: [[String]] = [], indexes: [[String]] = [],
            originalName: String? = nil
        ) {
            self.name = name
            self.superentityName = superentity
            self.isAbstract = isAbstract
            self.attributes = attributes
            self.relationships = relationships
            self.uniquenessConstraints = uniquenessConstraints.map(UniquenessConstraint.init)
            self.indexes = indexes.map(Index.init)
            self.originalName = originalName
        }

        /// The properties it declares, attributes first, in declaration order.
        public var declaredProperties: [Property] {
            attributes.map(Property.attribute) + relationships.map(Property.relationship)
        }
    }
}
