import Snapshot

/// A unit of work over a ``StoreContainer``, as SwiftData's `ModelContext`, at the level of
/// snapshots: it registers what it fetches, stages inserts, updates and deletes in memory,
/// answers fetches with those changes included, and saves them all at once.
///
/// - **Inserts** get temporary identifiers; ``save()`` replaces them with permanent ones in
///   everything the context holds and returns the map.
/// - **Updates** are kept per property: a save states only the properties changed.
/// - **Deletes** stage what the schema's delete rules imply, as SwiftData's context does: the
///   targets of `cascade` relationships are deleted too, the inverses of `nullify` ones are
///   updated, and a `deny` relationship that still has a target refuses the delete
///   (``DataStoreError/Code/deleteDenied``) with nothing staged.
/// - **Fetches** include pending changes by default (SwiftData's `includePendingChanges`): a
///   pending insert appears in a matching fetch, a pending delete does not, and a pending
///   update is judged by its new values; sorting, offset and limit are applied to the merged
///   result as the store applies them (``PredicateEvaluator``; ties in the store's own order,
///   pending inserts after stored objects, in insertion order).
/// - ``rollback()`` discards every pending change.
///
/// Inverses of relationships are not maintained in memory while changes are pending (except
/// by delete rules): setting `attachment.post` does not add the attachment to the post's
/// `attachments` until the save, whose ``StoreContainer/SaveResult/snapshotsToReregister``
/// the context registers.
///
/// **Isolation.** A context is not `Sendable`: use it from one isolation domain (one actor,
/// or a global actor such as the main actor). Everything it calls is synchronous and it holds
/// only values and the `Sendable` container, so it works unchanged when isolated to an actor.
public final class StoreContext {
    /// The container whose stores it reads and saves to.
    public let container: StoreContainer
    /// Who is editing: passed with every save.
    public var editingState: EditingState

    /// Registered objects as last read or saved (their committed state).
    var registered: [PersistentIdentifier: DefaultSnapshot] = [:]
    /// Pending inserts, in insertion order, under temporary identifiers.
    var insertOrder: [PersistentIdentifier] = []
    var inserts: [PersistentIdentifier: DefaultSnapshot] = [:]
    /// Pending updates of stored objects: their whole new state, and which properties changed.
    var updateOrder: [PersistentIdentifier] = []
    var updates: [PersistentIdentifier: DefaultSnapshot] = [:]
    var changedKeys: [PersistentIdentifier: Set<String>] = [:]
    /// Pending deletes of stored objects.
    var deleteOrder: [PersistentIdentifier] = []
    var deletes: Set<PersistentIdentifier> = []
    /// Every temporary identifier a save of this context replaced → its permanent identifier.
    var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
    /// Per entity: the values a new object starts with, and the names of its properties.
    var templates: [String: (defaults: [String: PropertyValue], names: Set<String>)] = [:]

    /// A context over `container`.
    public init(_ container: StoreContainer, editingState: EditingState = EditingState()) {
        self.container = container
        self.editingState = editingState
    }

    var schema: Schema { container.schema }

    // MARK: What is pending

    /// Whether any insert, update or delete is pending.
    public var hasChanges: Bool { !insertOrder.isEmpty || !updateOrder.isEmpty || !deleteOrder.isEmpty }
    /// The temporary identifiers of the pending inserts, in insertion order.
    public var insertedIdentifiers: [PersistentIdentifier] { insertOrder }
    /// The stored objects with pending updates, in the order first changed.
    public var changedIdentifiers: [PersistentIdentifier] { updateOrder }
    /// The stored objects pending deletion (delete rules' cascades included), in order.
    public var deletedIdentifiers: [PersistentIdentifier] { deleteOrder }
    /// The pending inserts' values.
    public var insertedSnapshots: [DefaultSnapshot] { insertOrder.compactMap { inserts[$0] } }
    /// The pending updates' new values (whole objects).
    public var changedSnapshots: [DefaultSnapshot] { updateOrder.compactMap { updates[$0] } }
    /// The properties of `identifier` changed and not yet saved (empty when none).
    public func changedProperties(of identifier: PersistentIdentifier) -> Set<String> { changedKeys[identifier] ?? [] }

    /// The permanent identifier a save gave the temporary `identifier`, or `nil`.
    public func permanentIdentifier(for identifier: PersistentIdentifier) -> PersistentIdentifier? { remapped[identifier] }

    /// `identifier`, or the permanent identifier a save gave it.
    func current(_ identifier: PersistentIdentifier) -> PersistentIdentifier { remapped[identifier] ?? identifier }

    // MARK: Reading one object

    /// The object's values as this context sees them (pending changes applied) without reading
    /// the store: `nil` when it is not registered, or pending deletion.
    public func registeredSnapshot(for identifier: PersistentIdentifier) -> DefaultSnapshot? {
        let id = current(identifier)
        if deletes.contains(id) { return nil }
        return inserts[id] ?? updates[id] ?? registered[id]
    }

    /// The object's values as this context sees them, read from its store (and registered)
    /// when it is not registered yet; `nil` when it does not exist or is pending deletion.
    ///
    /// - Throws: ``ContainerError/Code/foreignIdentifier`` for an identifier of no store of the
    ///   container (or a temporary one this context did not insert); the store's errors.
    public func snapshot(for identifier: PersistentIdentifier) throws -> DefaultSnapshot? {
        let id = current(identifier)
        if deletes.contains(id) { return nil }
        if let known = inserts[id] ?? updates[id] ?? registered[id] { return known }
        guard let stored = try container.snapshots(for: [id])[id] else { return nil }
        registered[id] = stored
        return stored
    }
}
