import Engine
import Snapshot

extension StoreContainer {
    /// Finishes or undoes every save across stores that a crash interrupted (see
    /// ``save(_:)``): each prepared record is rolled forward when its coordinator holds the
    /// committed record (its staged blobs handed to their final keys), and rolled back otherwise
    /// (its staged blobs deleted); then the committed records are removed.
    func resolveInterruptedSaves() throws {
        var current: WALDataStore?
        do {
            for store in stores {
                current = store
                var cursor = try store.engine.scan(prefix: TransactionRecord.preparedPrefix)
                while let entry = try cursor.next() {
                    let transaction = try TransactionRecord.transaction(inKey: entry.key)
                    let prepared = try TransactionRecord.Prepared(decoding: try entry.value(), key: entry.key)
                    guard let c = storeIndexByIdentifier(prepared.coordinator) else {
                        throw ContainerError(
                            .unresolvedTransaction,
                            "The store \(store.configuration.name) holds part of a save coordinated by the store \(prepared.coordinator), which is not in this container; open the container with every configuration it had.",
                            configurationNames: [store.configuration.name])
                    }
                    let rollsForward = try stores[c].engine.contains(TransactionRecord.committedKey(transaction))
                    let batch =
                        rollsForward
                        ? try Self.commitBatch(prepared, of: store, transaction: transaction)
                        : Self.rollbackBatch(prepared, transaction: transaction)
                    try Self.durably(store, batch)
                    // The batch may record a history transaction the store's log has not seen.
                    if rollsForward { try store.reloadHistory() }
                }
            }
            for store in stores {
                current = store
                // Staged blobs of no prepared record: none is left by this build (a prepare
                // commit writes them with their record, and resolving deletes them with it).
                var orphans = WriteBatch()
                var staged = try store.engine.scan(prefix: TransactionRecord.stagedBlobPrefix)
                while let entry = try staged.next() { orphans.delete(entry.key) }
                if !orphans.isEmpty { try Self.durably(store, orphans) }
            }
            for store in stores {
                current = store
                var done = WriteBatch()
                var cursor = try store.engine.scan(prefix: TransactionRecord.committedPrefix)
                while let entry = try cursor.next() {
                    let committed = try TransactionRecord.Committed(decoding: try entry.value(), key: entry.key)
                    if let missing = committed.participants.first(where: { storeIndexByIdentifier($0) == nil }) {
                        throw ContainerError(
                            .unresolvedTransaction,
                            "The store \(store.configuration.name) coordinated a save with the store \(missing), which is not in this container; open the container with every configuration it had.",
                            configurationNames: [store.configuration.name])
                    }
                    done.delete(entry.key)
                }
                if !done.isEmpty { try Self.durably(store, done) }
            }
        } catch let error as ContainerError {
            throw error
        } catch {
            let store = current ?? stores[0]
            throw Self.openingRefusal(
                Self.wrapped(error, "Resolving an interrupted save across stores"), configurationName: store.configuration.name,
                path: store.configuration.path)
        }
    }
}
