extension Schema {
    /// The entity named `name`, or `nil`.
    public func entity(named name: String) -> Entity? {
        tables.perEntity[name]?.chain.first
    }

    /// The entity named `name`.
    ///
    /// - Throws: ``DataStoreError/Code/unknownEntity`` naming it when the schema has none.
    public func requireEntity(named name: String) throws -> Entity {
        guard let entity = entity(named: name) else {
            throw DataStoreError(
                .unknownEntity, "The schema declares no entity \(name); add it to the schema or use a declared name.", entityName: name)
        }
        return entity
    }

    /// The entity named `name` and its superentities, the entity first and the root last;
    /// empty when there is no such entity.
    public func inheritanceChain(of name: String) -> [Entity] {
        tables.perEntity[name]?.chain ?? []
    }

    /// The root of the inheritance tree `name` belongs to (the entity itself for a root), or
    /// `nil` when there is no such entity. Objects are stored under their root entity.
    public func rootEntity(of name: String) -> Entity? {
        inheritanceChain(of: name).last
    }

    /// Every entity that inherits from `name`, directly or not, in schema order (not `name`
    /// itself).
    public func subentities(of name: String) -> [Entity] {
        tables.perEntity[name]?.subentities ?? []
    }

    /// Whether `name` is `ancestor` or inherits from it.
    public func isEntity(_ name: String, kindOf ancestor: String) -> Bool {
        tables.perEntity[name]?.ancestry.contains(ancestor) ?? false
    }

    /// Every property of `name`, inherited ones included: the root's first, each entity's in
    /// declaration order (attributes, then relationships). Empty when there is no such entity.
    public func allProperties(of name: String) -> [Property] {
        tables.perEntity[name]?.allProperties ?? []
    }

    /// The property `property` of `entity`, declared or inherited, or `nil`.
    public func property(named property: String, in entity: String) -> Property? {
        tables.perEntity[entity]?.properties[property]
    }

    /// The attribute `name` of `entity`, declared or inherited, or `nil`.
    public func attribute(named name: String, in entity: String) -> Attribute? {
        if case .attribute(let a)? = property(named: name, in: entity) { return a }
        return nil
    }

    /// The relationship `name` of `entity`, declared or inherited, or `nil`.
    public func relationship(named name: String, in entity: String) -> Relationship? {
        if case .relationship(let r)? = property(named: name, in: entity) { return r }
        return nil
    }

    /// The declared indexes of `entity` and of its superentities (the root's first).
    public func allIndexes(of entity: String) -> [Index] {
        inheritanceChain(of: entity).reversed().flatMap(\.indexes)
    }

    /// Every uniqueness rule that applies to `entity`: one single-property constraint per
    /// ``Attribute/Options/unique`` attribute, then the compound constraints, inherited ones
    /// included (the root's first).
    public func allUniquenessConstraints(of entity: String) -> [UniquenessConstraint] {
        inheritanceChain(of: entity).reversed().flatMap { e in
            e.attributes.filter { $0.options.contains(.unique) }.map { UniquenessConstraint([$0.name]) } + e.uniquenessConstraints
        }
    }
}
