/// One difference between the schema a store was written in and the schema it is opened
/// with, as a migration sees it. Names are the new schema's, except for what was removed.
///
/// **Lightweight** changes (applied without a plan, as Core Data infers a mapping model): an
/// entity, attribute (optional, or with a default) or relationship added; an attribute or
/// relationship removed or renamed (through ``Schema/Attribute/originalName``,
/// ``Schema/Relationship/originalName``); an entity renamed (``Schema/Entity/originalName``) or
/// removed — removing an entity that holds objects deletes them, so it takes a plan whose
/// stage (`.lightweight` will do) names the step, and without one it is refused
/// (`schemaMismatch`, naming the entity); an attribute made optional, or made required with a
/// default (nulls become the default), or made required without a default when no stored
/// object holds a null (every object is read to check; the objects that do are named in a
/// `missingValue` refusal); a default value or a storage option
/// (`externalStorage`, `ephemeral`) changed; a delete rule or count changed; an index or
/// uniqueness constraint added or removed (an added constraint over values that collide stops
/// the migration with `uniqueness`).
///
/// **Incompatible** changes are refused (``isIncompatible``): a type change, a property that
/// turns from attribute to relationship, a relationship's destination or cardinality, an
/// inverse change that moves where the links are stored, a change of superentity or an entity
/// made abstract, a required attribute added without a default, and a to-one made required.
public enum SchemaChange: Hashable, Sendable, CustomStringConvertible {
    /// An entity the stored schema does not have.
    case entityAdded(String)
    /// A stored entity the new schema drops; its objects are removed (only through a stage of a
    /// plan when there are any).
    case entityRemoved(String)
    /// An entity renamed through its `originalName`.
    case entityRenamed(from: String, to: String)
    /// A different superentity, or an entity made abstract.
    case inheritanceChanged(entity: String)
    /// A new attribute; stored objects read its default (or null).
    case attributeAdded(entity: String, attribute: String)
    /// A dropped attribute; its values are removed.
    case attributeRemoved(entity: String, attribute: String)
    /// An attribute renamed through its `originalName`.
    case attributeRenamed(entity: String, from: String, to: String)
    /// An attribute whose value type changed.
    case attributeTypeChanged(entity: String, attribute: String, from: Schema.Attribute.ValueType, to: Schema.Attribute.ValueType)
    /// A required attribute made optional.
    case attributeMadeOptional(entity: String, attribute: String)
    /// An optional attribute made required; with a default, stored nulls become it; without
    /// one, no stored object may hold a null.
    case attributeMadeRequired(entity: String, attribute: String, hasDefault: Bool)
    /// A new default value.
    case attributeDefaultChanged(entity: String, attribute: String)
    /// `externalStorage` or `ephemeral` turned on or off.
    case attributeStorageChanged(entity: String, attribute: String)
    /// A property that was an attribute and is now a relationship, or the reverse.
    case propertyKindChanged(entity: String, property: String)
    /// A new relationship; stored objects have no targets.
    case relationshipAdded(entity: String, relationship: String)
    /// A dropped relationship; its links are removed.
    case relationshipRemoved(entity: String, relationship: String)
    /// A relationship renamed through its `originalName`.
    case relationshipRenamed(entity: String, from: String, to: String)
    /// A relationship whose destination or cardinality changed.
    case relationshipTargetChanged(entity: String, relationship: String)
    /// A relationship whose inverse changed; `storageMoves` when its links would be stored
    /// differently (refused).
    case relationshipInverseChanged(entity: String, relationship: String, storageMoves: Bool)
    /// A delete rule, minimum or maximum count changed, or a to-one made optional.
    case relationshipRulesChanged(entity: String, relationship: String)
    /// A to-one relationship made required.
    case relationshipMadeRequired(entity: String, relationship: String)
    /// A new index (its entries are built).
    case indexAdded(entity: String, properties: [String])
    /// A dropped index.
    case indexRemoved(entity: String, properties: [String])
    /// A new uniqueness rule (a compound constraint, or an attribute made `unique`).
    case uniquenessAdded(entity: String, properties: [String])
    /// A dropped uniqueness rule.
    case uniquenessRemoved(entity: String, properties: [String])

    /// What a change asks of the store.
    enum Effect: Int, Comparable {
        /// Only the header changes (the stored schema).
        case header
        /// Only the header changes; records written before read the new shape as they are.
        case lazy
        /// Only the header changes, once a read of every record shows that the data fits the
        /// new schema (a dry run of the rewrite, which writes nothing).
        case checked
        /// Every record is rewritten into a new generation.
        case rewrite
        /// Refused, unless a custom stage's closures can make the data fit (then a rewrite).
        case refusedUnlessCustom
        /// Refused.
        case refused

        static func < (lhs: Effect, rhs: Effect) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    var effect: Effect {
        switch self {
        case .entityAdded, .attributeAdded, .relationshipAdded, .attributeMadeOptional: .lazy
        case .relationshipRulesChanged: .header
        case .relationshipInverseChanged(_, _, let moves): moves ? .refused : .header
        case .entityRemoved, .entityRenamed, .attributeRemoved, .attributeRenamed, .attributeDefaultChanged, .attributeStorageChanged,
            .relationshipRemoved, .relationshipRenamed, .indexAdded, .indexRemoved, .uniquenessAdded, .uniquenessRemoved:
            .rewrite
        case .attributeMadeRequired(_, _, let hasDefault): hasDefault ? .rewrite : .checked
        case .inheritanceChanged, .attributeTypeChanged, .propertyKindChanged, .relationshipTargetChanged, .relationshipMadeRequired: .refused
        }
    }

    /// Whether a lightweight stage refuses the change.
    public var isIncompatible: Bool { effect >= .refusedUnlessCustom }

    /// The entity the change concerns.
    public var entityName: String {
        switch self {
        case .entityAdded(let e), .entityRemoved(let e), .entityRenamed(_, let e), .inheritanceChanged(let e): e
        case .attributeAdded(let e, _), .attributeRemoved(let e, _), .attributeRenamed(let e, _, _), .attributeTypeChanged(let e, _, _, _),
            .attributeMadeOptional(let e, _), .attributeMadeRequired(let e, _, _), .attributeDefaultChanged(let e, _),
            .attributeStorageChanged(let e, _), .propertyKindChanged(let e, _), .relationshipAdded(let e, _), .relationshipRemoved(let e, _),
            .relationshipRenamed(let e, _, _), .relationshipTargetChanged(let e, _), .relationshipInverseChanged(let e, _, _),
            .relationshipRulesChanged(let e, _), .relationshipMadeRequired(let e, _), .indexAdded(let e, _), .indexRemoved(let e, _),
            .uniquenessAdded(let e, _), .uniquenessRemoved(let e, _):
            e
        }
    }

    /// The property the change concerns, when it is one.
    public var propertyName: String? {
        switch self {
        case .entityAdded, .entityRemoved, .entityRenamed, .inheritanceChanged, .indexAdded, .indexRemoved, .uniquenessAdded, .uniquenessRemoved: nil
        case .attributeAdded(_, let p), .attributeRemoved(_, let p), .attributeRenamed(_, _, let p), .attributeTypeChanged(_, let p, _, _),
            .attributeMadeOptional(_, let p), .attributeMadeRequired(_, let p, _), .attributeDefaultChanged(_, let p),
            .attributeStorageChanged(_, let p), .propertyKindChanged(_, let p), .relationshipAdded(_, let p), .relationshipRemoved(_, let p),
            .relationshipRenamed(_, _, let p), .relationshipTargetChanged(_, let p), .relationshipInverseChanged(_, let p, _),
            .relationshipRulesChanged(_, let p), .relationshipMadeRequired(_, let p):
            p
        }
    }

    /// The change in words: `entity Post: attribute summary added`.
    public var description: String {
        let list = { (p: [String]) in p.joined(separator: ", ") }
        switch self {
        case .entityAdded(let e): return "entity \(e) added"
        case .entityRemoved(let e): return "entity \(e) removed"
        case let .entityRenamed(from, to): return "entity \(from) renamed \(to)"
        case .inheritanceChanged(let e): return "entity \(e): superentity changed or made abstract"
        case let .attributeAdded(e, a): return "entity \(e): attribute \(a) added"
        case let .attributeRemoved(e, a): return "entity \(e): attribute \(a) removed"
        case let .attributeRenamed(e, from, to): return "entity \(e): attribute \(from) renamed \(to)"
        case let .attributeTypeChanged(e, a, from, to): return "entity \(e): attribute \(a) changed type from \(from) to \(to)"
        case let .attributeMadeOptional(e, a): return "entity \(e): attribute \(a) made optional"
        case let .attributeMadeRequired(e, a, d): return "entity \(e): attribute \(a) made required \(d ? "with" : "without") a default"
        case let .attributeDefaultChanged(e, a): return "entity \(e): attribute \(a) has a new default value"
        case let .attributeStorageChanged(e, a): return "entity \(e): attribute \(a) changed externalStorage or ephemeral"
        case let .propertyKindChanged(e, p): return "entity \(e): property \(p) changed between attribute and relationship"
        case let .relationshipAdded(e, r): return "entity \(e): relationship \(r) added"
        case let .relationshipRemoved(e, r): return "entity \(e): relationship \(r) removed"
        case let .relationshipRenamed(e, from, to): return "entity \(e): relationship \(from) renamed \(to)"
        case let .relationshipTargetChanged(e, r): return "entity \(e): relationship \(r) changed destination or cardinality"
        case let .relationshipInverseChanged(e, r, moves):
            return "entity \(e): relationship \(r) changed inverse\(moves ? ", which moves where its links are stored" : "")"
        case let .relationshipRulesChanged(e, r): return "entity \(e): relationship \(r) changed delete rule, counts or optionality"
        case let .relationshipMadeRequired(e, r): return "entity \(e): relationship \(r) made required"
        case let .indexAdded(e, p): return "entity \(e): index (\(list(p))) added"
        case let .indexRemoved(e, p): return "entity \(e): index (\(list(p))) removed"
        case let .uniquenessAdded(e, p): return "entity \(e): uniqueness constraint (\(list(p))) added"
        case let .uniquenessRemoved(e, p): return "entity \(e): uniqueness constraint (\(list(p))) removed"
        }
    }
}
