import Engine

extension WALDataStore {
    var mapper: RecordMapper { mapper(over: .none) }

    /// The mapper that reads `pending` on top of the store's keys.
    func mapper(over pending: PendingWrites) -> RecordMapper {
        var space = space
        space.pending = pending
        return RecordMapper(
            layout: layout, records: space, storeIdentifier: identifier,
            assetThreshold: engine.options.blobThreshold, countRecordRead: { [self] in countRecordRead() })
    }

    /// Applies the request's inserts, updates and deletes in one atomic engine commit, after
    /// checking all of it (see ``WALDataStore``).
    ///
    /// When it returns in the engine's durable sync mode, the whole save — records, assets,
    /// join records, back references, index and uniqueness entries, and its history transaction
    /// when history is on — survives power loss; if it throws, nothing of it was written (a
    /// refused save leaves the files byte-identical).
    ///
    /// **One statement per object.** A request that names one object twice follows the rules
    /// of ``DataStoreSaveChangesRequest``: the updates and deletes describe the state the save
    /// leaves; inserts are matched for upserts against the stored objects as the save leaves
    /// them (an insert never merges into an object the save deletes, an update that moves a
    /// unique value away frees it, an insert matching an updated object and two inserts sharing
    /// a unique value are refused); a reference to an object the save deletes is refused;
    /// delete rules read relationships as the save leaves them (a child detached or moved in
    /// the same save is not cascaded); an upsert's attributes win, its nil to-one keeps the
    /// stored target and its to-many links are added to the stored ones, never removed.
    ///
    /// Saves made while another save is being written share the next commit (and its sync):
    /// they are planned one by one in the order they arrived, each against the state the
    /// earlier ones leave, as if written one after the other; each is still all or nothing,
    /// gets its own result or error, and is durable when it returns. With history on, each is
    /// still a transaction of its own, with the next token in that order, and its transaction
    /// is in the commit that writes it.
    /// When that commit fails, every save of it fails (and so does every save planned on top
    /// of it): none of them is written.
    ///
    /// - Returns: the permanent identifier of every insert (an upserted insert maps to the
    ///   object it updated), and, whole, every object whose stored record differs from what the
    ///   request said of it (the to-one side of a relationship moved, an upserted object, an
    ///   object a delete rule changed, an insert given defaults, an update that did not state
    ///   every property). An object stored as the request states it is not returned, so a save
    ///   the store alters nothing of returns none; nor is an object whose only change is a link
    ///   gained or lost at the other end of a to-many relationship (a tag a saved post now
    ///   lists): the save writes the link without reading the object's other links.
    ///
    /// The request is planned whole before anything is written (each statement read and
    /// checked in one pass over its entity's properties), and its keys reach the engine in key
    /// order.
    /// - Throws: ``DataStoreError`` naming the entity, property and object (an insert by the
    ///   temporary identifier the request holds), and in ``DataStoreError/relatedIdentifiers``
    ///   every other object concerned: `unknownEntity`, `unknownProperty`, `typeMismatch`,
    ///   `missingValue`, `danglingReference` (with the missing or deleted target),
    ///   `foreignIdentifier`, `temporaryIdentifierInUpdate`, `invalidRequest`, `cardinality`,
    ///   `deleteDenied` (with the target that stays), `uniqueness` (with the
    ///   ``DataStoreError/constraint`` and the other object), `conflictingChanges` (one object
    ///   stated twice); `engine` when the engine fails.
    public func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        if canShareCommit(request) { return try saveSharingCommit(request) }
        return try gate.withLock {
            let planned = try planWithoutWriting(request)
            try Self.engineCall("Saving") { _ = try engine.commit(planned.batch) }
            didCommit(planned)
            return planned.result
        }
    }

    /// Deletes every object the request selects in one save, applying the schema's delete rules
    /// (cascades, nullified inverses, deny refusals); durable as ``save(_:)`` when it returns.
    ///
    /// - Throws: as ``fetch(_:)`` for the predicate, and as ``save(_:)`` (`deleteDenied`).
    public func delete(_ request: DataStoreBatchDeleteRequest) throws {
        try gate.withLock {
            try Self.engineCall("Deleting") {
                let descriptor = FetchDescriptor(
                    entityName: request.entityName, predicate: request.predicate, includesSubentities: request.includeSubentities)
                let ids = try FetchRunner(mapper: mapper, counts: counts).identifiers(descriptor)
                guard !ids.isEmpty else { return }
                let planner = SavePlanner(mapper: mapper)
                let save = DataStoreSaveChangesRequest(
                    deleted: ids.map { DefaultSnapshot(persistentIdentifier: $0) }, editingState: request.editingState)
                let writes = try planner.plan(save)
                var extra = WriteBatch()
                let counted = try counts.planned(planner.countChanges(), into: &extra)
                let (recorded, observed) = try recordChanges(planner, save, into: &extra)
                _ = try engine.commit(writes.engineBatch(adding: extra, in: space))
                counts.install(counted)
                history.didCommit(recorded)
                publish(observed)
            }
        }
    }

    /// Removes every object (records, assets, relationships, indexes) and the history; the store
    /// keeps its identifier and stays usable, and every history token made before expires. It
    /// is one engine commit: when it returns the store is empty and that is durable; if it
    /// fails, or the power goes, the store is as it was or empty, never half erased. (A store of more keys than one commit can hold — about a gigabyte of
    /// them — is refused with an engine `invalidArgument` error, unchanged.)
    public func erase() throws {
        try gate.withLock {
            try Self.engineCall("Erasing") {
                if isMigrationContext { return try eraseGeneration() }
                var keys: [[UInt8]] = []
                var cursor = try engine.scan(LogStore.KeyRange(lower: .exclusive(RecordKeys.meta)))
                while let entry = try cursor.next() {
                    guard entry.key != RecordKeys.meta else { continue }
                    keys.append(entry.key)
                }
                // One commit: after a crash the store is whole or empty, never half erased.
                var recorded: HistoryState?
                try engine.write { batch in
                    for key in keys { batch.delete(key) }
                    recorded = history.erase(into: &batch)
                }
                counts.removeAll()
                history.didCommit(recorded)
                publish(isObserved ? .erased : nil)
            }
        }
    }
}
