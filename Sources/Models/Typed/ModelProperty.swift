import Snapshot

/// One stored property of a model: its name, its key path, what the schema says of it, and how
/// its value is read into and written from a ``PropertyValue``.
///
/// Made with the factories: ``attribute(_:_:options:originalName:)`` for a value of an
/// ``AttributeValue`` type; `toOne` and `toMany` for relationships held as model references
/// (their inverse named by key path, `inverse: \Attachment.post`, or by name); the
/// `destination:` overloads for relationships held as identifiers.
///
/// **Names.** A property's name in the entity is the Swift property's name, read from the key
/// path (`\.title` is `title`), unless one is given (`.attribute(\.title, "heading")`, for a
/// stored name that differs). A key path that reaches through another value (`\.address.city`)
/// takes its last component's name: give a name for those.
public struct ModelProperty<Model: EntityModel>: Sendable {
    /// What the schema says of a property.
    public enum Kind: Sendable {
        /// An attribute.
        case attribute(Schema.Attribute)
        /// A relationship.
        case relationship(Schema.Relationship)
    }

    /// The property's name in the entity.
    public let name: String
    /// The name of the Swift property the key path reads (its last component), when the key
    /// path's description shows it; what the undeclared-property check compares.
    public let swiftName: String?
    /// Where the model holds it. For a property a class model inherits from a superclass
    /// model, a key path from this class through its superclass (it reads and writes the same
    /// property; key paths the app writes, `\Photo.title`, are matched to it by name).
    public var keyPath: PartialKeyPath<Model> { path.keyPath }
    private let path: KeyPathBox<Model>
    /// The superclass's own key path, for a property inherited from a superclass model.
    var inheritedKeyPath: AnyKeyPath? { inheritedPath?.keyPath }
    private let inheritedPath: AnyKeyPathBox?
    /// The model type a relationship held as references points at (`nil` for attributes and
    /// relationships held as identifiers).
    public let destinationModel: (any EntityModel.Type)?
    let declaredKind: Kind
    /// The inverse's name, worked out from a key path of the destination when asked (not when
    /// the property is made: the destination's list may refer back to this one).
    let inverseName: (@Sendable () -> String)?
    let read: @Sendable (Model) -> PropertyValue
    let write: @Sendable (inout Model, PropertyValue, any ModelResolver) throws -> Void
    /// The model objects a relationship held as references reaches (none for other
    /// properties).
    let relatedObjects: @Sendable (Model) -> [any EntityModel]

    /// Its declaration (a relationship's inverse named by key path resolved to its name).
    public var kind: Kind {
        guard let inverseName, case .relationship(var relationship) = declaredKind else { return declaredKind }
        relationship.inverse = inverseName()
        return .relationship(relationship)
    }

    init(
        name: String?, keyPath: PartialKeyPath<Model>, kind: Kind, destinationModel: (any EntityModel.Type)? = nil,
        inverseName: (@Sendable () -> String)? = nil, inheritedKeyPath: AnyKeyPath? = nil,
        read: @escaping @Sendable (Model) -> PropertyValue,
        write: @escaping @Sendable (inout Model, PropertyValue, any ModelResolver) throws -> Void,
        relatedObjects: @escaping @Sendable (Model) -> [any EntityModel] = { _ in [] }
    ) {
        let swiftName = Self.swiftName(of: inheritedKeyPath ?? keyPath)
        self.name = name ?? swiftName ?? ""
        self.swiftName = swiftName
        self.path = KeyPathBox(keyPath: keyPath)
        self.inheritedPath = inheritedKeyPath.map(AnyKeyPathBox.init)
        self.declaredKind = kind
        self.destinationModel = destinationModel
        self.inverseName = inverseName
        self.read = read
        self.write = write
        self.relatedObjects = relatedObjects
    }

    /// The name of the property `keyPath` ends at, from its description (`\Post.title` is
    /// `title`), or `nil` when the description does not show one (a runtime without
    /// reflection names, a subscript).
    static func swiftName(of keyPath: AnyKeyPath) -> String? {
        let text = String(describing: keyPath)
        guard let dot = text.lastIndex(of: ".") else { return nil }
        let name = text[text.index(after: dot)...]
        guard let first = name.first, first == "_" || first.isLetter,
            name.allSatisfy({ $0 == "_" || $0.isLetter || $0.isNumber })
        else { return nil }
        return String(name)
    }

    /// An inverse given by name, as the closure a key-path inverse resolves through.
    private static func named(_ inverse: String?) -> (@Sendable () -> String)? {
        guard let inverse else { return nil }
        return { inverse }
    }

    /// The name of the property of `Destination` at `keyPath`: as its list declares it, else the
    /// key path's own name.
    static func propertyName<Destination: EntityModel>(at keyPath: PartialKeyPath<Destination>, of _: Destination.Type) -> String {
        Destination.modelProperties.first { $0.isDeclared(at: keyPath) }?.name ?? ModelProperty<Destination>.swiftName(of: keyPath) ?? "\(keyPath)"
    }

    /// The value of this property in `model`.
    public func value(of model: Model) -> PropertyValue { read(model) }

    /// An attribute at `keyPath`, named as the Swift property unless `name` is given;
    /// optional when its type is `Optional`. `options` are the schema's (`.unique`,
    /// `.externalStorage`, …).
    public static func attribute<Value: AttributeValue>(
        _ keyPath: WritableKeyPath<Model, Value> & Sendable, _ name: String? = nil, options: Schema.Attribute.Options = [],
        originalName: String? = nil
    ) -> ModelProperty {
        let name = name ?? swiftName(of: keyPath) ?? ""
        return ModelProperty(
            name: name, keyPath: keyPath,
            kind: .attribute(
                Schema.Attribute(name, Value.attributeType, isOptional: Value.isOptionalAttribute, options: options, originalName: originalName)),
            read: { $0[keyPath: keyPath].propertyValue },
            write: { model, value, _ in model[keyPath: keyPath] = try Value(propertyValue: value) })
    }

    /// A to-one relationship held as a reference to a `Destination` object (or `nil`), named
    /// as the Swift property unless `name` is given, whose inverse is named `inverse`.
    public static func toOne<Destination: EntityModel>(
        _ keyPath: WritableKeyPath<Model, Destination?> & Sendable, _ name: String? = nil, inverse: String? = nil,
        deleteRule: Schema.Relationship.DeleteRule = .nullify, originalName: String? = nil
    ) -> ModelProperty {
        toOne(keyPath, name, inverseName: named(inverse), deleteRule: deleteRule, originalName: originalName)
    }

    /// A to-one relationship held as a reference to a `Destination` object (or `nil`), whose
    /// inverse is the property of `Destination` at `inverse` (`\Post.attachments`).
    public static func toOne<Destination: EntityModel>(
        _ keyPath: WritableKeyPath<Model, Destination?> & Sendable, _ name: String? = nil, inverse: PartialKeyPath<Destination> & Sendable,
        deleteRule: Schema.Relationship.DeleteRule = .nullify, originalName: String? = nil
    ) -> ModelProperty {
        toOne(keyPath, name, inverseName: { propertyName(at: inverse, of: Destination.self) }, deleteRule: deleteRule, originalName: originalName)
    }

    private static func toOne<Destination: EntityModel>(
        _ keyPath: WritableKeyPath<Model, Destination?> & Sendable, _ name: String?, inverseName: (@Sendable () -> String)?,
        deleteRule: Schema.Relationship.DeleteRule, originalName: String?
    ) -> ModelProperty {
        let name = name ?? swiftName(of: keyPath) ?? ""
        return ModelProperty(
            name: name, keyPath: keyPath,
            kind: .relationship(
                Schema.Relationship(
                    name, destination: Destination.entityName, .toOne, inverse: nil, deleteRule: deleteRule, originalName: originalName)),
            destinationModel: Destination.self, inverseName: inverseName,
            read: { .toOne($0[keyPath: keyPath]?.persistentModelID) },
            write: { model, value, resolver in
                model[keyPath: keyPath] = try toOneIdentifier(value, name: name).map { try resolver.model(Destination.self, for: $0) }
            },
            relatedObjects: { $0[keyPath: keyPath].map { [$0] } ?? [] })
    }

    /// A to-many relationship held as references to `Destination` objects, named as the Swift
    /// property unless `name` is given, whose inverse is named `inverse`.
    public static func toMany<Destination: EntityModel>(
        _ keyPath: WritableKeyPath<Model, [Destination]> & Sendable, _ name: String? = nil, inverse: String? = nil,
        deleteRule: Schema.Relationship.DeleteRule = .nullify, minimumCount: Int? = nil, maximumCount: Int? = nil,
        originalName: String? = nil
    ) -> ModelProperty {
        toMany(
            keyPath, name, inverseName: named(inverse), deleteRule: deleteRule, minimumCount: minimumCount,
            maximumCount: maximumCount, originalName: originalName)
    }

    /// A to-many relationship held as references to `Destination` objects, whose inverse is
    /// the property of `Destination` at `inverse` (`\Tag.posts`, `\Attachment.post`).
    public static func toMany<Destination: EntityModel>(
        _ keyPath: WritableKeyPath<Model, [Destination]> & Sendable, _ name: String? = nil, inverse: PartialKeyPath<Destination> & Sendable,
        deleteRule: Schema.Relationship.DeleteRule = .nullify, minimumCount: Int? = nil, maximumCount: Int? = nil,
        originalName: String? = nil
    ) -> ModelProperty {
        toMany(
            keyPath, name, inverseName: { propertyName(at: inverse, of: Destination.self) }, deleteRule: deleteRule,
            minimumCount: minimumCount, maximumCount: maximumCount, originalName: originalName)
    }

    private static func toMany<Destination: EntityModel>(
        _ keyPath: WritableKeyPath<Model, [Destination]> & Sendable, _ name: String?, inverseName: (@Sendable () -> String)?,
        deleteRule: Schema.Relationship.DeleteRule, minimumCount: Int?, maximumCount: Int?, originalName: String?
    ) -> ModelProperty {
        let name = name ?? swiftName(of: keyPath) ?? ""
        return ModelProperty(
            name: name, keyPath: keyPath,
            kind: .relationship(
                Schema.Relationship(
                    name, destination: Destination.entityName, .toMany, inverse: nil, deleteRule: deleteRule,
                    minimumCount: minimumCount, maximumCount: maximumCount, originalName: originalName)),
            destinationModel: Destination.self, inverseName: inverseName,
            read: { .toMany($0[keyPath: keyPath].map(\.persistentModelID)) },
            write: { model, value, resolver in
                model[keyPath: keyPath] = try toManyIdentifiers(value, name: name).map { try resolver.model(Destination.self, for: $0) }
            },
            relatedObjects: { $0[keyPath: keyPath] })
    }

    /// A to-one relationship to objects of the entity `destination`, held as an identifier.
    public static func toOne(
        _ keyPath: WritableKeyPath<Model, PersistentIdentifier?> & Sendable, _ name: String? = nil, destination: String,
        inverse: String? = nil, deleteRule: Schema.Relationship.DeleteRule = .nullify, originalName: String? = nil
    ) -> ModelProperty {
        let name = name ?? swiftName(of: keyPath) ?? ""
        return ModelProperty(
            name: name, keyPath: keyPath,
            kind: .relationship(
                Schema.Relationship(name, destination: destination, .toOne, inverse: inverse, deleteRule: deleteRule, originalName: originalName)),
            read: { .toOne($0[keyPath: keyPath]) },
            write: { model, value, _ in model[keyPath: keyPath] = try toOneIdentifier(value, name: name) })
    }

    /// A to-many relationship to objects of the entity `destination`, held as identifiers.
    public static func toMany(
        _ keyPath: WritableKeyPath<Model, [PersistentIdentifier]> & Sendable, _ name: String? = nil, destination: String,
        inverse: String? = nil, deleteRule: Schema.Relationship.DeleteRule = .nullify, minimumCount: Int? = nil,
        maximumCount: Int? = nil, originalName: String? = nil
    ) -> ModelProperty {
        let name = name ?? swiftName(of: keyPath) ?? ""
        return ModelProperty(
            name: name, keyPath: keyPath,
            kind: .relationship(
                Schema.Relationship(
                    name, destination: destination, .toMany, inverse: inverse, deleteRule: deleteRule, minimumCount: minimumCount,
                    maximumCount: maximumCount, originalName: originalName)),
            read: { .toMany($0[keyPath: keyPath]) },
            write: { model, value, _ in model[keyPath: keyPath] = try toManyIdentifiers(value, name: name) })
    }

    private static func toOneIdentifier(_ value: PropertyValue, name: String) throws -> PersistentIdentifier? {
        switch value {
        case .null, .toOne(nil): return nil
        case .toOne(let id?): return id
        default:
            throw DataStoreError(
                .typeMismatch,
                "The to-one relationship \(Model.entityName).\(name) was read as a \(value.caseName); the stored entity does not match the model — migrate the data.",
                entityName: Model.entityName, propertyName: name)
        }
    }

    private static func toManyIdentifiers(_ value: PropertyValue, name: String) throws -> [PersistentIdentifier] {
        switch value {
        case .null: return []
        case .toMany(let ids): return ids
        default:
            throw DataStoreError(
                .typeMismatch,
                "The to-many relationship \(Model.entityName).\(name) was read as a \(value.caseName); the stored entity does not match the model — migrate the data.",
                entityName: Model.entityName, propertyName: name)
        }
    }
}
