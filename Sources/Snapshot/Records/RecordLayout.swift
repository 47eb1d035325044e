/// What the key layout needs to know of the schema: which entity declares a property, index or
/// constraint, and how a to-many relationship's join records are named.
struct RecordLayout {
    let schema: Schema

    /// How the join records of one to-many relationship (with a to-many inverse, or none) are
    /// named, seen from one of its entities.
    struct Join {
        /// `EntityA:EntityB`, the declaring entities ordered by (entity, relationship) name.
        var entities: String
        /// `relA:relB` in the same order (`relB` empty for a relationship without inverse).
        var relationships: String
        /// Whether the entity seen from is side A (it scans `M` keys), side B (`N` keys) or both
        /// (a relationship that is its own inverse).
        var isSideA: Bool
        var isSymmetric: Bool
    }

    func root(of entity: String) -> String { schema.rootEntity(of: entity)?.name ?? entity }

    /// The entity in `entity`'s inheritance chain that declares `property`.
    func declaringEntity(of property: String, in entity: String) -> String {
        schema.inheritanceChain(of: entity).first { e in e.declaredProperties.contains { $0.name == property } }?.name ?? entity
    }

    /// `<DeclaringEntity>.<property>`: how a back reference names its relationship, so that
    /// same-named relationships of different entities stay apart.
    func qualifiedName(_ property: String, in entity: String) -> String {
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
        let join = join(relationship, of: entity)
        guard !join.isSymmetric, let inverse = relationship.inverse,
            schema.relationship(named: inverse, in: relationship.destination)?.inverse == relationship.name
        else { return true }
        return join.isSideA
    }

    func join(_ relationship: Schema.Relationship, of entity: String) -> Join {
        let here = (declaringEntity(of: relationship.name, in: entity), relationship.name)
        let there = relationship.inverse.map { (declaringEntity(of: $0, in: relationship.destination), $0) } ?? (relationship.destination, "")
        let hereFirst = here <= there
        let (a, b) = hereFirst ? (here, there) : (there, here)
        return Join(
            entities: "\(a.0):\(b.0)", relationships: "\(a.1):\(b.1)", isSideA: hereFirst, isSymmetric: here == there)
    }

    /// Every index that covers `entity`, with the entity that declares it (the root's first).
    func indexes(of entity: String) -> [(declaredBy: String, properties: [String])] {
        schema.inheritanceChain(of: entity).reversed().flatMap { e in e.indexes.map { (e.name, $0.properties) } }
    }

    /// Every uniqueness rule that covers `entity`, with the entity that declares it.
    func uniquenessConstraints(of entity: String) -> [(declaredBy: String, properties: [String])] {
        schema.inheritanceChain(of: entity).reversed().flatMap { e in
            e.attributes.filter { $0.options.contains(.unique) }.map { (e.name, [$0.name]) }
                + e.uniquenessConstraints.map { (e.name, $0.properties) }
        }
    }
}
