import Foundation
import Snapshot

/// Walks a `#Predicate`'s expression tree and builds the ``FetchPredicate`` a store runs.
///
/// Each `PredicateExpressions` node translates itself (``StoreTranslatableExpression``),
/// asking the translator for its operands; the translator keeps the variables in scope (the
/// predicate's input, the element of a `contains(where:)`, the unwrapped value of an optional
/// chain) and the rules that turn paths and constants into conditions.
struct PredicateTranslator {
    private var variables: [PredicateExpressions.VariableID: StorePath] = [:]
    /// The nesting depth of the scope being translated (0: the fetched object).
    private(set) var scope = 0

    /// A translator for predicates over `Model`, whose input is `variable`.
    init<Model: EntityModel>(input variable: PredicateExpressions.Variable<Model>) {
        variables[variable.key] = StorePath(components: [], scope: 0, target: .object(Model.self))
    }

    // MARK: Walking

    /// The translation of `expression`, any `PredicateExpression`.
    mutating func term(of expression: Any) throws -> StoreTerm {
        guard let translatable = expression as? any StoreTranslatableExpression else {
            throw Self.unsupported(
                expression,
                "the store's predicates cannot express it. Supported: ==, !=, <, <=, >, >=, &&, ||, !, String.contains(_:), starts(with:), Sequence.contains(_:), contains(where:), allSatisfy(_:), isEmpty, ??, optional chaining through to-one relationships, and `is` / `as?` with a model type"
            )
        }
        return try translatable.translate(with: &self)
    }

    /// The condition `expression` stands for: a translated condition, a Boolean attribute
    /// (`$0.isDraft`), or a Boolean constant.
    mutating func condition(of expression: Any) throws -> FetchPredicate {
        switch try term(of: expression) {
        case .predicate(let predicate):
            return predicate
        case .path(let path):
            guard case .attribute(.bool) = path.target else {
                throw Self.unsupported(expression, "\(path.dotted) is not a Boolean attribute, so it cannot be a condition by itself")
            }
            return guarded(path, .compare(path: try leaf(path, in: expression, guarded: true), .equal, value: .bool(true)), whenAbsent: false)
        case .constant(let value):
            guard let bool = value as? Bool else { throw Self.unsupported(expression, "a constant that is not a Boolean cannot be a condition") }
            return .constant(bool)
        case .coalesced(let path, let fallback):
            guard case .attribute(.bool) = path.target else {
                throw Self.unsupported(expression, "\(path.dotted) ?? … is not a Boolean, so it cannot be a condition by itself")
            }
            return try coalescing(path, fallback, in: expression) { .compare(path: $0, .equal, value: .bool(true)) }
        }
    }

    /// The path `variable` stands for.
    func path(of variable: PredicateExpressions.VariableID, in expression: Any) throws -> StorePath {
        guard let path = variables[variable] else {
            throw Self.unsupported(expression, "the predicate refers to a variable that is not in scope")
        }
        return path
    }

    /// `body`'s result with `variable` standing for `path` (the unwrapped value of an optional
    /// chain: the same scope).
    mutating func binding<Result>(
        _ variable: PredicateExpressions.VariableID, to path: StorePath, _ body: (inout PredicateTranslator) throws -> Result
    ) throws -> Result {
        let saved = variables[variable]
        variables[variable] = path
        defer { variables[variable] = saved }
        return try body(&self)
    }

    /// `body`'s result in a new scope whose object is an element of a to-many relationship
    /// of `model` objects, named by `variable`.
    mutating func elementScope<Result>(
        _ variable: PredicateExpressions.VariableID, model: any EntityModel.Type, _ body: (inout PredicateTranslator) throws -> Result
    ) throws -> Result {
        scope += 1
        defer { scope -= 1 }
        return try binding(variable, to: StorePath(components: [], scope: scope, target: .object(model)), body)
    }

    /// `path` as a property path of the current scope's object.
    ///
    /// - Throws: when `path` starts from an outer scope (inside `contains(where:)`, a
    ///   condition on the outer object), or is the object itself; and, unless the caller wraps
    ///   the condition it makes in ``guarded(_:_:whenAbsent:)`` (`guarded`), when the path
    ///   reads through a conditional cast.
    func leaf(_ path: StorePath, in expression: Any, guarded: Bool = false) throws -> PropertyPath {
        try checkScope(of: path, in: expression)
        guard !path.components.isEmpty else {
            throw Self.unsupported(expression, "the object itself can only be compared for identity (== a model or its persistentModelID)")
        }
        guard guarded || path.casts.isEmpty else {
            throw Self.unsupported(
                expression,
                "after `as?`, the store can compare an attribute or to-one of the cast object with a constant (`($0 as? Photo)?.width ?? 0 > 1000`, `($0 as? Photo)?.width == 1200`); test the type with `is` for anything else"
            )
        }
        return path.propertyPath
    }

    /// `predicate`, a condition on the value at `path`, for an object of any entity: the value
    /// is read only of an object that passes the entity tests of the path's casts; of any other,
    /// the optional chain ends in `nil`, for which the condition is `whenAbsent`. (The tests
    /// come first, so the store reads a sub-entity's property only of objects that have it.)
    func guarded(_ path: StorePath, _ predicate: FetchPredicate, whenAbsent: Bool) -> FetchPredicate {
        guard !path.casts.isEmpty else { return predicate }
        let tests = path.casts.map { FetchPredicate.entity($0, includesSubentities: true) }
        if whenAbsent { return FetchPredicate.or(tests.map { .not($0) }) || predicate }
        return FetchPredicate.and(tests) && predicate
    }

    /// Refuses `path` when it starts from an outer scope.
    func checkScope(of path: StorePath, in expression: Any) throws {
        guard path.scope == scope else {
            throw Self.unsupported(
                expression,
                "inside contains(where:) or allSatisfy, a condition may only read the element's properties, not the outer object's; test the outer object outside the closure"
            )
        }
    }

    // MARK: Key paths

    /// What `keyPath` reaches from `base`.
    func follow(_ keyPath: AnyKeyPath, from base: StorePath, in expression: Any) throws -> StoreTerm {
        switch base.target {
        case .object(let model):
            return .path(try Self.follow(keyPath, of: model, from: base, in: expression))
        case .attribute(.string) where keyPath == \String.isEmpty:
            return .predicate(.compare(path: try leaf(base, in: expression), .equal, value: .string("")))
        case .objects(let model) where keyPath == Self.isEmptyKeyPath(of: model):
            return .predicate(.not(.any(path: try leaf(base, in: expression), .constant(true))))
        case .references where keyPath == \[PersistentIdentifier].isEmpty:
            return .predicate(.not(.any(path: try leaf(base, in: expression), .constant(true))))
        default:
            throw PredicateTranslationError(
                .undeclaredKeyPath,
                "a \(type(of: keyPath)) reads a value of \(base.dotted) that the store does not hold; only declared properties, persistentModelID, String.isEmpty and a to-many relationship's isEmpty can be read.",
                expression: "\(type(of: keyPath)) \(keyPath)")
        }
    }

    private static func isEmptyKeyPath<Model: EntityModel>(of model: Model.Type) -> AnyKeyPath { \[Model].isEmpty }

    private static func follow<Model: EntityModel>(
        _ keyPath: AnyKeyPath, of model: Model.Type, from base: StorePath, in expression: Any
    ) throws -> StorePath {
        var path = base
        if Model.isIdentifierKeyPath(keyPath) {
            path.target = .identifier
            return path
        }
        guard let property = Model.property(at: keyPath) else {
            throw PredicateTranslationError(
                .undeclaredKeyPath,
                "\(keyPath) is not among \(Model.self).properties; declare the property there to use it in predicates and sorts.",
                expression: "\(keyPath)")
        }
        path.components.append(property.name)
        switch property.kind {
        case .attribute(let attribute):
            path.target = .attribute(attribute.valueType)
        case .relationship(let relationship):
            switch (relationship.cardinality, property.destinationModel) {
            case (.toOne, let destination?): path.target = .object(destination)
            case (.toOne, nil): path.target = .reference
            case (.toMany, let destination?): path.target = .objects(destination)
            case (.toMany, nil): path.target = .references
            }
        }
        return path
    }

    // MARK: Constants

    /// The store value of a Swift constant: `nil` is null, a model is a reference to its
    /// identifier, an ``AttributeValue`` (or any ``PropertyValueConvertible``) its value.
    static func value(of constant: Any, in expression: Any) throws -> PropertyValue {
        if let optional = constant as? any OptionalConstant {
            guard let wrapped = optional.wrappedConstant else { return .null }
            return try value(of: wrapped, in: expression)
        }
        if let model = constant as? any EntityModel { return .toOne(model.persistentModelID) }
        if let convertible = constant as? any PropertyValueConvertible { return convertible.propertyValue }
        throw PredicateTranslationError(
            .unsupportedValue,
            "the constant \(constant) (a \(type(of: constant))) is not a value a store holds; compare with an attribute's type, a model or a PersistentIdentifier.",
            expression: "\(type(of: expression))")
    }

    /// The elements of a constant sequence.
    static func elements(of constant: Any, in expression: Any) throws -> [Any] {
        guard !(constant is String), let sequence = constant as? any Sequence else {
            throw PredicateTranslationError(
                .unsupportedValue, "contains(_:) needs a constant collection of values (an array or set), not \(type(of: constant)).",
                expression: "\(type(of: expression))")
        }
        return elementsOf(sequence)
    }

    private static func elementsOf<S: Sequence>(_ sequence: S) -> [Any] { sequence.map { $0 as Any } }

    // MARK: Conditions

    /// `lhs == rhs`.
    func equality(_ lhs: StoreTerm, _ rhs: StoreTerm, in expression: Any) throws -> FetchPredicate {
        switch (lhs, rhs) {
        case let (.constant(a), .constant(b)):
            return .constant(try Self.value(of: a, in: expression) == Self.value(of: b, in: expression))
        case let (.path(path), .constant(constant)), let (.constant(constant), .path(path)):
            return try equality(path, try Self.value(of: constant, in: expression), in: expression)
        case let (.coalesced(path, fallback), .constant(constant)), let (.constant(constant), .coalesced(path, fallback)):
            let value = try Self.value(of: constant, in: expression)
            return try coalescing(path, fallback, in: expression) { .compare(path: $0, .equal, value: value) }
        case (.predicate(let a), .predicate(let b)):
            return .or([.and([a, b]), .and([.not(a), .not(b)])])
        case let (.predicate(condition), .constant(constant)), let (.constant(constant), .predicate(condition)):
            guard let bool = constant as? Bool else { throw Self.unsupported(expression, "a condition compared with a non-Boolean") }
            return bool ? condition : .not(condition)
        default:
            throw Self.unsupported(
                expression, "the store compares a property with a constant, not two properties (or two computed values) with each other")
        }
    }

    private func equality(_ path: StorePath, _ value: PropertyValue, in expression: Any) throws -> FetchPredicate {
        switch path.target {
        case .identifier where path.components.isEmpty, .object where path.components.isEmpty:
            try checkScope(of: path, in: expression)
            guard path.casts.isEmpty else {
                throw Self.unsupported(expression, "a cast object is compared for identity; compare the object itself, or test its type with `is`")
            }
            switch value {
            case .toOne(let id?): return .identifierIn([id])
            case .null, .toOne(nil): return .constant(false)
            default: throw Self.unsupported(expression, "an object's identity is compared with a \(value.caseName), not a model or identifier")
            }
        case .identifier, .object, .reference, .attribute:
            let leafPath = try leaf(path, in: expression, guarded: true)
            return guarded(path, value.isNull ? .isNull(path: leafPath) : .compare(path: leafPath, .equal, value: value), whenAbsent: value.isNull)
        case .objects, .references:
            throw Self.unsupported(
                expression, "a to-many relationship (\(path.dotted)) cannot be compared as a whole; use contains(_:), contains(where:) or isEmpty")
        }
    }

    /// `lhs op rhs` for an ordering operator.
    func ordering(_ lhs: StoreTerm, _ op: FetchPredicate.Comparison, _ rhs: StoreTerm, in expression: Any) throws -> FetchPredicate {
        switch (lhs, rhs) {
        case let (.path(path), .constant(constant)):
            return try ordering(path, op, try Self.value(of: constant, in: expression), in: expression)
        case let (.constant(constant), .path(path)):
            return try ordering(path, Self.flipped(op), try Self.value(of: constant, in: expression), in: expression)
        case let (.coalesced(path, fallback), .constant(constant)):
            let value = try Self.value(of: constant, in: expression)
            return try coalescing(path, fallback, in: expression) { .compare(path: $0, op, value: value) }
        case let (.constant(constant), .coalesced(path, fallback)):
            let value = try Self.value(of: constant, in: expression)
            return try coalescing(path, fallback, in: expression) { .compare(path: $0, Self.flipped(op), value: value) }
        case let (.constant(a), .constant(b)):
            let (x, y) = (try Self.value(of: a, in: expression), try Self.value(of: b, in: expression))
            return try coalescing(
                StorePath(components: ["value"], scope: scope, target: .attribute(.string)), x, in: expression, constantOnly: true
            ) { .compare(path: $0, op, value: y) }
        default:
            throw Self.unsupported(
                expression, "the store compares a property with a constant, not two properties (or two computed values) with each other")
        }
    }

    private func ordering(_ path: StorePath, _ op: FetchPredicate.Comparison, _ value: PropertyValue, in expression: Any) throws -> FetchPredicate {
        guard case .attribute = path.target else {
            throw Self.unsupported(expression, "\(path.dotted) is not an attribute; only attributes can be ordered with <, <=, > or >=")
        }
        return guarded(path, .compare(path: try leaf(path, in: expression, guarded: true), op, value: value), whenAbsent: false)
    }

    private static func flipped(_ op: FetchPredicate.Comparison) -> FetchPredicate.Comparison {
        switch op {
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        case .equal, .notEqual: op
        }
    }

    /// The string at `base` matched against the constant `needle` by `operation`.
    func stringMatch(_ base: StoreTerm, _ operation: FetchPredicate.StringOperation, _ needle: StoreTerm, in expression: Any) throws -> FetchPredicate
    {
        guard case .constant(let constant) = needle, let string = constant as? String else {
            throw Self.unsupported(expression, "the text to look for must be a constant String (captured from outside the predicate)")
        }
        switch base {
        case .path(let path):
            guard case .attribute(.string) = path.target else {
                throw Self.unsupported(expression, "\(path.dotted) is not a String attribute")
            }
            return guarded(
                path, .string(path: try leaf(path, in: expression, guarded: true), operation, needle: string, options: []), whenAbsent: false)
        case let .coalesced(path, fallback):
            return try coalescing(path, fallback, in: expression) { .string(path: $0, operation, needle: string, options: []) }
        case .constant(let value):
            guard let haystack = value as? String else { throw Self.unsupported(expression, "a string operation on a constant that is not a String") }
            return try coalescing(
                StorePath(components: ["value"], scope: scope, target: .attribute(.string)), .string(haystack), in: expression, constantOnly: true
            ) { .string(path: $0, operation, needle: string, options: []) }
        case .predicate:
            throw Self.unsupported(expression, "a string operation on a condition")
        }
    }

    /// `make(path)` where the path's value is replaced by `fallback` when null (`path ??
    /// fallback`): `make` of the fallback is worked out now, with the store's own evaluator, so
    /// the result agrees with how the store would evaluate it. With `constantOnly`, just that
    /// constant.
    func coalescing(
        _ path: StorePath, _ fallback: PropertyValue, in expression: Any, constantOnly: Bool = false,
        _ make: (PropertyPath) -> FetchPredicate
    ) throws -> FetchPredicate {
        let probe = DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Constant"), values: ["value": fallback])
        let whenNull = try PredicateEvaluator(resolve: { _ in nil }).evaluate(make("value"), on: probe)
        if constantOnly { return .constant(whenNull) }
        let leafPath = try leaf(path, in: expression, guarded: true)
        let condition: FetchPredicate =
            whenNull ? .or([.isNull(path: leafPath), make(leafPath)]) : .and([.not(.isNull(path: leafPath)), make(leafPath)])
        return guarded(path, condition, whenAbsent: whenNull)
    }

    static func unsupported(_ expression: Any, _ why: String) -> PredicateTranslationError {
        PredicateTranslationError(.unsupportedExpression, "The predicate cannot be run by the store: \(why).", expression: "\(type(of: expression))")
    }
}

/// An `Optional` seen through `Any`, so a captured `nil` becomes a null.
protocol OptionalConstant {
    /// The wrapped value, or `nil`.
    var wrappedConstant: Any? { get }
}

extension Optional: OptionalConstant {
    var wrappedConstant: Any? { self.map { $0 as Any } }
}
