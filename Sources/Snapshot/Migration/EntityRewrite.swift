import Foundation

/// How a ``GenerationRewriter`` turns the objects of one old entity into the new schema, worked
/// out once per entity rather than once per object: the new entity, and for each of its
/// properties where its value comes from.
struct EntityRewrite {
    /// Where one property of the new entity gets its value.
    enum Source {
        /// An attribute: the old one's value (by its old name, when it has one), else `fallback`;
        /// a null in a required attribute becomes `fallback`, or stops the migration when there
        /// is none.
        case attribute(Schema.Attribute, oldName: String?, fallback: PropertyValue?)
        /// A to-one: the old one's target, renamed.
        case toOne(name: String, oldName: String?)
        /// A to-many the new entity writes join records for: the old relationship's targets,
        /// read from `cursors` (indices into the rewriter's cursors of the old entity).
        case joinedToMany(name: String, cursors: [Int])
        /// A to-many whose old links are not join records: read object by object (no schema
        /// change the migrator accepts leads here; kept so that none loses links).
        case readToMany(name: String, old: Schema.Relationship)
        /// A to-many rebuilt from keys other objects write: empty here.
        case emptyToMany(name: String)
    }

    /// The new entity's name.
    let entity: String
    let sources: [Source]
    /// The new entity's slot table, and the slot each of ``sources`` fills (``ObjectState``;
    /// every property has one, those without a field after the fields).
    let table: SlotTable
    let slots: [Int?]
    /// The join-record prefixes (``RecordKeys/joinRelationshipPrefix(mirror:entities:relationships:)``)
    /// the old entity's to-many targets are read from; a ``Source/joinedToMany(name:cursors:)``
    /// indexes into this.
    let joinPrefixes: [[UInt8]]

    /// The plan for the old entity `oldEntity`, or `nil` when the new schema drops it.
    init?(oldEntity: String, mapping: SchemaMapping, oldLayout: RecordLayout, newLayout: RecordLayout) {
        guard let entity = mapping.newEntity[oldEntity] else { return nil }
        self.entity = entity
        var sources: [Source] = []
        var prefixes: [[UInt8]] = []
        for property in mapping.new.allProperties(of: entity) {
            let oldName = mapping.oldName(ofProperty: property.name, inNew: entity)
            switch property {
            case .attribute(let a):
                sources.append(.attribute(a, oldName: oldName, fallback: a.defaultValue))
            case .relationship(let r) where !r.isToMany:
                sources.append(.toOne(name: r.name, oldName: oldName))
            case .relationship(let r):
                // Only the side that writes join records needs its targets; the others are
                // rebuilt from keys other objects write.
                guard newLayout.usesJoinRecords(r), newLayout.writesJoinRecords(r, of: entity), let oldName,
                    let old = mapping.old.relationship(named: oldName, in: oldEntity)
                else {
                    sources.append(.emptyToMany(name: r.name))
                    continue
                }
                guard oldLayout.usesJoinRecords(old) else {
                    sources.append(.readToMany(name: r.name, old: old))
                    continue
                }
                var cursors: [Int] = []
                let join = oldLayout.join(old, of: oldEntity)
                for mirror in [false, true] where join.isSymmetric || join.isSideA != mirror {
                    cursors.append(prefixes.count)
                    prefixes.append(RecordKeys.joinRelationshipPrefix(mirror: mirror, entities: join.entities, relationships: join.relationships))
                }
                sources.append(.joinedToMany(name: r.name, cursors: cursors))
            }
        }
        self.sources = sources
        self.joinPrefixes = prefixes
        table = newLayout.slotTable(of: entity)
        slots = mapping.new.allProperties(of: entity).map { [table] in table.index(of: $0.name) }
    }
}
