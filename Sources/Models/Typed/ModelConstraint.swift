import Snapshot

/// A uniqueness constraint or an index of a model, declared by key path, as SwiftData's
/// `#Unique` and `#Index` macros declare them:
///
/// ```swift
/// final class Account: ModelObject, PersistentModel {
///     var email = ""
///     var first = ""
///     var last = ""
///     var joined = Date.distantPast
///     static let properties: [ModelProperty<Account>] = [.attribute(\.email), .attribute(\.first), .attribute(\.last), .attribute(\.joined)]
///     static let constraints: [ModelConstraint<Account>] = [.unique(\.email), .unique(\.first, \.last), .index(\.joined)]
/// }
/// ```
///
/// Each key path stands for the property the model's ``PersistentModel/properties`` declares
/// at it (by its name in the entity, so a renamed property is matched). One that is not a
/// declared property (a computed property, a path through another value) is refused when the
/// schema is made: `DataStoreError` `.invalidSchema`, naming the entity and the name read
/// from the key path.
public struct ModelConstraint<Model: EntityModel>: Sendable {
    /// What a constraint declares.
    public enum Kind: Sendable, Equatable {
        /// No two objects of the entity (and its sub-entities) hold the same values of these
        /// properties (objects with any of them null are not compared).
        case unique
        /// An index on these properties, in this order, for fetches that filter or sort by them.
        case index
    }

    /// A uniqueness constraint or an index.
    public let kind: Kind
    private let paths: [KeyPathBox<Model>]

    /// The properties, in the order declared.
    public var keyPaths: [PartialKeyPath<Model>] { paths.map(\.keyPath) }

    private init(_ kind: Kind, _ keyPaths: [PartialKeyPath<Model>]) {
        self.kind = kind
        self.paths = keyPaths.map(KeyPathBox.init)
    }

    /// No two objects hold the same values of these properties (SwiftData's `#Unique`). One
    /// property: as the attribute option `.unique`.
    public static func unique(_ first: PartialKeyPath<Model>, _ rest: PartialKeyPath<Model>...) -> Self {
        Self(.unique, [first] + rest)
    }

    /// An index on these properties, in this order (SwiftData's `#Index`).
    public static func index(_ first: PartialKeyPath<Model>, _ rest: PartialKeyPath<Model>...) -> Self {
        Self(.index, [first] + rest)
    }

    /// The properties' names in the entity: as the model's list declares the property at each
    /// key path, else the name the key path's description shows (which the schema then refuses
    /// as a property it does not have).
    var propertyNames: [String] { keyPaths.map { ModelProperty<Model>.propertyName(at: $0, of: Model.self) } }
}

extension PersistentModel {
    /// None.
    public static var constraints: [ModelConstraint<Self>] { [] }

    /// The names of the properties of ``constraints``' uniqueness constraints and of its indexes.
    static var constraintPropertyNames: (unique: [[String]], indexes: [[String]]) {
        (
            constraints.filter { $0.kind == .unique }.map(\.propertyNames),
            constraints.filter { $0.kind == .index }.map(\.propertyNames)
        )
    }

    /// Refuses a constraint whose key path is not a property ``properties`` declares.
    static func checkConstraintKeyPaths() throws {
        for constraint in constraints {
            for keyPath in constraint.keyPaths where !modelProperties.contains(where: { $0.isDeclared(at: keyPath) }) {
                let what = constraint.kind == .unique ? "a uniqueness constraint" : "an index"
                throw DataStoreError(
                    .invalidSchema,
                    "\(Self.self) declares \(what) on \(keyPath), which is not a property its properties list declares (a computed property, or a path through another value); name a stored property the list declares.",
                    entityName: entityName, propertyName: ModelProperty<Self>.swiftName(of: keyPath))
            }
        }
    }
}
