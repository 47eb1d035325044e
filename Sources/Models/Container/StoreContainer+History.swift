import Snapshot

extension StoreContainer {
    /// The recorded transactions `descriptor` selects, as SwiftData's `fetchHistory`, from the
    /// stores that record history (``init(schema:configurations:migrationPlan:history:)``'s
    /// `history`; ``Snapshot/WALDataStore/fetchHistory(_:)`` says what a transaction holds).
    ///
    /// Each store numbers its own transactions, so a token belongs to one store: a descriptor
    /// with an `after` or `before` token reads that token's store. Without a token it reads the
    /// stores that hold `entityNames` (every store without it), and merges their transactions by
    /// timestamp (then configuration order, then token), in `sortOrder`, `fetchLimit` applied
    /// to the merged list. A store with history off contributes nothing.
    ///
    /// - Throws: ``ContainerError/Code/foreignIdentifier`` for a token of no store of the
    ///   container; ``ContainerError/Code/unknownEntity`` for an entity it does not declare; the
    ///   store's errors (`historyTokenExpired`, `invalidRequest`, …).
    public func fetchHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws -> [DefaultHistoryTransaction] {
        try checkUsable()
        let indices = try historyStores(for: descriptor)
        if indices.count == 1 { return try stores[indices[0]].fetchHistory(descriptor) }
        var merged: [(transaction: DefaultHistoryTransaction, store: Int)] = []
        for i in indices { merged += try stores[i].fetchHistory(descriptor).map { ($0, i) } }
        merged.sort { a, b in
            (a.transaction.timestamp, a.store, a.transaction.transactionIdentifier) < (
                b.transaction.timestamp, b.store, b.transaction.transactionIdentifier
            )
        }
        if descriptor.sortOrder == .newestFirst { merged.reverse() }
        if let limit = descriptor.fetchLimit, limit >= 0 { merged = Array(merged.prefix(limit)) }
        return merged.map(\.transaction)
    }

    /// Deletes recorded transactions, as SwiftData's `deleteHistory`: with a `before` token,
    /// those of that token's store before it; without one, the whole history of every store
    /// (tokens of deleted transactions expire). Only `before` may be given
    /// (``Snapshot/WALDataStore/deleteHistory(_:)``).
    ///
    /// - Throws: ``ContainerError/Code/foreignIdentifier`` for a token of no store of the
    ///   container; the store's errors (`invalidRequest` for another filter, …), the first
    ///   store's refusal before any store deleted anything.
    public func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        try checkUsable()
        if let token = descriptor.before {
            return try stores[try historyStore(of: token)].deleteHistory(descriptor)
        }
        for i in stores.indices where stores[i].configuration.history.isEnabled { try stores[i].deleteHistory(descriptor) }
    }

    private func historyStores(for descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws -> [Int] {
        if let token = descriptor.after ?? descriptor.before {
            let i = try historyStore(of: token)
            if let other = descriptor.before, other.storeIdentifier != token.storeIdentifier { _ = try historyStore(of: other) }
            return [i]
        }
        var indices: [Int]
        if let names = descriptor.entityNames {
            indices = try Set(names.map { try storeIndex(forEntity: $0) }).sorted()
        } else {
            indices = Array(stores.indices)
        }
        let recording = indices.filter { stores[$0].configuration.history.isEnabled }
        return recording.isEmpty ? [indices.first ?? 0] : recording
    }

    private func historyStore(of token: DefaultHistoryToken) throws -> Int {
        guard let i = storeIndexByIdentifier(token.storeIdentifier) else {
            throw ContainerError(
                .foreignIdentifier,
                "The history token \(token.value) belongs to the store \(token.storeIdentifier), which is not one of this container's; use a token this container's history returned."
            )
        }
        return i
    }
}

extension ModelContext {
    /// The recorded transactions `descriptor` selects, as SwiftData's
    /// `ModelContext.fetchHistory`: ``StoreContainer/fetchHistory(_:)`` of the context's
    /// container. Pending changes are not history until saved.
    ///
    /// - Throws: as ``StoreContainer/fetchHistory(_:)``.
    public func fetchHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws -> [DefaultHistoryTransaction] {
        try container.fetchHistory(descriptor)
    }

    /// Deletes recorded transactions, as SwiftData's `ModelContext.deleteHistory`:
    /// ``StoreContainer/deleteHistory(_:)`` of the context's container.
    ///
    /// - Throws: as ``StoreContainer/deleteHistory(_:)``.
    public func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        try container.deleteHistory(descriptor)
    }
}
