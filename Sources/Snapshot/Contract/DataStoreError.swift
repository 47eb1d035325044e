/// The one error type the Snapshot module throws.
///
/// Modelled on swift-nio's `FileSystemError` (and the engine's `EngineError`): an extensible
/// ``Code`` to switch on, a ``message`` for people that says what went wrong and what to do next,
/// and the entity, property and identifier involved when there is one. An error that wraps
/// another (an engine failure, a decoding failure, a schema inconsistency) carries it in
/// ``underlying``.
public struct DataStoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added; switch with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case preferInMemoryFilter, preferInMemorySort, unsupportedFeature, invalidPredicate
            case unknownEntity, unknownProperty, typeMismatch, missingValue, danglingReference
            case foreignIdentifier, temporaryIdentifierInUpdate, cardinality, deleteDenied
            case uniqueness, invalidSchema, invalidRequest, engine, schemaMismatch, migrationFailed
            case historyTokenExpired, conflictingChanges
            case locked, notAStore, permissionDenied, closed, corrupted, headerLost
            case valueTooLongForKey
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The store cannot evaluate the request's predicate and asks the caller to filter in
        /// memory (SwiftData's meaning). The stores of this package do not answer this; a store
        /// that does must still return every candidate snapshot when asked without a predicate.
        public static let preferInMemoryFilter = Code(.preferInMemoryFilter)
        /// The store cannot sort as asked and asks the caller to sort in memory.
        public static let preferInMemorySort = Code(.preferInMemorySort)
        /// The request uses something this store does not implement; the message names it.
        public static let unsupportedFeature = Code(.unsupportedFeature)
        /// A predicate or sort descriptor is malformed: an empty key path, a path that continues
        /// past an attribute, a comparison through a to-many relationship outside `any`/`all`.
        public static let invalidPredicate = Code(.invalidPredicate)
        /// An entity name the schema does not declare; ``DataStoreError/entityName`` names it.
        public static let unknownEntity = Code(.unknownEntity)
        /// A property name the entity does not declare (nor inherit).
        public static let unknownProperty = Code(.unknownProperty)
        /// A value of the wrong kind: for an attribute's declared type, or compared with a value
        /// of an incomparable kind in a predicate.
        public static let typeMismatch = Code(.typeMismatch)
        /// A non-optional attribute or relationship without a value.
        public static let missingValue = Code(.missingValue)
        /// A reference to an object that neither exists nor is inserted in the same save, or
        /// that the same save deletes; ``DataStoreError/identifier`` is the referring object,
        /// ``DataStoreError/propertyName`` the relationship and
        /// ``DataStoreError/relatedIdentifiers`` the target. (Also: an updated object that is
        /// not stored.)
        public static let danglingReference = Code(.danglingReference)
        /// An identifier made by another store.
        public static let foreignIdentifier = Code(.foreignIdentifier)
        /// An updated or deleted snapshot carries a temporary identifier: only inserts may.
        public static let temporaryIdentifierInUpdate = Code(.temporaryIdentifierInUpdate)
        /// A relationship holds fewer or more objects than its minimum or maximum count.
        public static let cardinality = Code(.cardinality)
        /// A delete that a relationship's `deny` rule forbids while it still has objects;
        /// ``DataStoreError/relatedIdentifiers`` names the one that stays.
        public static let deleteDenied = Code(.deleteDenied)
        /// Two objects would share a value of a unique attribute or uniqueness constraint:
        /// ``DataStoreError/entityName``, ``DataStoreError/constraint`` (the rule's properties;
        /// ``DataStoreError/propertyName`` too for a `unique` attribute), and both objects
        /// (``DataStoreError/identifier`` and ``DataStoreError/relatedIdentifiers``).
        public static let uniqueness = Code(.uniqueness)
        /// The schema is inconsistent; ``DataStoreError/underlying`` is the
        /// ``Schema/Inconsistency`` that says where.
        public static let invalidSchema = Code(.invalidSchema)
        /// A request or argument out of range: a negative fetch limit or offset, an empty store
        /// identifier or entity name.
        public static let invalidRequest = Code(.invalidRequest)
        /// The storage underneath failed (the engine, or a simple store's file) in a way no other
        /// code names (an I/O error, a full disk, a store read-only after a failed sync);
        /// ``DataStoreError/underlying`` is its error (an `EngineError`, say).
        public static let engine = Code(.engine)
        /// The store holds another schema than the one it was opened with, and no migration can
        /// take it there (an incompatible change without a plan that covers it, a stored version
        /// newer than the configured one); ``DataStoreError/underlying`` is the
        /// ``SchemaDifference`` that names each change. The store is unchanged.
        public static let schemaMismatch = Code(.schemaMismatch)
        /// A custom migration stage's closure threw (``DataStoreError/underlying`` is its
        /// error); the migration was abandoned and the store is as it was.
        public static let migrationFailed = Code(.migrationFailed)
        /// A history token older than the history the store keeps (its transactions were deleted,
        /// or expired), or newer than its newest transaction (the store was replaced): a fetch
        /// after it could not be complete. Start again without a token.
        public static let historyTokenExpired = Code(.historyTokenExpired)
        /// One save request says two things of one object that cannot both hold: the same
        /// identifier twice among the inserted or the updated, or among both the updated and the
        /// deleted; an insert whose unique value is held by an object the same request updates
        /// (``DataStoreError/constraint`` names the rule); an update of an object that a
        /// cascade of the same request deletes. ``DataStoreError/identifier`` names the object
        /// (and ``DataStoreError/relatedIdentifiers`` the other one: the updated object, the
        /// cascading owner); the message says which lists name it. State each object once per
        /// save.
        public static let conflictingChanges = Code(.conflictingChanges)
        /// Another opener, in this process or another, has the store open (it holds the
        /// directory's lock); the store was not opened. Close the other one first, or open
        /// another directory. ``DataStoreError/underlying`` is the engine's error.
        public static let locked = Code(.locked)
        /// The directory holds something that is not a store of this kind: other files and no
        /// engine store, or an engine store with keys but no `WALDataStore` header (written
        /// through the engine directly, or by another program). Nothing was changed; choose an
        /// empty or new directory.
        public static let notAStore = Code(.notAStore)
        /// The operating system refused access to the store's files or directory (`EACCES`,
        /// `EPERM`, or a read-only file system: `EROFS`). Fix the permissions or choose another
        /// directory; ``DataStoreError/underlying`` names the system call and file.
        public static let permissionDenied = Code(.permissionDenied)
        /// A value of an indexed attribute too long for its index entry: its order-preserving
        /// encoding, with the entity's and index's names, would pass the engine's key limit of
        /// 65,535 bytes (a string of about 65,000 UTF-8 bytes, less for a compound index or long
        /// names; a data value's `0x00` bytes count twice). (Also, never met in practice: two
        /// different unique values so long that their entries hold digests, whose SHA-256
        /// digests are equal.) ``DataStoreError/entityName`` and ``DataStoreError/propertyName``
        /// name the attribute, ``DataStoreError/constraint`` the rule's properties,
        /// ``DataStoreError/identifier`` the object. Nothing was saved: keep such values shorter,
        /// or drop the index (unique values have no such limit).
        public static let valueTooLongForKey = Code(.valueTooLongForKey)
        /// The store was closed; open it again to use it.
        public static let closed = Code(.closed)
        /// Bytes on disk failed a checksum or do not decode (a damaged file, a missing blob, a
        /// record that does not decode): ``DataStoreError/underlying`` names the file and
        /// offset. Salvage the store (`LogStore.salvage(at:)`) or restore it from a copy.
        public static let corrupted = Code(.corrupted)
        /// The directory holds what is left of a store but no `WALDataStore` header: a
        /// `quarantine/` folder, where salvage set damaged bytes aside (it dropped the commit
        /// that held the header, say), and perhaps records. Opening it as usual would start a
        /// new, empty store over them, so nothing was written. Run `walstore verify` and
        /// `walstore info` on it, restore the store from a copy, or start a new store there on
        /// purpose with ``WALStoreConfiguration/MissingHeader/createStore``.
        public static let headerLost = Code(.headerLost)

        public var description: String {
            switch value {
            case .preferInMemoryFilter: "preferInMemoryFilter"
            case .preferInMemorySort: "preferInMemorySort"
            case .unsupportedFeature: "unsupportedFeature"
            case .invalidPredicate: "invalidPredicate"
            case .unknownEntity: "unknownEntity"
            case .unknownProperty: "unknownProperty"
            case .typeMismatch: "typeMismatch"
            case .missingValue: "missingValue"
            case .danglingReference: "danglingReference"
            case .foreignIdentifier: "foreignIdentifier"
            case .temporaryIdentifierInUpdate: "temporaryIdentifierInUpdate"
            case .cardinality: "cardinality"
            case .deleteDenied: "deleteDenied"
            case .uniqueness: "uniqueness"
            case .invalidSchema: "invalidSchema"
            case .invalidRequest: "invalidRequest"
            case .engine: "engine"
            case .schemaMismatch: "schemaMismatch"
            case .migrationFailed: "migrationFailed"
            case .historyTokenExpired: "historyTokenExpired"
            case .conflictingChanges: "conflictingChanges"
            case .locked: "locked"
            case .notAStore: "notAStore"
            case .permissionDenied: "permissionDenied"
            case .closed: "closed"
            case .corrupted: "corrupted"
            case .headerLost: "headerLost"
            case .valueTooLongForKey: "valueTooLongForKey"
            }
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong and what to do next, in words.
    public var message: String
    /// The entity concerned, when there is one.
    public var entityName: String?
    /// The property (attribute or relationship) concerned, when there is one.
    public var propertyName: String?
    /// The object concerned, when there is one.
    public var identifier: PersistentIdentifier?
    /// The rule concerned, when the error is a refusal by one: the properties of the uniqueness
    /// constraint (`["email"]` for a `unique` attribute, `["author", "slug"]` for a compound
    /// constraint), in the schema's order. Nil when no rule is concerned.
    public var constraint: [String]?
    /// Every rule concerned, ``constraint`` first: a uniqueness refusal names each rule the
    /// object collides on (`[["email"], ["handle"]]` when both unique attributes collide), and
    /// ``relatedIdentifiers`` each object it collides with, once (the message pairs them). Empty
    /// when no rule is concerned.
    public var constraints: [[String]]
    /// Every other object concerned, beyond ``identifier``: the object a unique value collides
    /// with, the object a request names twice, each colliding object of a refused migration.
    /// Empty when only ``identifier`` (or none) is concerned.
    public var relatedIdentifiers: [PersistentIdentifier]
    /// The error that caused this one, when it wraps another.
    public var underlying: (any Error & Sendable)?

    /// An error with the given code and message and, when known, the place it concerns.
    public init(
        _ code: Code, _ message: String, entityName: String? = nil, propertyName: String? = nil,
        identifier: PersistentIdentifier? = nil, constraint: [String]? = nil, constraints: [[String]]? = nil,
        relatedIdentifiers: [PersistentIdentifier] = [], underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.entityName = entityName
        self.propertyName = propertyName
        self.identifier = identifier
        self.constraint = constraint ?? constraints?.first
        self.constraints = constraints ?? constraint.map { [$0] } ?? []
        self.relatedIdentifiers = relatedIdentifiers
        self.underlying = underlying
    }

    /// `DataStoreError.<code>: <message>`, then the entity, property, constraint, identifiers and
    /// cause.
    public var description: String {
        var text = "DataStoreError.\(code): \(message)"
        if let entityName {
            text += " [entity \(entityName)" + (propertyName.map { ", property \($0)" } ?? "") + "]"
        } else if let propertyName {
            text += " [property \(propertyName)]"
        }
        if constraints.count > 1 {
            text += " [constraints " + constraints.map { "(\($0.joined(separator: ", ")))" }.joined(separator: ", ") + "]"
        } else if let constraint {
            text += " [constraint (\(constraint.joined(separator: ", ")))]"
        }
        if let identifier { text += " [object \(identifier)]" }
        if !relatedIdentifiers.isEmpty { text += " [also \(relatedIdentifiers.map { "\($0)" }.joined(separator: ", "))]" }
        if let underlying, !message.contains("\(underlying)") { text += " (caused by \(underlying))" }
        return text
    }
}
