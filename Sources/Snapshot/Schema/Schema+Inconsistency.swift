extension Schema {
    /// One way a list of entities fails to be a schema, naming the place.
    ///
    /// Names (of entities and properties) must be identifiers: a letter or `_`, then letters,
    /// digits or `_` (so key paths can split on `.` and record names on `:`). A property may
    /// not be called `entityName` nor end in `_ckAsset`: the record shape uses those fields.
    public enum Inconsistency: Error, Hashable, Sendable, CustomStringConvertible {
        /// An entity or property name that is not an identifier or is reserved.
        case invalidName(entity: String, property: String?)
        /// Two entities with one name (two roots, or a root and a sub-entity).
        case duplicateEntity(String)
        /// A superentity that the schema does not declare.
        case unknownSuperentity(entity: String, superentity: String)
        /// An entity that is, through its superentities, its own ancestor.
        case inheritanceCycle(entity: String)
        /// A property name declared twice in an entity, or redeclaring an inherited one.
        case duplicateProperty(entity: String, property: String)
        /// A default value that is not of its attribute's type (or null for a non-optional one).
        case defaultValueMismatch(entity: String, attribute: String)
        /// An option that does not apply to the attribute's type (`externalStorage` on a
        /// number, say).
        case invalidOption(entity: String, attribute: String)
        /// A relationship whose destination the schema does not declare.
        case unknownDestination(entity: String, relationship: String, destination: String)
        /// An inverse that is not a relationship of the destination (nor inherited by it).
        case unknownInverse(entity: String, relationship: String, inverse: String)
        /// An inverse that does not point back: its destination is not this entity (or one of
        /// its superentities), or it names another relationship as its own inverse.
        case inverseMismatch(entity: String, relationship: String, inverse: String)
        /// A minimum or maximum count that is negative, a minimum above the maximum, or a
        /// to-one relationship with counts beyond one.
        case invalidCount(entity: String, relationship: String)
        /// An index without properties.
        case emptyIndex(entity: String)
        /// An index over a property the entity neither declares nor inherits.
        case unknownIndexedProperty(entity: String, property: String)
        /// An index over a to-many relationship (only attributes and to-one relationships
        /// have one value to index).
        case toManyIndexedProperty(entity: String, property: String)
        /// A uniqueness constraint without properties.
        case emptyConstraint(entity: String)
        /// A uniqueness constraint over a property the entity neither declares nor inherits.
        case unknownConstrainedProperty(entity: String, property: String)
        /// A uniqueness constraint over a to-many relationship.
        case toManyConstrainedProperty(entity: String, property: String)
        /// An `originalName` that is not an identifier, or that two entities (two properties
        /// of one entity) give: a migration could not tell which one it renames.
        case invalidOriginalName(entity: String, property: String?)

        /// The entity where the inconsistency is.
        public var entityName: String {
            switch self {
            case let .invalidName(entity, _), let .duplicateEntity(entity), let .unknownSuperentity(entity, _),
                let .inheritanceCycle(entity), let .duplicateProperty(entity, _), let .defaultValueMismatch(entity, _),
                let .invalidOption(entity, _), let .unknownDestination(entity, _, _), let .unknownInverse(entity, _, _),
                let .inverseMismatch(entity, _, _), let .invalidCount(entity, _), let .emptyIndex(entity),
                let .unknownIndexedProperty(entity, _), let .toManyIndexedProperty(entity, _), let .emptyConstraint(entity),
                let .unknownConstrainedProperty(entity, _), let .toManyConstrainedProperty(entity, _), let .invalidOriginalName(entity, _):
                entity
            }
        }

        /// The property where the inconsistency is, when it is in one.
        public var propertyName: String? {
            switch self {
            case let .invalidName(_, property), let .invalidOriginalName(_, property): property
            case .duplicateEntity, .unknownSuperentity, .inheritanceCycle, .emptyIndex, .emptyConstraint: nil
            case let .duplicateProperty(_, p), let .defaultValueMismatch(_, p), let .invalidOption(_, p),
                let .unknownDestination(_, p, _), let .unknownInverse(_, p, _), let .inverseMismatch(_, p, _),
                let .invalidCount(_, p), let .unknownIndexedProperty(_, p), let .toManyIndexedProperty(_, p),
                let .unknownConstrainedProperty(_, p), let .toManyConstrainedProperty(_, p):
                p
            }
        }

        /// The inconsistency in words, naming entity and property.
        public var description: String {
            switch self {
            case let .invalidName(e, p?): "property \(e).\(p) has a name that is not an identifier or is reserved"
            case let .invalidName(e, nil): "entity \"\(e)\" has a name that is not an identifier"
            case let .duplicateEntity(e): "two entities are named \(e)"
            case let .unknownSuperentity(e, s): "entity \(e) inherits from \(s), which the schema does not declare"
            case let .inheritanceCycle(e): "entity \(e) is its own superentity through its inheritance chain"
            case let .duplicateProperty(e, p): "entity \(e) declares \(p) twice (or redeclares an inherited \(p))"
            case let .defaultValueMismatch(e, p): "the default value of \(e).\(p) is not of the attribute's type"
            case let .invalidOption(e, p): "\(e).\(p) has an option that does not apply to its type"
            case let .unknownDestination(e, p, d): "relationship \(e).\(p) points at \(d), which the schema does not declare"
            case let .unknownInverse(e, p, i): "the inverse of \(e).\(p), \(i), is not a relationship of its destination"
            case let .inverseMismatch(e, p, i): "the inverse of \(e).\(p), \(i), does not point back at \(e).\(p)"
            case let .invalidCount(e, p): "relationship \(e).\(p) has minimum or maximum counts out of range"
            case let .emptyIndex(e): "entity \(e) declares an index without properties"
            case let .unknownIndexedProperty(e, p): "an index of \(e) names \(p), which \(e) neither declares nor inherits"
            case let .toManyIndexedProperty(e, p): "an index of \(e) names the to-many relationship \(p)"
            case let .emptyConstraint(e): "entity \(e) declares a uniqueness constraint without properties"
            case let .unknownConstrainedProperty(e, p): "a uniqueness constraint of \(e) names \(p), which \(e) neither declares nor inherits"
            case let .toManyConstrainedProperty(e, p): "a uniqueness constraint of \(e) names the to-many relationship \(p)"
            case let .invalidOriginalName(e, p?):
                "property \(e).\(p) has an originalName that is not an identifier or that another property of \(e) gives"
            case let .invalidOriginalName(e, nil): "entity \(e) has an originalName that is not an identifier or that another entity gives"
            }
        }
    }
}
