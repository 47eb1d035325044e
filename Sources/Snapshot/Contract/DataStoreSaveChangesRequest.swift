/// The changes of one save: the objects inserted, updated and deleted, all applied together or
/// not at all.
///
/// Inserted snapshots carry temporary identifiers (``PersistentIdentifier/isTemporary``) and may
/// refer to each other by them; updated and deleted ones carry permanent identifiers of the
/// store.
///
/// **One statement per object.** The updates and deletes describe the state the request leaves
/// the stored objects in; the inserts are then matched, for upserts on unique values, against
/// the stored objects as the request leaves them. A store that follows these rules
/// (``WALDataStore`` does) applies a request that names one object twice as follows:
/// - The same identifier twice in ``inserted``, twice in ``updated``, or in both ``updated`` and
///   ``deleted``: the request is refused
///   (``DataStoreError/Code/conflictingChanges``, naming the identifier and the two lists). The
///   same identifier twice in ``deleted`` is one delete.
/// - An insert never merges into an object the request deletes (directly or by a cascade): the
///   delete happens and the insert is a new object. An update that moves a unique value away
///   frees it for an insert of the same request.
/// - An insert whose unique value an object the request updates holds (or is given) is refused
///   (`conflictingChanges`, naming both): two statements about one object.
/// - Two inserts sharing a unique value are refused (``DataStoreError/Code/uniqueness``,
///   naming both temporary identifiers and the constraint).
/// - An insert or update that refers (to-one or to-many) to an object the request deletes, or
///   an update of an object a cascade of the request deletes, is refused
///   (``DataStoreError/Code/danglingReference``, or `conflictingChanges` for the update); nothing
///   is written.
/// - Delete rules read relationships as the request leaves them: a child the request detaches
///   (its to-one set to nil) or moves to another owner is not cascaded, and a `deny` rule counts
///   the targets the request leaves.
/// - An upserting insert (its unique value is a stored object's that the request neither
///   deletes nor updates) updates that object: the insert's attributes win; a to-one takes the
///   insert's target when it is non-nil and keeps the stored one otherwise; a to-many becomes
///   the union of the stored and the inserted links (an upsert never removes a link). The
///   result maps the temporary identifier to the stored object's.
public struct DataStoreSaveChangesRequest<SnapshotType: DataStoreSnapshot>: Sendable {
    /// New objects, under temporary identifiers.
    public var inserted: [SnapshotType]
    /// Existing objects with their new values: each snapshot states the properties it changes
    /// (a context's update states only those; a whole snapshot will do too), and the store
    /// merges them over what it holds. A property a snapshot leaves out keeps its stored value.
    public var updated: [SnapshotType]
    /// Objects to delete (their last known values; ``WALDataStore`` reads only the identifier). Their delete
    /// rules are applied in the same save.
    public var deleted: [SnapshotType]
    /// Who is saving.
    public var editingState: EditingState

    /// A save of these changes.
    public init(
        inserted: [SnapshotType] = [], updated: [SnapshotType] = [], deleted: [SnapshotType] = [],
        editingState: EditingState = EditingState()
    ) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.editingState = editingState
    }
}
