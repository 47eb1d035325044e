import Snapshot

/// What a ``StoreContainer`` throws for a problem of the container itself: its configurations,
/// routing, or a save spread over several stores. A store's own refusal (a missing value, a
/// denied delete, an engine failure) is rethrown as the store's ``DataStoreError``, unchanged.
public struct ContainerError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added; switch with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case entityInNoConfiguration, entityInSeveralConfigurations, unknownEntity, crossStoreRelationship
            case duplicateConfiguration, foreignIdentifier, interruptedSave, unresolvedTransaction
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// An entity of the schema that no configuration holds (``ContainerError/entityName``);
        /// name it (or its root) in one configuration.
        public static let entityInNoConfiguration = Code(.entityInNoConfiguration)
        /// An entity (or its inheritance tree) that two configurations name; the error lists
        /// both in ``ContainerError/configurationNames``.
        public static let entityInSeveralConfigurations = Code(.entityInSeveralConfigurations)
        /// A configuration names an entity the schema does not declare, or a request names one.
        public static let unknownEntity = Code(.unknownEntity)
        /// A relationship whose two ends are held by different configurations (stores): the
        /// error names both ends. Relationships stay within one store.
        public static let crossStoreRelationship = Code(.crossStoreRelationship)
        /// Two configurations with the same name or the same directory, or none at all.
        public static let duplicateConfiguration = Code(.duplicateConfiguration)
        /// An identifier whose store is not one of the container's, or an object saved
        /// through the wrong store.
        public static let foreignIdentifier = Code(.foreignIdentifier)
        /// A save across several stores failed after it was decided: it is committed, but a
        /// store has not applied its part yet. The container refuses every call from then on;
        /// open it again, and the opening finishes the save.
        public static let interruptedSave = Code(.interruptedSave)
        /// A store holds a prepared part of a save whose coordinating store is not in the
        /// container: open the container with every configuration it had.
        public static let unresolvedTransaction = Code(.unresolvedTransaction)

        public var description: String {
            switch value {
            case .entityInNoConfiguration: "entityInNoConfiguration"
            case .entityInSeveralConfigurations: "entityInSeveralConfigurations"
            case .unknownEntity: "unknownEntity"
            case .crossStoreRelationship: "crossStoreRelationship"
            case .duplicateConfiguration: "duplicateConfiguration"
            case .foreignIdentifier: "foreignIdentifier"
            case .interruptedSave: "interruptedSave"
            case .unresolvedTransaction: "unresolvedTransaction"
            }
        }
    }

    /// One end of a relationship: the entity that declares it and its name.
    public struct RelationshipEnd: Hashable, Sendable, CustomStringConvertible {
        /// The declaring entity.
        public var entityName: String
        /// The relationship's name (`nil` for the destination of a relationship without inverse).
        public var relationshipName: String?
        /// The configuration that holds the entity.
        public var configurationName: String

        /// `Entity.relationship (in Configuration)`.
        public var description: String {
            "\(entityName)\(relationshipName.map { ".\($0)" } ?? "") (in \(configurationName))"
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong and what to do next, in words.
    public var message: String
    /// The entity concerned, when there is one.
    public var entityName: String?
    /// The configurations concerned, when there are any.
    public var configurationNames: [String]
    /// For ``Code/crossStoreRelationship``: the two ends of the relationship.
    public var relationshipEnds: [RelationshipEnd]
    /// The error that caused this one, when it wraps another.
    public var underlying: (any Error & Sendable)?

    /// An error with the given code and message and, when known, what it concerns.
    public init(
        _ code: Code, _ message: String, entityName: String? = nil, configurationNames: [String] = [],
        relationshipEnds: [RelationshipEnd] = [], underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.entityName = entityName
        self.configurationNames = configurationNames
        self.relationshipEnds = relationshipEnds
        self.underlying = underlying
    }

    /// `ContainerError.<code>: <message>`, then the cause.
    public var description: String {
        "ContainerError.\(code): \(message)" + (underlying.map { " (caused by \($0))" } ?? "")
    }
}
