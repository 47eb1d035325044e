import Snapshot

extension StoreContainer {
    /// Observes a fetch in the store of its entity: its answers as saves change them, the
    /// current one first (``Snapshot/WALDataStore/observe(_:)-(DataStoreFetchRequest)`` says
    /// which saves re-run it and in what order values come). Saves of every context of the
    /// container show; pending changes of a context do not.
    ///
    /// - Throws: ``ContainerError/Code/unknownEntity``, ``ContainerError/Code/closed``; the
    ///   store's errors, as ``fetch(_:)-(Snapshot.FetchDescriptor)`` throws them.
    public func observe(_ descriptor: Snapshot.FetchDescriptor) throws -> ResultsObservation {
        try checkUsable()
        let (store, routed) = try route(DataStoreFetchRequest(descriptor: descriptor))
        return try store.observe(routed)
    }

    /// Observes the transactions of every store that records history
    /// (``init(schema:configurations:migrationPlan:history:)``'s `history`): each committed
    /// ``DefaultHistoryTransaction`` once, in commit order per store, from every context of the
    /// container (a save across stores is one transaction in each of its stores)
    /// (``Snapshot/TransactionObservation``).
    ///
    /// `tokens` holds at most one token per store: a store with one first returns its
    /// transactions after that token (those saved while the container was closed included),
    /// read from its history; the others start now. A token its store no longer covers makes
    /// `next()` throw ``Snapshot/DataStoreError/Code/historyTokenExpired``.
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/invalidRequest`` when no store records
    ///   history, for a token of a store that does not, two tokens of one store, or a
    ///   `bufferingLimit` below 1; ``ContainerError/Code/foreignIdentifier`` for a token of no
    ///   store of the container; ``ContainerError/Code/closed``.
    public func observeTransactions(after tokens: [DefaultHistoryToken] = [], bufferingLimit: Int = 1_000) throws -> TransactionObservation {
        try checkUsable()
        let recording = stores.indices.filter { stores[$0].configuration.history.isEnabled }
        guard !recording.isEmpty else {
            throw DataStoreError(
                .invalidRequest,
                "No store of the container records history, so there are no transactions to observe; open the container with history enabled, or observe fetches instead."
            )
        }
        var start: [Int: DefaultHistoryToken] = [:]
        for token in tokens {
            guard let i = storeIndexByIdentifier(token.storeIdentifier) else {
                throw ContainerError(
                    .foreignIdentifier,
                    "The history token \(token.value) belongs to the store \(token.storeIdentifier), which is not one of this container's; use a token this container's history returned."
                )
            }
            guard start.updateValue(token, forKey: i) == nil else {
                throw DataStoreError(
                    .invalidRequest, "Two tokens of the store of \(configurations[i].name) were given; give at most one token per store.")
            }
        }
        let buffer = TransactionBuffer(limit: bufferingLimit)
        var registrations: [(store: WALDataStore, id: Int)] = []
        do {
            for i in stores.indices where start[i] != nil || recording.contains(i) {
                registrations.append((stores[i], try stores[i].register(buffer, after: start[i], bufferingLimit: bufferingLimit)))
            }
        } catch {
            for r in registrations { r.store.unregister(r.id) }
            throw error
        }
        let registered = registrations
        let handle = ObservationHandle { for r in registered { r.store.unregister(r.id) } }
        let all = stores
        return TransactionObservation(buffer: buffer, handle: handle) { storeIdentifier, after, limit in
            guard let store = all.first(where: { $0.identifier == storeIdentifier }) else { return [] }
            return try await store.transactionsToCatchUp(after: after, limit: limit)
        }
    }
}

extension StoreContext {
    /// Observes a fetch: ``StoreContainer/observe(_:)`` of the context's container. The values
    /// are the stores' saved state (saves by this context and every other); this context's
    /// pending changes are not included.
    ///
    /// - Throws: as ``StoreContainer/observe(_:)``.
    public func observe(_ descriptor: Snapshot.FetchDescriptor) throws -> ResultsObservation {
        try container.observe(descriptor)
    }

    /// Observes the container's transactions: ``StoreContainer/observeTransactions(after:bufferingLimit:)``.
    ///
    /// - Throws: as ``StoreContainer/observeTransactions(after:bufferingLimit:)``.
    public func observeTransactions(after tokens: [DefaultHistoryToken] = [], bufferingLimit: Int = 1_000) throws -> TransactionObservation {
        try container.observeTransactions(after: tokens, bufferingLimit: bufferingLimit)
    }
}
