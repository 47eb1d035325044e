import Foundation

/// One field of a record (records format 2, FORMAT.md "Record value, version 2"): a stored
/// attribute (one not `ephemeral`) or a to-one relationship of an entity, at its place in the
/// entity's field order.
package struct RecordField: Sendable {
    /// What a field holds.
    package enum Kind: Sendable {
        /// A stored attribute: its body is read under the attribute's value type.
        case attribute(Schema.Attribute)
        /// A to-one relationship: its body is the target's primary key and concrete entity.
        case toOne(Schema.Relationship)
    }

    /// The schema property the field stores.
    package let property: Schema.Property
    /// The attribute or to-one relationship, with what reading its body needs.
    package let kind: Kind
    /// The field's index in its entity's field order (its serial type is the header's
    /// `index`-th).
    package let index: Int

    /// The property's name.
    package var name: String { property.name }
}

/// The fields of one concrete entity's records, in field order: the properties of
/// ``Schema/allProperties(of:)`` that are stored attributes or to-one relationships (to-many
/// relationships have no field). Field *i* of a record is `fields[i]`.
package struct RecordFieldList: Sendable {
    /// The concrete entity.
    package let entity: String
    /// The fields, in field order (`fields[i].index == i`).
    package let fields: [RecordField]
    private let indices: [String: Int]

    /// The field list of `entity` under `schema` (empty for an entity the schema lacks).
    package init(schema: Schema, entity: String) {
        var fields: [RecordField] = []
        for property in schema.allProperties(of: entity) {
            switch property {
            case .attribute(let a) where !a.options.contains(.ephemeral):
                fields.append(RecordField(property: property, kind: .attribute(a), index: fields.count))
            case .relationship(let r) where !r.isToMany:
                fields.append(RecordField(property: property, kind: .toOne(r), index: fields.count))
            default:
                continue
            }
        }
        self.entity = entity
        self.fields = fields
        self.indices = Dictionary(fields.map { ($0.name, $0.index) }, uniquingKeysWith: { first, _ in first })
    }

    /// How many fields a record of the entity has.
    package var count: Int { fields.count }

    /// The index of the field storing the property `name`, or `nil` when the property has no
    /// field (ephemeral, to-many, or unknown).
    package func index(of name: String) -> Int? { indices[name] }

    /// The field storing the property `name`, or `nil` as for ``index(of:)``.
    package func field(named name: String) -> RecordField? { indices[name].map { fields[$0] } }

    /// Whether `old` lists the same fields as the start of this list (same property names,
    /// kinds and value types, in the same order): records written under `old` read under this
    /// list without a rewrite, the missing fields as their defaults.
    package func hasPrefix(_ old: RecordFieldList) -> Bool {
        guard old.count <= count else { return false }
        return zip(old.fields, fields).allSatisfy { o, n in
            guard o.name == n.name else { return false }
            switch (o.kind, n.kind) {
            case let (.attribute(a), .attribute(b)):
                return a.valueType == b.valueType && a.options.contains(.externalStorage) == b.options.contains(.externalStorage)
            case let (.toOne(a), .toOne(b)):
                return a.destination == b.destination
            default:
                return false
            }
        }
    }
}
