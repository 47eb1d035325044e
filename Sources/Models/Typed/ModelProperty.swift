import Snapshot

/// One stored property of a model: its name, its key path, what the schema says of it, and how
/// its value is read into and written from a ``PropertyValue``.
///
/// Made with the factories: ``attribute(_:_:options:originalName:)`` for a value of an
/// ``AttributeValue`` type; ``toOne(_:_:inverse:deleteRule:originalName:)`` and
/// ``toMany(_:_:inverse:deleteRule:minimumCount:maximumCount:originalName:)`` for
/// relationships held as model references; the `destination:` overloads for relationships
/// held as identifiers.
public struct ModelProperty<Model: PersistentModel>: Sendable {
    /// What the schema says of a property.
    public enum Kind: Sendable {
        /// An attribute.
        case attribute(Schema.Attribute)
        /// A relationship.
        case relationship(Schema.Relationship)
    }

    /// The property's name in the entity.
    public let name: String
    /// Where the model holds it.
    public let keyPath: PartialKeyPath<Model> & Sendable
    /// Its declaration.
    public let kind: Kind
    /// The model type a relationship held as references points at (`nil` for attributes and
    /// relationships held as identifiers).
    public let destinationModel: (any PersistentModel.Type)?
    let read: @Sendable (Model) -> PropertyValue
    let write: @Sendable (inout Model, PropertyValue, any ModelResolver) throws -> Void
    /// The model objects a relationship held as references reaches (none for other
    /// properties).
    let relatedObjects: @Sendable (Model) -> [any PersistentModel]

    init(
        name: String, keyPath: PartialKeyPath<Model> & Sendable, kind: Kind, destinationModel: (any PersistentModel.Type)? = nil,
        read: @escaping @Sendable (Model) -> PropertyValue,
        write: @escaping @Sendable (inout Model, PropertyValue, any ModelResolver) throws -> Void,
        relatedObjects: @escaping @Sendable (Model) -> [any PersistentModel] = { _ in [] }
    ) {
        self.name = name
        self.keyPath = keyPath
        self.kind = kind
        self.destinationModel = destinationModel
        self.read = read
        self.write = write
        self.relatedObjects = relatedObjects
    }

    /// The value of this property in `model`.
    public func value(of model: Model) -> PropertyValue { read(model) }

    /// An attribute at `keyPath` named `name`; optional when its type is `Optional`.
    /// `options` are the schema's (`.unique`, `.externalStorage`, …).
    public static func attribute<Value: AttributeValue>(
        _ keyPath: WritableKeyPath<Model, Value> & Sendable, _ name: String, options: Schema.Attribute.Options = [],
        originalName: String? = nil
    ) -> ModelProperty {
        ModelProperty(
            name: name, keyPath: keyPath,
            kind: .attribute(
                Schema.Attribute(name, Value.attributeType, isOptional: Value.isOptionalAttribute, options: options, originalName: originalName)),
            read: { $0[keyPath: keyPath].propertyValue },
            write: { model, value, _ in model[keyPath: keyPath] = try Value(propertyValue: value) })
    }

    /// A to-one relationship held as a reference to a `Destination` object (or `nil`).
    public static func toOne<Destination: PersistentModel>(
        _ keyPath: WritableKeyPath<Model, Destination?> & Sendable, _ name: String, inverse: String? = nil,
        deleteRule: Schema.Relationship.DeleteRule = .nullify, originalName: String? = nil
    ) -> ModelProperty {
        ModelProperty(
            name: name, keyPath: keyPath,
            kind: .relationship(
                Schema.Relationship(
                    name, destination: Destination.entityName, .toOne, inverse: inverse, deleteRule: deleteRule, originalName: originalName)),
            destinationModel: Destination.self,
            read: { .toOne($0[keyPath: keyPath]?.persistentModelID) },
            write: { model, value, resolver in
                model[keyPath: keyPath] = try toOneIdentifier(value, name: name).map { try resolver.model(Destination.self, for: $0) }
            },
            relatedObjects: { $0[keyPath: keyPath].map { [$0] } ?? [] })
    }

    /// A to-many relationship held as references to `Destination` objects.
    public static func toMany<Destination: PersistentModel>(
        _ keyPath: WritableKeyPath<Model, [Destination]> & Sendable, _ name: String, inverse: String? = nil,
        deleteRule: Schema.Relationship.DeleteRule = .nullify, minimumCount: Int? = nil, maximumCount: Int? = nil,
        originalName: String? = nil
    ) -> ModelProperty {
        ModelProperty(
            name: name, keyPath: keyPath,
            kind: .relationship(
                Schema.Relationship(
                    name, destination: Destination.entityName, .toMany, inverse: inverse, deleteRule: deleteRule,
                    minimumCount: minimumCount, maximumCount: maximumCount, originalName: originalName)),
            destinationModel: Destination.self,
            read: { .toMany($0[keyPath: keyPath].map(\.persistentModelID)) },
            write: { model, value, resolver in
                model[keyPath: keyPath] = try toManyIdentifiers(value, name: name).map { try resolver.model(Destination.self, for: $0) }
            },
            relatedObjects: { $0[keyPath: keyPath] })
    }

    /// A to-one relationship to objects of the entity `destination`, held as an identifier.
    public static func toOne(
        _ keyPath: WritableKeyPath<Model, PersistentIdentifier?> & Sendable, _ name: String, destination: String,
        inverse: String? = nil, deleteRule: Schema.Relationship.DeleteRule = .nullify, originalName: String? = nil
    ) -> ModelProperty {
        ModelProperty(
            name: name, keyPath: keyPath,
            kind: .relationship(
                Schema.Relationship(name, destination: destination, .toOne, inverse: inverse, deleteRule: deleteRule, originalName: originalName)),
            read: { .toOne($0[keyPath: keyPath]) },
            write: { model, value, _ in model[keyPath: keyPath] = try toOneIdentifier(value, name: name) })
    }

    /// A to-many relationship to objects of the entity `destination`, held as identifiers.
    public static func toMany(
        _ keyPath: WritableKeyPath<Model, [PersistentIdentifier]> & Sendable, _ name: String, destination: String,
        inverse: String? = nil, deleteRule: Schema.Relationship.DeleteRule = .nullify, minimumCount: Int? = nil,
        maximumCount: Int? = nil, originalName: String? = nil
    ) -> ModelProperty {
        ModelProperty(
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
                .typeMismatch, "The to-one relationship \(Model.entityName).\(name) was read as a \(value.caseName); the stored entity does not match the model — migrate the data.",
                entityName: Model.entityName, propertyName: name)
        }
    }

    private static func toManyIdentifiers(_ value: PropertyValue, name: String) throws -> [PersistentIdentifier] {
        switch value {
        case .null: return []
        case .toMany(let ids): return ids
        default:
            throw DataStoreError(
                .typeMismatch, "The to-many relationship \(Model.entityName).\(name) was read as a \(value.caseName); the stored entity does not match the model — migrate the data.",
                entityName: Model.entityName, propertyName: name)
        }
    }
}
