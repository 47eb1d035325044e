/// The left-hand side of a predicate: a property path, with the operators and methods that
/// make ``FetchPredicate`` values from it.
///
/// ```swift
/// let recent: FetchPredicate = .attribute("title").contains("swift", options: .caseInsensitive)
///     && .attribute("date") > cutoff
///     && .relationship("tags").any(.attribute("name") == "news")
/// ```
public struct PredicateOperand: Hashable, Sendable {
    /// The path the predicate reads.
    public var path: PropertyPath

    /// The operand reading `path`.
    public init(_ path: PropertyPath) { self.path = path }

    /// The operand reading the attribute (or to-one path) `path`.
    public static func attribute(_ path: PropertyPath) -> PredicateOperand { PredicateOperand(path) }
    /// The operand reading the relationship `path`: the same as ``attribute(_:)``, for reading.
    public static func relationship(_ path: PropertyPath) -> PredicateOperand { PredicateOperand(path) }

    /// The value at the path equals `value`.
    public static func == (lhs: PredicateOperand, rhs: some PropertyValueConvertible) -> FetchPredicate {
        .compare(path: lhs.path, .equal, value: rhs.propertyValue)
    }
    /// The value at the path differs from `value`.
    public static func != (lhs: PredicateOperand, rhs: some PropertyValueConvertible) -> FetchPredicate {
        .compare(path: lhs.path, .notEqual, value: rhs.propertyValue)
    }
    /// The value at the path is below `value`.
    public static func < (lhs: PredicateOperand, rhs: some PropertyValueConvertible) -> FetchPredicate {
        .compare(path: lhs.path, .less, value: rhs.propertyValue)
    }
    /// The value at the path is at most `value`.
    public static func <= (lhs: PredicateOperand, rhs: some PropertyValueConvertible) -> FetchPredicate {
        .compare(path: lhs.path, .lessOrEqual, value: rhs.propertyValue)
    }
    /// The value at the path is above `value`.
    public static func > (lhs: PredicateOperand, rhs: some PropertyValueConvertible) -> FetchPredicate {
        .compare(path: lhs.path, .greater, value: rhs.propertyValue)
    }
    /// The value at the path is at least `value`.
    public static func >= (lhs: PredicateOperand, rhs: some PropertyValueConvertible) -> FetchPredicate {
        .compare(path: lhs.path, .greaterOrEqual, value: rhs.propertyValue)
    }

    /// The string at the path contains `needle`.
    public func contains(_ needle: String, options: FetchPredicate.StringOptions = []) -> FetchPredicate {
        .string(path: path, .contains, needle: needle, options: options)
    }
    /// The string at the path begins with `prefix`.
    public func beginsWith(_ prefix: String, options: FetchPredicate.StringOptions = []) -> FetchPredicate {
        .string(path: path, .beginsWith, needle: prefix, options: options)
    }
    /// The string at the path ends with `suffix`.
    public func endsWith(_ suffix: String, options: FetchPredicate.StringOptions = []) -> FetchPredicate {
        .string(path: path, .endsWith, needle: suffix, options: options)
    }
    /// The value at the path is null.
    public var isNil: FetchPredicate { .isNull(path: path) }
    /// The value at the path is not null.
    public var isNotNil: FetchPredicate { .not(.isNull(path: path)) }
    /// The value at the path equals one of `values` (SQL's `IN`).
    public func isIn<Value: PropertyValueConvertible>(_ values: some Sequence<Value>) -> FetchPredicate {
        .oneOf(path: path, values: values.map(\.propertyValue))
    }
    /// At least one object of the to-many relationship at the path satisfies `predicate`.
    public func any(_ predicate: FetchPredicate) -> FetchPredicate { .any(path: path, predicate) }
    /// Every object of the to-many relationship at the path satisfies `predicate`.
    public func all(_ predicate: FetchPredicate) -> FetchPredicate { .all(path: path, predicate) }
}

extension FetchPredicate {
    /// The operand reading the attribute (or to-one path) `path`.
    public static func attribute(_ path: PropertyPath) -> PredicateOperand { PredicateOperand(path) }
    /// The operand reading the relationship `path`.
    public static func relationship(_ path: PropertyPath) -> PredicateOperand { PredicateOperand(path) }
    /// The object's identifier is one of `identifiers`.
    public static func identifier(in identifiers: some Sequence<PersistentIdentifier>) -> FetchPredicate {
        .identifierIn(Set(identifiers))
    }
    /// The object is of exactly the entity `name` (not of one of its sub-entities): Core Data's
    /// `entity == Photo`.
    public static func isEntity(_ name: String) -> FetchPredicate { .entity(name, includesSubentities: false) }
    /// The object is of the entity `name` or of one of its sub-entities: Swift's `$0 is Photo`,
    /// Core Data's `isKindOfClass`.
    public static func isKind(of name: String) -> FetchPredicate { .entity(name, includesSubentities: true) }
    /// The predicate that always holds.
    public static var always: FetchPredicate { .constant(true) }
    /// The predicate that never holds.
    public static var never: FetchPredicate { .constant(false) }

    /// Both hold (nested `and`s are flattened).
    public static func && (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        switch (lhs, rhs) {
        case let (.and(a), .and(b)): .and(a + b)
        case let (.and(a), _): .and(a + [rhs])
        case let (_, .and(b)): .and([lhs] + b)
        default: .and([lhs, rhs])
        }
    }
    /// At least one holds (nested `or`s are flattened).
    public static func || (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        switch (lhs, rhs) {
        case let (.or(a), .or(b)): .or(a + b)
        case let (.or(a), _): .or(a + [rhs])
        case let (_, .or(b)): .or([lhs] + b)
        default: .or([lhs, rhs])
        }
    }
    /// The predicate does not hold.
    public static prefix func ! (predicate: FetchPredicate) -> FetchPredicate { .not(predicate) }
}
