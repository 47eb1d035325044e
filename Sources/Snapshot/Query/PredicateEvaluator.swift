import Foundation

/// Evaluates ``FetchPredicate``s and sorts by ``FetchSortDescriptor``s over ``DefaultSnapshot``s:
/// the semantics every store of this package follows.
///
/// The evaluator reads values from the snapshot at hand and reaches other objects through
/// ``resolve``, which a store supplies (from its records, or from a dictionary in memory).
///
/// **Paths.** Each component of a path is a property of the object reached so far. Every
/// component but the last must be a to-one relationship; a to-one without a target ends the
/// path with null (as Swift's optional chaining). A component through a to-many relationship is
/// only allowed as the last one of an `any`/`all` path; elsewhere, an empty component, or a
/// component after an attribute, is ``DataStoreError/Code/invalidPredicate``. A property the
/// snapshot does not hold reads as null. With a ``schema``, a name the object's entity does not
/// declare or inherit is ``DataStoreError/Code/unknownProperty`` (without one, it reads as
/// null). A reference that ``resolve`` cannot find is ``DataStoreError/Code/danglingReference``.
///
/// **Nulls** (``PropertyValue/null`` and a to-one without a target alike). Logic is two-valued,
/// as in Swift and `NSPredicate`, not SQL's three-valued one: `== null` holds exactly for null;
/// `!=` is the negation of `==`; `<`, `<=`, `>`, `>=` and the string operations are `false`
/// when the value is null; `oneOf` holds for null when its list holds a null.
///
/// **Comparisons and coercion.** Numbers compare by numeric value across every integer width,
/// `Float`, `Double` and `Decimal`, exactly (so `.int8(3) == .uint64(3)` and
/// `.int(1) < .double(1.5)` hold); NaN equals NaN and is above every number (the total order's
/// rule, so filters and sorts agree). Other values compare only with values of their own kind,
/// in ``PropertyValue``'s total order; comparing kinds that do not match (a string with a date,
/// say) is ``DataStoreError/Code/typeMismatch``. Strings compare by ``CanonicalStringOrder``
/// (the byte order of their NFC forms): `==` holds between canonically equivalent spellings,
/// as Swift's `==` does, and `<`, `<=`, `>`, `>=` are consistent with it and with sorts.
///
/// **Entities.** ``FetchPredicate/entity(_:includesSubentities:)`` reads the object's concrete
/// entity from its identifier; sub-entities are known only with a ``schema`` (without one, only
/// the entity itself matches).
///
/// **Checked before reading.** With a schema, ``check(_:against:)`` refuses a malformed request
/// (an unknown name, a path that cannot be followed, a value of another kind than the property
/// it is compared with, a sort by a to-many relationship) before any object is read, so whether
/// a request is refused depends on the request alone, not on the objects a store holds;
/// ``run(_:over:)`` and the stores of this package check first.
///
/// **Strings.** `contains`, `beginsWith` and `endsWith` match by `Character` (so canonically
/// equivalent spellings match, as Foundation's `Predicate` matches them); with
/// ``FetchPredicate/StringOptions``, both sides are first brought to NFC and folded with
/// Foundation's `folding(options:locale:)` (locale-independent: `nil` locale), so canonically
/// equivalent spellings fold alike. An empty needle matches every string. A non-string value
/// is a type mismatch.
///
/// **Sorting.** See ``sorted(_:by:)``.
public struct PredicateEvaluator {
    /// Finds the snapshot of an object a relationship refers to; `nil` when there is none.
    public typealias Resolver = (PersistentIdentifier) throws -> DefaultSnapshot?

    /// The schema paths are checked against, when given.
    public let schema: Schema?
    /// Finds the objects relationships refer to.
    public let resolve: Resolver

    /// An evaluator reaching related objects through `resolve`, checking names against `schema`
    /// when one is given.
    public init(schema: Schema? = nil, resolve: @escaping Resolver) {
        self.schema = schema
        self.resolve = resolve
    }

    /// Whether `snapshot` satisfies `predicate`.
    ///
    /// - Throws: ``DataStoreError`` (`invalidPredicate`, `unknownProperty`, `unknownEntity`,
    ///   `typeMismatch`, `danglingReference`) as the type's documentation says.
    public func evaluate(_ predicate: FetchPredicate, on snapshot: DefaultSnapshot) throws -> Bool {
        switch predicate {
        case .constant(let value):
            return value
        case let .compare(path, comparison, value):
            return try Self.holds(
                try self.value(at: path, of: snapshot), comparison, value, path: path, entityName: snapshot.persistentIdentifier.entityName)
        case let .string(path, operation, needle, options):
            let value = try self.value(at: path, of: snapshot)
            if value.isNull { return false }
            guard case .string(let string) = value else {
                throw DataStoreError(
                    .typeMismatch, "A string operation reads \(path), which holds a \(value.caseName); compare it with a value of its type instead.",
                    entityName: snapshot.persistentIdentifier.entityName, propertyName: path.description)
            }
            return Self.matches(string, operation, needle, options)
        case .isNull(let path):
            return try value(at: path, of: snapshot).isNull
        case let .oneOf(path, values):
            let value = try self.value(at: path, of: snapshot)
            for candidate in values where try Self.holds(value, .equal, candidate, path: path, entityName: snapshot.persistentIdentifier.entityName) {
                return true
            }
            return false
        case .identifierIn(let identifiers):
            return identifiers.contains(snapshot.persistentIdentifier)
        case .and(let predicates):
            for p in predicates where try !evaluate(p, on: snapshot) { return false }
            return true
        case .or(let predicates):
            for p in predicates where try evaluate(p, on: snapshot) { return true }
            return false
        case .not(let p):
            return try !evaluate(p, on: snapshot)
        case let .any(path, p):
            for target in try targets(at: path, of: snapshot) where try evaluate(p, on: target) { return true }
            return false
        case let .all(path, p):
            for target in try targets(at: path, of: snapshot) where try !evaluate(p, on: target) { return false }
            return true
        case let .entity(name, includesSubentities):
            return try isOfEntity(snapshot.persistentIdentifier.entityName, name, includesSubentities: includesSubentities)
        }
    }

    /// Whether an object of the concrete entity `concrete` is of `name` (or, with
    /// `includesSubentities`, of a sub-entity of it). Without a schema, only the name itself
    /// matches.
    func isOfEntity(_ concrete: String, _ name: String, includesSubentities: Bool) throws -> Bool {
        if concrete == name { return true }
        guard includesSubentities, let schema else { return false }
        _ = try schema.requireEntity(named: name)
        return schema.isEntity(concrete, kindOf: name)
    }

    /// The one value at `path` of `snapshot`, following to-one relationships (null when one has
    /// no target).
    ///
    /// - Throws: as ``evaluate(_:on:)``; a path through a to-many relationship is
    ///   ``DataStoreError/Code/invalidPredicate``.
    public func value(at path: PropertyPath, of snapshot: DefaultSnapshot) throws -> PropertyValue {
        try checkComponents(path, of: snapshot)
        var current = snapshot
        for (i, name) in path.components.enumerated() {
            let value = try read(name, of: current, path: path)
            if i == path.components.count - 1 { return value }
            switch value {
            case .null, .toOne(nil): return .null
            case .toOne(let id?): current = try target(id, from: current, path: path)
            case .toMany:
                throw DataStoreError(
                    .invalidPredicate, "\(path) goes through the to-many relationship \(name); use `any` or `all` to reach its objects.",
                    entityName: current.persistentIdentifier.entityName, propertyName: name)
            default:
                throw DataStoreError(
                    .invalidPredicate, "\(path) continues past the attribute \(name); only relationships can be followed.",
                    entityName: current.persistentIdentifier.entityName, propertyName: name)
            }
        }
        return .null  // unreachable: checkComponents refuses an empty path
    }

    /// The objects at `path` of `snapshot`: the targets of its last component (a to-many, or a
    /// to-one as zero or one object), reached through to-one relationships.
    public func targets(at path: PropertyPath, of snapshot: DefaultSnapshot) throws -> [DefaultSnapshot] {
        try checkComponents(path, of: snapshot)
        var current = snapshot
        for (i, name) in path.components.enumerated() {
            let value = try read(name, of: current, path: path)
            let last = i == path.components.count - 1
            switch value {
            case .null, .toOne(nil): return []
            case .toOne(let id?):
                let next = try target(id, from: current, path: path)
                if last { return [next] }
                current = next
            case .toMany(let ids) where last:
                return try ids.map { try target($0, from: current, path: path) }
            default:
                throw DataStoreError(
                    .invalidPredicate, "\(path) must be to-one relationships ending in a relationship; \(name) is not one it can follow.",
                    entityName: current.persistentIdentifier.entityName, propertyName: name)
            }
        }
        return []
    }

    private func checkComponents(_ path: PropertyPath, of snapshot: DefaultSnapshot) throws {
        if path.components.isEmpty || path.components.contains(where: \.isEmpty) {
            throw DataStoreError(
                .invalidPredicate, "The key path \"\(path)\" has an empty component; write property names joined by single dots.",
                entityName: snapshot.persistentIdentifier.entityName, propertyName: path.description)
        }
    }

    private func read(_ name: String, of snapshot: DefaultSnapshot, path: PropertyPath) throws -> PropertyValue {
        if let schema {
            let entity = try schema.requireEntity(named: snapshot.persistentIdentifier.entityName)
            guard schema.property(named: name, in: entity.name) != nil else {
                throw DataStoreError(
                    .unknownProperty, "\(path) names \(name), which \(entity.name) neither declares nor inherits; use a property of the schema.",
                    entityName: entity.name, propertyName: name)
            }
        }
        return snapshot.values[name] ?? .null
    }

    private func target(_ id: PersistentIdentifier, from snapshot: DefaultSnapshot, path: PropertyPath) throws -> DefaultSnapshot {
        guard let target = try resolve(id) else {
            throw DataStoreError(
                .danglingReference, "\(path) reaches \(id), which the store does not hold; the reference was left behind by a delete or never saved.",
                entityName: snapshot.persistentIdentifier.entityName, propertyName: path.description, identifier: id)
        }
        return target
    }

    /// Whether `lhs comparison rhs` holds under the documented null and coercion rules.
    static func holds(
        _ lhs: PropertyValue, _ comparison: FetchPredicate.Comparison, _ rhs: PropertyValue, path: PropertyPath, entityName: String? = nil
    ) throws -> Bool {
        if lhs.isNull || rhs.isNull {
            switch comparison {
            case .equal: return lhs.isNull && rhs.isNull
            case .notEqual: return !(lhs.isNull && rhs.isNull)
            default: return false
            }
        }
        let order: Int
        if let a = Number(lhs), let b = Number(rhs) {
            order = Number.compare(a, b)
        } else if lhs.group == rhs.group {
            order = PropertyValue.totalOrder(lhs, rhs)
        } else {
            throw DataStoreError(
                .typeMismatch, "\(path) holds a \(lhs.caseName), compared with a \(rhs.caseName); compare it with a value of its own type.",
                entityName: entityName, propertyName: path.description)
        }
        switch comparison {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .less: return order < 0
        case .lessOrEqual: return order <= 0
        case .greater: return order > 0
        case .greaterOrEqual: return order >= 0
        }
    }

    /// `string` in NFC, then folded: Foundation's folding does not treat every canonically
    /// equivalent spelling alike (its Unicode data may be older than the standard library's),
    /// so it is given one spelling of each.
    static func folded(_ string: String, _ options: String.CompareOptions) -> String {
        String(decoding: CanonicalStringOrder.normalizedUTF8(string), as: UTF8.self).folding(options: options, locale: nil)
    }

    /// The string rule: fold when asked, then match by `Character`.
    static func matches(
        _ string: String, _ operation: FetchPredicate.StringOperation, _ needle: String, _ options: FetchPredicate.StringOptions
    ) -> Bool {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        let haystack = Array(folding.isEmpty ? string : Self.folded(string, folding))
        let pattern = Array(folding.isEmpty ? needle : Self.folded(needle, folding))
        if pattern.isEmpty { return true }
        guard pattern.count <= haystack.count else { return false }
        switch operation {
        case .beginsWith: return haystack.starts(with: pattern)
        case .endsWith: return haystack.suffix(pattern.count).elementsEqual(pattern)
        case .contains:
            for start in 0...(haystack.count - pattern.count) where haystack[start..<start + pattern.count].elementsEqual(pattern) {
                return true
            }
            return false
        }
    }
}
