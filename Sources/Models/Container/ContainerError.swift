import Snapshot

/// What a ``StoreContainer`` throws for a problem of the container itself: its configurations,
/// routing, opening its stores, or a save spread over several stores. A store's own refusal of
/// a save or fetch (a missing value, a denied delete, an engine failure) is rethrown as the
/// store's ``DataStoreError``, unchanged.
///
/// **Opening throws only this type.** Every failure of
/// ``StoreContainer/init(schema:configurations:migrationPlan:history:)`` is a `ContainerError`
/// naming the configuration concerned (``configurationNames``), with a code per cause:
/// ``Code/noConfigurations``, ``Code/duplicateConfiguration`` and the other routing codes,
/// ``Code/notADirectory``, ``Code/permissionDenied``, ``Code/locked``, ``Code/notAStore``,
/// ``Code/headerLost``, ``Code/corrupted``, ``Code/schemaMismatch``, ``Code/migrationFailed``,
/// ``Code/invalidSchema``, ``Code/unresolvedTransaction``, and ``Code/storeFailed`` for any other
/// failure of a store's files. The error it wraps (the store's ``DataStoreError``, whose own
/// ``DataStoreError/underlying`` is the engine's error) is kept in ``underlying``.
public struct ContainerError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added; switch with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case entityInNoConfiguration, entityInSeveralConfigurations, unknownEntity, crossStoreRelationship
            case duplicateConfiguration, foreignIdentifier, interruptedSave, unresolvedTransaction
            case locked, notAStore, permissionDenied, closed, corrupted, saveNotAllowed, headerLost
            case noConfigurations, notADirectory, schemaMismatch, migrationFailed, invalidSchema, storeFailed
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
        /// Two configurations with the same name or the same directory.
        public static let duplicateConfiguration = Code(.duplicateConfiguration)
        /// The container was given no configuration; pass one per store.
        public static let noConfigurations = Code(.noConfigurations)
        /// A configuration's path is a file, or lies under a file, where a directory is needed:
        /// no store was opened and nothing was written. Choose a directory path.
        public static let notADirectory = Code(.notADirectory)
        /// A configuration's store holds another schema than its part of the container's, and
        /// no migration can take it there (an incompatible change without a
        /// ``ModelMigrationPlan`` that covers it, a version the plan does not list, a stored
        /// version newer than the configured one): no store was opened and the store is
        /// unchanged. ``ContainerError/underlying`` is the store's `schemaMismatch`, whose
        /// ``DataStoreError/underlying`` names each change.
        public static let schemaMismatch = Code(.schemaMismatch)
        /// The migration of a configuration's store could not be made: a custom stage's closure
        /// threw, or stored objects do not fit the new schema (a uniqueness rule, a missing
        /// value, a value too long for a new index or uniqueness rule; ``ContainerError/underlying``
        /// names the objects). The store is as it was.
        public static let migrationFailed = Code(.migrationFailed)
        /// A model of the migration plan would lose data (a stored property its list leaves
        /// out): ``ContainerError/underlying`` names the model's entity and the property. No
        /// store was opened.
        public static let invalidSchema = Code(.invalidSchema)
        /// A configuration's store could not be opened for a reason no other code names (an I/O
        /// error, a full disk): ``ContainerError/underlying`` is the store's error, and its
        /// cause the engine's. No store was opened.
        public static let storeFailed = Code(.storeFailed)
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
        /// A configuration's store is open elsewhere (another container or store, in this
        /// process or another, holds its lock): no store was opened. Close the other first.
        public static let locked = Code(.locked)
        /// A configuration's directory holds something that is not a store of this kind
        /// (other files, or an engine store with keys but no `WALDataStore` header): no store
        /// was opened and nothing was written there. Choose an empty or new directory.
        public static let notAStore = Code(.notAStore)
        /// The operating system refused access to a configuration's directory or files (or to
        /// make a missing parent directory): no store was opened. Fix the permissions or choose
        /// another directory.
        public static let permissionDenied = Code(.permissionDenied)
        /// The container was closed (``StoreContainer/close()``); open a new one.
        public static let closed = Code(.closed)
        /// A configuration's store is damaged (a checksum failed, a record does not decode):
        /// no store was opened. Salvage it (`LogStore.salvage(at:)`) or restore it from a copy.
        public static let corrupted = Code(.corrupted)
        /// A save that touches a configuration opened with `allowsSave: false`: nothing was
        /// written to any store.
        public static let saveNotAllowed = Code(.saveNotAllowed)
        /// A configuration's directory holds the `quarantine/` folder of a salvage but no
        /// `WALDataStore` header (``DataStoreError/Code/headerLost``): the store lost its
        /// header, and opening it as usual would start a new, empty store there. No store was
        /// opened and nothing was written. Run `walstore verify` on the directory, restore the
        /// store from a copy, or start a new store there on purpose with the configuration's
        /// ``StoreContainer/Configuration/missingHeader``.
        public static let headerLost = Code(.headerLost)

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
            case .locked: "locked"
            case .notAStore: "notAStore"
            case .permissionDenied: "permissionDenied"
            case .closed: "closed"
            case .corrupted: "corrupted"
            case .saveNotAllowed: "saveNotAllowed"
            case .headerLost: "headerLost"
            case .noConfigurations: "noConfigurations"
            case .notADirectory: "notADirectory"
            case .schemaMismatch: "schemaMismatch"
            case .migrationFailed: "migrationFailed"
            case .invalidSchema: "invalidSchema"
            case .storeFailed: "storeFailed"
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

    /// `ContainerError.<code>: <message>`, then the cause, once (a cause whose text the message
    /// already holds is not repeated).
    public var description: String {
        var text = "ContainerError.\(code): \(message)"
        if let underlying {
            let cause = "\(underlying)"
            if !message.contains(cause) { text += " (caused by \(cause))" }
        }
        return text
    }
}
