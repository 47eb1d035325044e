/// The changes of one save: the objects inserted, updated and deleted, all applied together or
/// not at all.
///
/// Inserted snapshots carry temporary identifiers (``PersistentIdentifier/isTemporary``) and may
/// refer to each other by them; updated and deleted ones carry permanent identifiers of the
/// store.
public struct DataStoreSaveChangesRequest<SnapshotType: DataStoreSnapshot>: Sendable {
    /// New objects, under temporary identifiers.
    public var inserted: [SnapshotType]
    /// Existing objects with their new values (every property, not a difference).
    public var updated: [SnapshotType]
    /// Objects to delete (their last known values).
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
