import Engine
import Foundation
import Snapshot

extension StoreContainer {
    /// Saves the request's inserts, updates and deletes, each in the store of its entity; all
    /// of it or none of it, even when it touches several stores.
    ///
    /// **One store.** The store's own ``WALDataStore/save(_:)``: one engine commit, as durable
    /// as its sync mode says when this returns.
    ///
    /// **Several stores: atomic, by two-phase commit.** Atomicity was chosen over committing
    /// store by store because a crash between two stores' commits would otherwise leave, say,
    /// a post saved in one store and the settings that the same save changed lost in another,
    /// with nothing to tell the two states apart afterwards. The save holds every touched
    /// store's lock from first to last step, and:
    /// 1. plans every store's part (all checks; nothing written): a refusal leaves every store
    ///    as it was;
    /// 2. writes, in every touched store but the first (the *coordinator*), a **prepared**
    ///    record holding that store's engine batch, made durable; each value the batch writes as
    ///    a blob file (an attachment) is written here, once, as a staged blob the record names;
    /// 3. commits, in the coordinator, its own part together with a **committed** record, in
    ///    one engine commit made durable: **the commit point**;
    /// 4. commits each other store's part, deleting its prepared record in the same commit
    ///    (each staged blob becomes its final key's value: its bytes are not written again);
    /// 5. deletes the committed record.
    /// Opening the container resolves what a crash left (``init(schema:configurations:)``): a
    /// prepared record whose committed record exists is rolled forward (its batch committed),
    /// any other is rolled back (deleted). So after any crash the save is in all its stores or
    /// in none. Prepared and committed records are invisible to fetches (FORMAT.md, "Records
    /// (the Snapshot layer)", transaction records). The stores of a container must be opened
    /// only through it, or a rolled-forward batch could meet changes it was not planned on.
    ///
    /// When a save across stores returns, it is durable in every store whatever their sync
    /// modes (each step syncs before the next). A failure before the commit point throws the
    /// store's error, and every store is as before; a failure at or after it throws
    /// ``ContainerError/Code/interruptedSave`` and the container refuses every later call,
    /// since its stores may disagree until it is opened again (the opening completes or undoes
    /// the save, as the durable records say).
    ///
    /// - Returns: the remapped identifiers and changed objects of every store touched.
    /// - Throws: ``ContainerError`` (`unknownEntity`, `foreignIdentifier`, `interruptedSave`,
    ///   `saveNotAllowed` for a configuration opened with `allowsSave: false`, `closed`);
    ///   a store's ``DataStoreError`` as ``WALDataStore/save(_:)`` throws them.
    @discardableResult
    public func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> SaveResult {
        try checkUsable()
        var parts: [Int: DataStoreSaveChangesRequest<DefaultSnapshot>] = [:]
        let empty = DataStoreSaveChangesRequest<DefaultSnapshot>(editingState: request.editingState)
        for s in request.inserted {
            parts[try storeIndex(forEntity: s.persistentIdentifier.entityName), default: empty].inserted.append(s)
        }
        for (s, isDelete) in request.updated.lazy.map({ ($0, false) }) + request.deleted.lazy.map({ ($0, true) }) {
            let id = s.persistentIdentifier
            let i = try storeIndex(forEntity: id.entityName)
            if !id.isTemporary, try storeIndex(for: id) != i {
                throw ContainerError(
                    .foreignIdentifier,
                    "\(id) was made by the store of another configuration than \(configurations[i].name), which holds \(id.entityName).",
                    entityName: id.entityName, configurationNames: [configurations[i].name])
            }
            if isDelete { parts[i, default: empty].deleted.append(s) } else { parts[i, default: empty].updated.append(s) }
        }
        if let i = parts.keys.sorted().first(where: { !configurations[$0].allowsSave }) {
            throw ContainerError(
                .saveNotAllowed,
                "The save changes objects of the configuration \(configurations[i].name), opened with allowsSave false; nothing was written to any store. Save only objects of other configurations, or open it with allowsSave true.",
                configurationNames: [configurations[i].name])
        }
        let ordered = parts.sorted { $0.key < $1.key }
        switch ordered.count {
        case 0:
            return SaveResult()
        case 1:
            let (i, p) = ordered[0]
            return SaveResult(storeResults: [configurations[i].name: try stores[i].save(p)])
        default:
            return try saveAcrossStores(ordered)
        }
    }

    /// Runs `body` holding the locks of the stores `indices` (ascending, so that two saves
    /// never wait for each other's locks).
    private func holdingLocks<T>(_ indices: ArraySlice<Int>, _ body: () throws -> T) throws -> T {
        guard let first = indices.first else { return try body() }
        return try stores[first].exclusively { try holdingLocks(indices.dropFirst(), body) }
    }

    private func saveAcrossStores(_ parts: [(key: Int, value: DataStoreSaveChangesRequest<DefaultSnapshot>)]) throws -> SaveResult {
        let indices = parts.map(\.key)
        return try holdingLocks(indices[...]) {
            var planned: [WALDataStore.PlannedSave] = []
            for (i, request) in parts { planned.append(try stores[i].planWithoutWriting(request)) }
            let transaction = UUID()
            let coordinator = stores[indices[0]]
            let participants = indices.dropFirst().map { stores[$0] }
            var records: [TransactionRecord.Prepared] = []
            do {
                for (k, store) in participants.enumerated() {
                    let (batch, record) = try Self.prepareBatch(planned[k + 1].batch, of: store, transaction: transaction, coordinator: coordinator)
                    records.append(record)
                    try Self.durably(store, batch)
                }
            } catch {
                // Before the commit point: no committed record exists, so the prepared ones
                // are void; remove them now (an opening would remove any left).
                for (k, record) in records.enumerated() {
                    try? Self.durably(participants[k], Self.rollbackBatch(record, transaction: transaction))
                }
                throw Self.wrapped(error, "Preparing a save across stores")
            }
            do {
                var decision = planned[0].batch
                decision.put(
                    TransactionRecord.committedKey(transaction), TransactionRecord.Committed(participants: participants.map(\.identifier)).encoded)
                try Self.durably(coordinator, decision)
                coordinator.didCommit(planned[0])
                for (k, store) in participants.enumerated() {
                    try Self.durably(store, try Self.commitBatch(records[k], of: store, transaction: transaction))
                    store.didCommit(planned[k + 1])
                }
            } catch {
                let names = indices.map { configurations[$0].name }
                let interrupted = ContainerError(
                    .interruptedSave,
                    "A save across the stores \(names.joined(separator: ", ")) failed at or after its commit point; its stores may disagree until the container is opened again, which completes or undoes the save. Close and reopen the container.",
                    configurationNames: names, underlying: Self.wrapped(error, "Committing a save across stores"))
                markInterrupted(interrupted)
                throw interrupted
            }
            // Every part is durable: the committed record has done its work. Should this fail,
            // the next opening removes it.
            try? Self.durably(coordinator) { $0.delete(TransactionRecord.committedKey(transaction)) }
            var results: [String: DataStoreSaveChangesResult<DefaultSnapshot>] = [:]
            for (k, i) in indices.enumerated() { results[configurations[i].name] = planned[k].result }
            return SaveResult(storeResults: results)
        }
    }

    /// The prepare commit of a participant's `batch`: each value the engine would write as a
    /// blob file (an asset, or any value over the blob threshold) put as a **staged blob**
    /// (`X` `A` transaction index), written once, and the prepared record naming it by index
    /// beside the other operations (FORMAT.md, "Transaction records").
    ///
    /// - Throws: ``DataStoreError/Code/unsupportedFeature`` for a batch that copies a file
    ///   into a blob (it cannot be listed as bytes).
    static func prepareBatch(
        _ batch: WriteBatch, of store: WALDataStore, transaction: UUID, coordinator: WALDataStore
    ) throws -> (WriteBatch, TransactionRecord.Prepared) {
        guard let entries = batch.entries else {
            throw DataStoreError(.unsupportedFeature, "A save across stores cannot hold an asset copied from a file; save it on its own.")
        }
        let threshold = store.engine.options.blobThreshold
        var prepare = WriteBatch()
        var recorded: [TransactionRecord.PreparedEntry] = []
        recorded.reserveCapacity(entries.count)
        var staged: UInt32 = 0
        for entry in entries {
            switch entry {
            case let .put(key, value) where value.count > threshold, let .putExternal(key, value):
                prepare.putExternal(TransactionRecord.stagedBlobKey(transaction, staged), value)
                recorded.append(.stagedBlob(key: key, index: staged))
                staged += 1
            case let .put(key, value):
                recorded.append(.put(key: key, value: value))
            case .delete(let key):
                recorded.append(.delete(key: key))
            }
        }
        let record = TransactionRecord.Prepared(coordinator: coordinator.identifier, entries: recorded)
        prepare.put(TransactionRecord.preparedKey(transaction), record.encoded)
        return (prepare, record)
    }

    /// The commit of a prepared part: its operations, each staged blob handed to its final key
    /// (the blob is not written again) and its staging key deleted, and the prepared record
    /// deleted, in one batch.
    ///
    /// - Throws: ``DataStoreError/Code/corrupted`` when a staged blob the record names is
    ///   missing.
    static func commitBatch(_ record: TransactionRecord.Prepared, of store: WALDataStore, transaction: UUID) throws -> WriteBatch {
        var batch = WriteBatch()
        for entry in record.entries {
            switch entry {
            case let .put(key, value): batch.put(key, value)
            case let .putExternal(key, value): batch.putExternal(key, value)
            case .delete(let key): batch.delete(key)
            case let .stagedBlob(key, index):
                let staging = TransactionRecord.stagedBlobKey(transaction, index)
                guard let blob = try store.engine.storedBlob(forKey: staging) else {
                    throw DataStoreError(
                        .corrupted,
                        "The store \(store.configuration.name) holds part of a save across stores whose staged blob \(index) is missing; the store is damaged: salvage it or restore it from a copy."
                    )
                }
                batch.put(key, storedBlob: blob)
                batch.delete(staging)
            }
        }
        batch.delete(TransactionRecord.preparedKey(transaction))
        return batch
    }

    /// The undoing of a prepared part: its record and staged blobs deleted.
    static func rollbackBatch(_ record: TransactionRecord.Prepared, transaction: UUID) -> WriteBatch {
        var batch = WriteBatch()
        for index in record.stagedBlobIndices { batch.delete(TransactionRecord.stagedBlobKey(transaction, index)) }
        batch.delete(TransactionRecord.preparedKey(transaction))
        return batch
    }

    /// Commits `batch` to `store`'s engine and makes it durable whatever the sync mode.
    static func durably(_ store: WALDataStore, _ batch: WriteBatch) throws {
        try store.engine.commit(batch)
        if store.engine.options.syncMode != .durable { try store.engine.sync() }
    }

    static func durably(_ store: WALDataStore, _ body: (inout WriteBatch) -> Void) throws {
        var batch = WriteBatch()
        body(&batch)
        try durably(store, batch)
    }

    /// `error` as a ``DataStoreError`` (engine failures get the store's code for them: `locked`,
    /// `closed`, `corrupted`, …, else ``DataStoreError/Code/engine``), or as it is when it is
    /// already a ``DataStoreError`` or ``ContainerError``.
    static func wrapped(_ error: any Error, _ action: String) -> any Error & Sendable {
        switch error {
        case let e as DataStoreError: return e
        case let e as ContainerError: return e
        case let e as EngineError:
            return DataStoreError(WALDataStore.code(of: e), WALDataStore.message(action, e), underlying: e)
        case let e as RecordDecodingError:
            return DataStoreError(
                .corrupted, "\(action) read a transaction record that does not decode; the store is damaged: salvage it or restore it from a copy.",
                underlying: e)
        default:
            return DataStoreError(.engine, "\(action) failed.", underlying: error)
        }
    }
}
