extension Schema {
    /// A reference from the objects of an entity to objects of another (or the same) entity.
    public struct Relationship: Hashable, Codable, Sendable {
        /// Whether a relationship holds at most one target or a list of them.
        public enum Cardinality: String, Hashable, Codable, Sendable {
            /// At most one target: ``PropertyValue/toOne(_:)``.
            case toOne
            /// Any number of targets: ``PropertyValue/toMany(_:)``.
            case toMany
        }

        /// What deleting an object does to the objects this relationship reaches, as Core
        /// Data's and SwiftData's delete rules.
        public enum DeleteRule: String, Hashable, Codable, Sendable {
            /// The targets are deleted too.
            case cascade
            /// The targets' inverse references to the deleted object are removed.
            case nullify
            /// The delete is refused while the relationship has a target.
            case deny
            /// Nothing is done: the targets keep references to an object that is gone.
            case noAction
        }

        /// The relationship's name, unique among the entity's properties, inherited ones included.
        public var name: String
        /// The name of the entity its targets belong to (or to one of its sub-entities).
        public var destination: String
        /// To-one or to-many.
        public var cardinality: Cardinality
        /// The name of the relationship on ``destination`` that points back, when there is one.
        public var inverse: String?
        /// What deleting an object does to its targets.
        public var deleteRule: DeleteRule
        /// The fewest targets an object may have (to-many), when bounded.
        public var minimumCount: Int?
        /// The most targets an object may have (to-many), when bounded.
        public var maximumCount: Int?
        /// Whether a to-one relationship may have no target.
        public var isOptional: Bool
        /// The relationship's name in the previous version of the schema, when it was renamed.
        public var originalName: String?

        /// A relationship; to-one, optional and `nullify` unless told otherwise.
        public init(
            _ name: String, destination: String, _ cardinality: Cardinality = .toOne, inverse: String? = nil,
            deleteRule: DeleteRule = .nullify, minimumCount: Int? = nil, maximumCount: Int? = nil,
            isOptional: Bool = true, originalName: String? = nil
        ) {
            self.name = name
            self.destination = destination
            self.cardinality = cardinality
            self.inverse = inverse
            self.deleteRule = deleteRule
            self.minimumCount = minimumCount
            self.maximumCount = maximumCount
            self.isOptional = isOptional
            self.originalName = originalName
        }

        /// Whether this relationship is to-many.
        public var isToMany: Bool { cardinality == .toMany }
    }
}
