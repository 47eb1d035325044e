import Engine

extension WALDataStore {
    /// Observes a fetch: an asynchronous sequence of its answers, the current one first, then a
    /// new one after each save that changed it (``ResultsObservation``).
    ///
    /// **Which saves re-run the fetch.** Each write (a save, a batch delete, a save across
    /// stores, an erase) is checked against what the fetch reads, from the write's changes as
    /// history records them, without re-running the fetches it cannot affect. It re-runs when
    /// the write
    /// - inserts an object of the fetched entity (or of a sub-entity it includes), unless the
    ///   predicate reads only the object's own values and rejects the new object;
    /// - updates such an object that was in the last answer, or changes a property of one that
    ///   the predicate, a sort key or a prefetch path reads (its first component);
    /// - deletes an object that was in the last answer (any such object, when the fetch has an
    ///   offset);
    /// - changes any object of an entity the predicate, sort or prefetch paths reach through a
    ///   relationship (a to-one path `post.title`, the targets of `any`/`all`);
    /// - erases the store.
    /// Saves to other entities, and updates of other properties of objects outside the answer,
    /// do not re-run it. Observers are found by entity name, so a save's cost is in proportion
    /// to the observed fetches its entities touch; with nothing observed it is one atomic load.
    ///
    /// **Ordering.** The fetch is re-run under the store's lock, right after the write's commit
    /// and before the write returns: a consumer that awaits the next value after `save` returned
    /// gets an answer that includes that save (or a later one), never an older one. The initial
    /// answer is fetched under the same lock as the registration, so no save falls between them.
    ///
    /// It observes the store, not a context: saves of every context and container of the
    /// process show, pending changes of a context do not.
    ///
    /// - Throws: as ``fetch(_:)`` for the request (checked, and the first answer read, now);
    ///   ``DataStoreError/Code/closed`` after ``close()``.
    public func observe(_ request: DataStoreFetchRequest) throws -> ResultsObservation {
        let (stream, continuation) = AsyncThrowingStream<[DefaultSnapshot], any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let dependencies = FetchDependencies(request.descriptor, schema: schema)
        let id = try gate.withLock {
            let first = try fetchHoldingLock(request)
            continuation.yield(first)
            return observers.addResults(request, dependencies: dependencies, first: first, continuation: continuation)
        }
        let handle = ObservationHandle { [weak registry = observers] in registry?.remove(id) }
        continuation.onTermination = { [weak registry = observers] _ in registry?.remove(id) }
        return ResultsObservation(stream: stream, handle: handle) { [weak registry = observers] in registry?.latest(id) }
    }

    /// As ``observe(_:)-(DataStoreFetchRequest)``, for `descriptor`.
    public func observe(_ descriptor: FetchDescriptor) throws -> ResultsObservation {
        try observe(DataStoreFetchRequest(descriptor: descriptor))
    }

    /// Observes the store's transactions: an asynchronous sequence of every
    /// ``DefaultHistoryTransaction`` committed from now on — saves of every context and
    /// container of the process, batch deletes, delete-rule effects — as ``fetchHistory(_:)``
    /// returns them (``TransactionObservation``).
    ///
    /// With `token` it first returns the transactions after it (those committed while the
    /// store was closed and reopened, saved by another process included), read from history,
    /// then the later ones, each once. A token the history no longer covers makes the first
    /// `next()` throw ``DataStoreError/Code/historyTokenExpired``: fetch what you show again.
    /// Transactions are handed over as each write's commit returns; up to `bufferingLimit` wait
    /// for a slow consumer, and past that the iterator reads them back from history.
    ///
    /// - Throws: ``DataStoreError/Code/invalidRequest`` when the store records no history
    ///   (``WALStoreConfiguration/history``: there are no transactions to observe) or
    ///   `bufferingLimit` is less than 1; ``DataStoreError/Code/foreignIdentifier`` for a token of
    ///   another store; ``DataStoreError/Code/closed`` after ``close()``.
    public func observeTransactions(after token: DefaultHistoryToken? = nil, bufferingLimit: Int = 1_000) throws -> TransactionObservation {
        let buffer = TransactionBuffer(limit: bufferingLimit)
        let id = try register(buffer, after: token, bufferingLimit: bufferingLimit)
        let handle = ObservationHandle { [weak registry = observers] in registry?.remove(id) }
        return TransactionObservation(buffer: buffer, handle: handle) { [weak self] _, after, limit in
            guard let self else { return [] }
            return try await self.transactionsToCatchUp(after: after, limit: limit)
        }
    }

    /// Registers `buffer` for the store's transactions, with a catch-up marker after `token`
    /// first; returns the registration's id (package: a container registers one buffer in each
    /// of its stores).
    package func register(_ buffer: TransactionBuffer, after token: DefaultHistoryToken?, bufferingLimit: Int) throws -> Int {
        guard bufferingLimit >= 1 else {
            throw DataStoreError(.invalidRequest, "A transaction observation needs a buffering limit of 1 or more (it was \(bufferingLimit)).")
        }
        guard configuration.history.isEnabled, !isMigrationContext else {
            throw DataStoreError(
                .invalidRequest,
                "The store \(configuration.name) records no history, so it has no transactions to observe; open it with history enabled (WALStoreConfiguration.history), or observe fetches instead."
            )
        }
        if let token, token.storeIdentifier != identifier {
            throw DataStoreError(
                .foreignIdentifier,
                "The history token was made by the store \(token.storeIdentifier), not by \(identifier); use a token of this store.")
        }
        return try gate.withLock {
            // A closed store refuses here, as every call does.
            _ = try Self.engineCall("Observing transactions") { try engine.contains(RecordKeys.meta) }
            if let token { buffer.catchUp(after: token) }
            return observers.addTransactions(buffer)
        }
    }

    /// Ends the registration `id` made by ``register(_:after:bufferingLimit:)``.
    package func unregister(_ id: Int) { observers.remove(id) }

    /// The history page of at most `limit` transactions after token number `after` (0: from
    /// the first kept).
    package func historyPage(after: UInt64, limit: Int) -> HistoryDescriptor<DefaultHistoryTransaction> {
        HistoryDescriptor(after: after == 0 ? nil : DefaultHistoryToken(storeIdentifier: identifier, value: after), fetchLimit: limit)
    }

    /// The transactions a transaction stream reads back after token number `after` (0: from
    /// the first the store ever recorded), at most `limit`, oldest first.
    ///
    /// - Throws: ``DataStoreError/Code/historyTokenExpired`` when some of them are no longer in
    ///   the history (retention, `deleteHistory`, an erase); as ``fetchHistory(_:)``.
    package func transactionsToCatchUp(after: UInt64, limit: Int) async throws -> [DefaultHistoryTransaction] {
        let page = try await fetchHistory(historyPage(after: after, limit: limit))
        // After a token, fetchHistory reports its expiry; from the first, a history that no
        // longer starts at transaction 1 (or holds nothing once something was deleted) does.
        if after == 0, case let first = page.first?.transactionIdentifier ?? history.state.horizon, first > 1 {
            throw DataStoreError(
                .historyTokenExpired,
                "Transactions a transaction observation held no room for are no longer in the history of the store \(configuration.name) (it keeps transactions from \(first) on); fetch what you show again, and observe anew."
            )
        }
        return page
    }

    /// How many observations the store holds (a test hook: zero once every one has ended).
    package var observerCount: Int { observers.observerCount }

    /// How many times a write has re-run an observed fetch of this store (a test hook).
    package var observedFetchesRerun: Int { observers.fetchesRerun }

    // MARK: Hooks of the write paths (the caller holds the store's lock)

    /// Whether a write must tell observers what it changed.
    var isObserved: Bool { observers.isActive }

    /// Records `planner`'s save in history (into `batch`, the save's own) and works out its
    /// changes for the observers, from one list of changes: the history state to install once
    /// `batch` is committed, and what to ``publish(_:)`` then (`nil` when nothing observes).
    /// A save planned after others not yet committed (a shared commit) follows the history
    /// state `base` they leave, and reads their writes, `pending`.
    func recordChanges(
        _ planner: SavePlanner, _ request: DataStoreSaveChangesRequest<DefaultSnapshot>,
        after base: HistoryState? = nil, over pending: PendingWrites = .none, into batch: inout WriteBatch
    ) throws -> (recorded: HistoryState?, observed: ObservedSave?) {
        let observed = isObserved
        guard observed || history.settings.isEnabled else { return (nil, nil) }
        let changes = try planner.historyChanges(request)
        var keys = history.committed
        keys.pending = pending
        let recorded = try history.record(changes, author: request.editingState.author, after: base, reading: keys, into: &batch)
        return (recorded, observed ? try ObservedSave(changes, of: planner, token: recorded?.last) : nil)
    }

    /// Tells the observers about a committed write.
    func publish(_ save: ObservedSave?) {
        guard let save, isObserved else { return }
        observers.publish(save, in: self)
    }

    func fetchHoldingLock(_ request: DataStoreFetchRequest) throws -> [DefaultSnapshot] {
        try Self.engineCall("Fetching") { try FetchRunner(mapper: mapper, counts: counts).fetch(request).fetchedSnapshots }
    }

    func transactionHoldingLock(_ token: UInt64) throws -> DefaultHistoryTransaction? {
        try Self.engineCall("Reading history") { try history.transaction(token) }
    }

    func historyTokenHoldingLock() -> DefaultHistoryToken {
        DefaultHistoryToken(storeIdentifier: identifier, value: history.state.last)
    }
}

extension HistoryLog {
    /// The stored transaction `token`, whole; `nil` when it is not stored.
    func transaction(_ token: UInt64) throws -> DefaultHistoryTransaction? {
        let key = RecordKeys.history(token)
        guard let bytes = try engine.value(forKey: key) else { return nil }
        let record = try HistoryRecord(decoding: bytes, key: key)
        return try transaction(token, record, Array(record.changes.enumerated()))
    }
}
