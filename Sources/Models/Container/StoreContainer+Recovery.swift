import Engine
import Snapshot

extension StoreContainer {
    /// Finishes or undoes every save across stores that a crash interrupted (see
    /// ``save(_:)``): each prepared record is rolled forward when its coordinator holds the
    /// committed record, and rolled back otherwise; then the committed records are removed.
    func resolveInterruptedSaves() throws {
        do {
            for store in stores {
                for entry in try store.engine.scan(prefix: TransactionRecord.preparedPrefix) {
                    let transaction = try TransactionRecord.transaction(inKey: entry.key)
                    let prepared = try TransactionRecord.Prepared(decoding: try entry.value(), key: entry.key)
                    guard let c = storeIndexByIdentifier(prepared.coordinator) else {
                        throw ContainerError(
                            .unresolvedTransaction,
                            "The store \(store.configuration.name) holds part of a save coordinated by the store \(prepared.coordinator), which is not in this container; open the container with every configuration it had.",
                            configurationNames: [store.configuration.name])
                    }
                    var batch = WriteBatch()
                    let rollsForward = try stores[c].engine.contains(TransactionRecord.committedKey(transaction))
                    if rollsForward { batch = WriteBatch(entries: prepared.entries) }
                    batch.delete(entry.key)
                    try Self.durably(store, batch)
                    // The batch may record a history transaction the store's log has not seen.
                    if rollsForward { try store.reloadHistory() }
                }
            }
            for store in stores {
                var done = WriteBatch()
                for entry in try store.engine.scan(prefix: TransactionRecord.committedPrefix) {
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
            throw Self.wrapped(error, "Resolving an interrupted save across stores")
        }
    }
}
