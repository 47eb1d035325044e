/// What the key layout needs to know of the schema: which entity declares a property, index or
/// constraint, and how a to-many relationship's join records are named.
///
/// Its answers are worked out once, when it is made (a store makes one when it opens): every
/// record read or written asks them.
struct RecordLayout: Sendable {
    let schema: Schema
    private let tables: Tables

    init(schema: Schema) {
        self.schema = schema
        self.tables = Tables(schema: schema)
    }

    /// The answers, per entity: immutable after `init`, so shared freely between threads.
    private final class Tables: Sendable {
        let roots: [String: String]
        /// entity → relationship name → its join naming, for every to-many with join records.
        let joins: [String: [String: Join]]
        /// entity → relationship name → whether that entity's entries hold its join records.
        let writesJoins: [String: [String: Bool]]
        /// entity → property → `<DeclaringEntity>.<property>`.
        let qualifiedNames: [String: [String: String]]
        let indexes: [String: [(declaredBy: String, properties: [String])]]
        let uniqueness: [String: [(declaredBy: String, properties: [String])]]
        let fields: [String: [Field]]
        let recordFields: [String: RecordFieldList]
        let toMany: [String: [Schema.Relationship]]
        let encoders: [String: EntityEncoder]

        init(schema: Schema) {
            let bare = RecordLayout(computingWith: schema)
            var roots: [String: String] = [:]
            var joins: [String: [String: Join]] = [:]
            var writesJoins: [String: [String: Bool]] = [:]
            var qualifiedNames: [String: [String: String]] = [:]
            var indexes: [String: [(declaredBy: String, properties: [String])]] = [:]
            var uniqueness: [String: [(declaredBy: String, properties: [String])]] = [:]
            var fields: [String: [Field]] = [:]
            var recordFields: [String: RecordFieldList] = [:]
            var toMany: [String: [Schema.Relationship]] = [:]
            for entity in schema.entities {
                let name = entity.name
                roots[name] = bare.computeRoot(of: name)
                for property in schema.allProperties(of: name) {
                    qualifiedNames[name, default: [:]][property.name] = bare.computeQualifiedName(property.name, in: name)
                    guard case .relationship(let r) = property, bare.usesJoinRecords(r) else { continue }
                    joins[name, default: [:]][r.name] = bare.computeJoin(r, of: name)
                    writesJoins[name, default: [:]][r.name] = bare.computeWritesJoinRecords(r, of: name)
                }
                indexes[name] = bare.computeIndexes(of: name)
                uniqueness[name] = bare.computeUniquenessConstraints(of: name)
                fields[name] = bare.computeFields(of: name)
                recordFields[name] = RecordFieldList(schema: schema, entity: name)
                toMany[name] = bare.computeToManyRelationships(of: name)
            }
            self.recordFields = recordFields
            self.toMany = toMany
            self.encoders = recordFields.mapValues { EntityEncoder(layout: bare, fieldList: $0) }
            (self.roots, self.joins, self.writesJoins, self.qualifiedNames, self.indexes, self.uniqueness, self.fields) =
                (roots, joins, writesJoins, qualifiedNames, indexes, uniqueness, fields)
        }

        /// No answers: every lookup computes.
        private init() {
            (roots, joins, writesJoins, qualifiedNames, indexes, uniqueness, fields) = ([:], [:], [:], [:], [:], [:], [:])
            recordFields = [:]
            toMany = [:]
            encoders = [:]
        }
        static let empty = Tables()
    }

    /// A layout without tables, for working them out.
    private init(computingWith schema: Schema) {
        self.schema = schema
        self.tables = Tables.empty
    }

    /// How the join records of one to-many relationship (with a to-many inverse, or none) are
    /// named, seen from one of its entities.
    struct Join: Sendable {
        /// `EntityA:EntityB`, the declaring entities ordered by (entity, relationship) name.
        var entities: String
        /// `relA:relB` in the same order (`relB` empty for a relationship without inverse).
        var relationships: String
        /// Whether the entity seen from is side A (it scans `M` keys), side B (`N` keys) or both
        /// (a relationship that is its own inverse).
        var isSideA: Bool
        var isSymmetric: Bool
    }

    func root(of entity: String) -> String { tables.roots[entity] ?? computeRoot(of: entity) }
    private func computeRoot(of entity: String) -> String { schema.rootEntity(of: entity)?.name ?? entity }

    /// The entity in `entity`'s inheritance chain that declares `property`.
    func declaringEntity(of property: String, in entity: String) -> String {
        schema.inheritanceChain(of: entity).first { e in e.declaredProperties.contains { $0.name == property } }?.name ?? entity
    }

    /// `<DeclaringEntity>.<property>`: how a back reference names its relationship, so that
    /// same-named relationships of different entities stay apart.
    func qualifiedName(_ property: String, in entity: String) -> String {
        tables.qualifiedNames[entity]?[property] ?? computeQualifiedName(property, in: entity)
    }
    private func computeQualifiedName(_ property: String, in entity: String) -> String {
        "\(declaringEntity(of: property, in: entity)).\(property)"
    }

    /// Whether `relationship` of `entity` is kept as join records (`CDMR`): a to-many whose
    /// inverse is to-many, or that has no inverse.
    func usesJoinRecords(_ relationship: Schema.Relationship) -> Bool {
        guard relationship.isToMany else { return false }
        guard let inverse = relationship.inverse, let other = schema.relationship(named: inverse, in: relationship.destination) else { return true }
        return other.isToMany
    }

    /// Whether the entries of an object of `entity` hold the join records of `relationship`: one
    /// side of a link writes them, so that a save touching the other side only through the
    /// inverse (a tag gaining a post) does not rebuild every join record of that object. The
    /// side is A when the two relationships name each other as inverses (the save keeps both
    /// sides in step); otherwise (no inverse, a one-sided inverse, a relationship its own
    /// inverse) every side that declares it writes them, as it is the only one.
    func writesJoinRecords(_ relationship: Schema.Relationship, of entity: String) -> Bool {
        tables.writesJoins[entity]?[relationship.name] ?? computeWritesJoinRecords(relationship, of: entity)
    }
    private func computeWritesJoinRecords(_ relationship: Schema.Relationship, of entity: String) -> Bool {
        let join = join(relationship, of: entity)
        guard !join.isSymmetric, let inverse = relationship.inverse,
            schema.relationship(named: inverse, in: relationship.destination)?.inverse == relationship.name
        else { return true }
        return join.isSideA
    }

    func join(_ relationship: Schema.Relationship, of entity: String) -> Join {
        tables.joins[entity]?[relationship.name] ?? computeJoin(relationship, of: entity)
    }
    private func computeJoin(_ relationship: Schema.Relationship, of entity: String) -> Join {
        let here = (declaringEntity(of: relationship.name, in: entity), relationship.name)
        let there = relationship.inverse.map { (declaringEntity(of: $0, in: relationship.destination), $0) } ?? (relationship.destination, "")
        let hereFirst = here <= there
        let (a, b) = hereFirst ? (here, there) : (there, here)
        return Join(
            entities: "\(a.0):\(b.0)", relationships: "\(a.1):\(b.1)", isSideA: hereFirst, isSymmetric: here == there)
    }

    /// Every index that covers `entity`, with the entity that declares it (the root's first).
    func indexes(of entity: String) -> [(declaredBy: String, properties: [String])] {
        tables.indexes[entity] ?? computeIndexes(of: entity)
    }
    private func computeIndexes(of entity: String) -> [(declaredBy: String, properties: [String])] {
        schema.inheritanceChain(of: entity).reversed().flatMap { e in e.indexes.map { (e.name, $0.properties) } }
    }

    /// Every uniqueness rule that covers `entity`, with the entity that declares it.
    func uniquenessConstraints(of entity: String) -> [(declaredBy: String, properties: [String])] {
        tables.uniqueness[entity] ?? computeUniquenessConstraints(of: entity)
    }
    private func computeUniquenessConstraints(of entity: String) -> [(declaredBy: String, properties: [String])] {
        schema.inheritanceChain(of: entity).reversed().flatMap { e in
            e.attributes.filter { $0.options.contains(.unique) }.map { (e.name, [$0.name]) }
                + e.uniquenessConstraints.map { (e.name, $0.properties) }
        }
    }

    /// One property of an entity as its record holds it: `CD_<name>`, or for an attribute kept
    /// as an asset `CD_<name>_ckAsset` (naming the asset's key). To-many relationships have no
    /// field (their targets are join records or back references).
    struct Field: Sendable {
        let property: Schema.Property
        let name: String
        let assetName: String
    }

    /// The entity's properties, in ``Schema/allProperties(of:)`` order, with their field names.
    func fields(of entity: String) -> [Field] {
        tables.fields[entity] ?? computeFields(of: entity)
    }
    private func computeFields(of entity: String) -> [Field] {
        schema.allProperties(of: entity).map { Field(property: $0, name: "CD_\($0.name)", assetName: "CD_\($0.name)_ckAsset") }
    }

    /// The fields of `entity`'s records (records format 2), in field order: worked out once
    /// per schema.
    func recordFields(of entity: String) -> RecordFieldList {
        tables.recordFields[entity] ?? RecordFieldList(schema: schema, entity: entity)
    }

    /// The fields of `entity`'s records as ``recordFields(of:)``, or `nil` when the schema has
    /// no entity `entity` (one lookup: no copy of the entity is made).
    func recordFieldsIfEntity(_ entity: String) -> RecordFieldList? {
        if let fields = tables.recordFields[entity] { return fields }
        return schema.entity(named: entity) != nil ? RecordFieldList(schema: schema, entity: entity) : nil
    }

    /// How the entries of `entity`'s objects are written: worked out once per schema.
    func encoder(of entity: String) -> EntityEncoder {
        tables.encoders[entity] ?? EntityEncoder(layout: self, fieldList: recordFields(of: entity))
    }

    /// Where each property of `entity`'s objects sits in an ``ObjectState``: worked out once
    /// per schema.
    func slotTable(of entity: String) -> SlotTable {
        tables.encoders[entity]?.slots ?? SlotTable(schema: schema, fieldList: recordFields(of: entity))
    }

    /// The to-many relationships of `entity` (declared or inherited), in property order: the
    /// relationships that have no field.
    func toManyRelationships(of entity: String) -> [Schema.Relationship] {
        tables.toMany[entity] ?? computeToManyRelationships(of: entity)
    }
    private func computeToManyRelationships(of entity: String) -> [Schema.Relationship] {
        schema.allProperties(of: entity).compactMap { property in
            if case .relationship(let r) = property, r.isToMany { return r }
            return nil
        }
    }
}
