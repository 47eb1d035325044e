import Foundation

extension PredicateEvaluator {
    /// Refuses a request the schema says cannot be answered, before any object is read (as
    /// Core Data checks a predicate when it translates one), so that whether a fetch throws
    /// depends on the request alone: not on which objects the store holds, nor on which indexes
    /// it has.
    ///
    /// Checks the entity (``DataStoreError/Code/unknownEntity``); every path of the predicate,
    /// the sort and the relationships to prefetch against the entities they pass
    /// (``DataStoreError/Code/unknownProperty`` for a name the entity neither declares nor
    /// inherits; ``DataStoreError/Code/invalidPredicate`` for an empty component, a path that
    /// continues past an attribute, a to-many relationship outside the last component of an
    /// `any`/`all` or prefetch path, a sort by a to-many relationship or through one, and an
    /// `any`/`all` or prefetch path that ends at an attribute); and every constant against the
    /// property it is compared with (``DataStoreError/Code/typeMismatch`` for a value of
    /// another kind, say a string compared with an `Int` attribute, and for a string operation
    /// on a property that is not a string). Numbers of any width compare with any numeric
    /// attribute, a null with anything. Each error names the entity and the property.
    ///
    /// Properties are looked up in the fetched entity (a superentity's fetch may not read a
    /// property only a sub-entity declares), except after an entity test: inside an `and`,
    /// the conjuncts after ``FetchPredicate/entity(_:includesSubentities:)`` for a sub-entity
    /// (or an unrelated entity, which no object passes) are checked in that entity, and inside
    /// an `or`, the disjuncts after its negation.
    public static func check(_ descriptor: FetchDescriptor, against schema: Schema) throws {
        let entity = try schema.requireEntity(named: descriptor.entityName).name
        let checker = RequestChecker(schema: schema)
        if let predicate = descriptor.predicate { try checker.check(predicate, in: entity) }
        for sort in descriptor.sortBy { _ = try checker.resolve(sort.path, in: entity, for: .sortKey) }
        for path in descriptor.relationshipKeyPathsForPrefetching { _ = try checker.resolve(path, in: entity, for: .targets) }
    }

    /// Refuses `predicate` on objects of `entity` as ``check(_:against:)`` does.
    public static func check(_ predicate: FetchPredicate, on entity: String, against schema: Schema) throws {
        try RequestChecker(schema: schema).check(predicate, in: try schema.requireEntity(named: entity).name)
    }
}

/// The static checks of ``PredicateEvaluator/check(_:against:)``.
struct RequestChecker {
    let schema: Schema

    /// What a path is read for.
    enum Use {
        /// One value (a comparison's left-hand side): to-one relationships, then a property.
        case value
        /// A sort key: as `value`, with a sort's wording.
        case sortKey
        /// Objects (`any`, `all`, prefetching): to-one relationships, then a relationship.
        case targets
    }

    /// The property `path` ends at, and the entity whose property it is.
    func resolve(_ path: PropertyPath, in entity: String, for use: Use) throws -> (property: Schema.Property, owner: String) {
        if path.components.isEmpty || path.components.contains(where: \.isEmpty) {
            throw DataStoreError(
                .invalidPredicate, "The key path \"\(path)\" has an empty component; write property names joined by single dots.", entityName: entity,
                propertyName: path.description)
        }
        var current = entity
        for (i, name) in path.components.enumerated() {
            guard let property = schema.property(named: name, in: current) else {
                throw DataStoreError(
                    .unknownProperty, "\(path) names \(name), which \(current) neither declares nor inherits; use a property of the schema.",
                    entityName: current, propertyName: name)
            }
            let last = i == path.components.count - 1
            switch property {
            case .attribute:
                if !last {
                    throw DataStoreError(
                        .invalidPredicate, "\(path) continues past the attribute \(name); only relationships can be followed.", entityName: current,
                        propertyName: name)
                }
                if use == .targets {
                    throw DataStoreError(
                        .invalidPredicate, "\(path) ends at the attribute \(name); any, all and prefetching need a path that ends at a relationship.",
                        entityName: current, propertyName: name)
                }
                return (property, current)
            case .relationship(let relationship):
                if relationship.isToMany && !(last && use == .targets) {
                    switch use {
                    case .sortKey:
                        throw DataStoreError(
                            .invalidPredicate,
                            "A sort by \(path) goes through the to-many relationship \(name) of \(current), which has no one value to sort by; sort by an attribute, or by one reached through to-one relationships.",
                            entityName: current, propertyName: name)
                    case .value, .targets:
                        throw DataStoreError(
                            .invalidPredicate, "\(path) goes through the to-many relationship \(name); use `any` or `all` to reach its objects.",
                            entityName: current, propertyName: name)
                    }
                }
                if last { return (property, current) }
                current = relationship.destination
            }
        }
        preconditionFailure("a path of at least one component returns from its last one")
    }

    func check(_ predicate: FetchPredicate, in entity: String) throws {
        switch predicate {
        case .constant, .identifierIn:
            return
        case let .compare(path, _, value):
            let (property, owner) = try resolve(path, in: entity, for: .value)
            try checkComparable(property, with: value, path: path, owner: owner)
        case let .string(path, _, _, _):
            let (property, owner) = try resolve(path, in: entity, for: .value)
            guard case .attribute(let a) = property, a.valueType == .string else {
                throw DataStoreError(
                    .typeMismatch,
                    "A string operation reads \(path), which is \(Self.kind(of: property)); compare it with a value of its type instead.",
                    entityName: owner, propertyName: path.components.last)
            }
        case .isNull(let path):
            _ = try resolve(path, in: entity, for: .value)
        case let .oneOf(path, values):
            let (property, owner) = try resolve(path, in: entity, for: .value)
            for value in values { try checkComparable(property, with: value, path: path, owner: owner) }
        case .and(let list):
            var context = entity
            for p in list {
                try check(p, in: context)
                if case .entity(let name, _) = p { context = narrowed(context, to: name) }
            }
        case .or(let list):
            var context = entity
            for p in list {
                try check(p, in: context)
                if case .not(.entity(let name, _)) = p { context = narrowed(context, to: name) }
            }
        case .not(let p):
            try check(p, in: entity)
        case let .any(path, p), let .all(path, p):
            let (property, _) = try resolve(path, in: entity, for: .targets)
            guard case .relationship(let relationship) = property else { return }
            try check(p, in: relationship.destination)
        case .entity(let name, _):
            _ = try schema.requireEntity(named: name)
        }
    }

    /// The entity the later operands are checked in once an entity test of `name` held: `name`
    /// when it is a sub-entity of `context` or unrelated to it (then no object passes the test,
    /// and the later operands are never evaluated), else `context` (a test for a superentity
    /// holds of every object and narrows nothing).
    private func narrowed(_ context: String, to name: String) -> String {
        schema.entity(named: name) == nil || schema.isEntity(context, kindOf: name) ? context : name
    }

    private func checkComparable(_ property: Schema.Property, with value: PropertyValue, path: PropertyPath, owner: String) throws {
        if value.isNull { return }
        let matches: Bool
        switch property {
        case .attribute(let a):
            matches = (Number(value) != nil ? PropertyValue.int(0).group : value.group) == Self.group(of: a.valueType)
        case .relationship:
            if case .toOne = value { matches = true } else { matches = false }
        }
        guard matches else {
            throw DataStoreError(
                .typeMismatch,
                "\(path) is \(Self.kind(of: property)) of \(owner), compared with a \(value.caseName); compare it with a value of its own type.",
                entityName: owner, propertyName: path.components.last)
        }
    }

    /// The group of ``PropertyValue``'s total order the values of `type` fall in (numbers all
    /// in one: they compare across widths).
    private static func group(of type: Schema.Attribute.ValueType) -> Int {
        switch type {
        case .bool: PropertyValue.bool(false).group
        case .int, .int8, .int16, .int32, .int64, .uint, .uint8, .uint16, .uint32, .uint64, .float, .double, .decimal: PropertyValue.int(0).group
        case .string: PropertyValue.string("").group
        case .date: PropertyValue.date(.distantPast).group
        case .uuid: PropertyValue.uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))).group
        case .url: PropertyValue.url(URL(fileURLWithPath: "/")).group
        case .data: PropertyValue.data(Data()).group
        case .array: PropertyValue.array([]).group
        case .codable: PropertyValue.codable(typeName: "", encoded: Data()).group
        }
    }

    private static func kind(of property: Schema.Property) -> String {
        switch property {
        case .attribute(let a): "a \(a.valueType) attribute"
        case .relationship(let r): r.isToMany ? "a to-many relationship" : "a to-one relationship"
        }
    }
}
