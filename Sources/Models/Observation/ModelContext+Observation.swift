import Snapshot

/// One value of an observed typed fetch (``ModelContext/observe(_:)``): its objects, as this
/// context's model objects, and how the answer differs from the one returned before it.
public struct ObservedModels<Model: PersistentModel> {
    /// The objects the fetch selects, in its order: one instance per identifier, the context's.
    public let models: [Model]
    /// The objects in this answer that were not in the last one (every object, for the first).
    public let inserted: Set<PersistentIdentifier>
    /// The objects of the last answer that are not in this one.
    public let deleted: Set<PersistentIdentifier>
    /// The objects in both answers whose stored values differ.
    public let updated: Set<PersistentIdentifier>
}

/// The answers of an observed typed fetch as saves change them (``ModelContext/observe(_:)``).
/// Its values are made in the context's isolation domain: iterate it where the context lives.
public struct ModelResultsObservation<Model: PersistentModel>: AsyncSequence {
    /// One answer as model objects, and its differences from the one before.
    public typealias Element = ObservedModels<Model>
    /// What a re-run fetch, or making its objects, threw.
    public typealias Failure = any Error

    let context: ModelContext
    let base: ResultsObservation

    /// The iterator: each answer as the context's model objects.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: ResultsObservation.AsyncIterator
        let context: ModelContext

        /// The next answer that differs from the last one, waiting for a save that brings one;
        /// `nil` once the observation ended.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws -> ObservedModels<Model>? {
            guard let results = try await base.next(isolation: actor) else { return nil }
            return try context.models(Model.self, for: results)
        }

        /// As ``next(isolation:)``, outside any actor.
        public mutating func next() async throws -> ObservedModels<Model>? {
            try await next(isolation: nil)
        }
    }

    /// An iterator whose first value is the answer when the observation began (or a newer one).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), context: context)
    }

    /// Ends the observation now: a waiting iteration ends with `nil`.
    public func cancel() { base.cancel() }
}

extension ModelContext {
    /// Observes a typed fetch, as SwiftData's `@Query` follows one: an asynchronous sequence of
    /// its answers, the current one first, then a new one after every save — by this context or
    /// another context of the same container (a store is open in one container at a time) —
    /// that changed it
    /// (``Snapshot/WALDataStore/observe(_:)-(DataStoreFetchRequest)`` says which saves re-run
    /// the fetch; values never come before the save that caused them, and an answer equal to
    /// the last is not repeated).
    ///
    /// Values are the stores' saved state: this context's pending changes are not included
    /// (`includePendingChanges` is ignored). Each value's objects are this context's instances
    /// (one per identifier, as ``fetch(_:)`` returns them); a registered object with no change
    /// pending here takes the saved values, one with pending changes keeps its own.
    /// Iterate the sequence in the context's isolation domain (the main actor for
    /// ``StoreContainer/mainContext``, a model actor's own); the observation ends when that
    /// task is cancelled, when the sequence and its iterator go away, or when the container
    /// closes.
    ///
    /// - Throws: ``PredicateTranslationError`` for a predicate or sort the store cannot run; as
    ///   ``StoreContainer/observe(_:)``.
    public func observe<Model: PersistentModel>(_ descriptor: FetchDescriptor<Model>) throws -> ModelResultsObservation<Model> {
        ModelResultsObservation(context: self, base: try storeContext.observe(try descriptor.storeDescriptor()))
    }

    /// Observes the container's transactions: ``StoreContainer/observeTransactions(after:bufferingLimit:)``.
    ///
    /// - Throws: as ``StoreContainer/observeTransactions(after:bufferingLimit:)``.
    public func observeTransactions(after tokens: [DefaultHistoryToken] = [], bufferingLimit: Int = 1_000) throws -> TransactionObservation {
        try container.observeTransactions(after: tokens, bufferingLimit: bufferingLimit)
    }

    /// `results` as this context's objects: registered objects without pending changes take
    /// the saved values first.
    func models<Model: PersistentModel>(_ type: Model.Type, for results: ObservedResults) throws -> ObservedModels<Model> {
        let snapshots = results.snapshots
        objects.add(snapshots)
        defer { objects.clearSnapshots() }
        try preloadReferences(of: snapshots, as: Model.self)
        for snapshot in snapshots { try refresh(from: snapshot) }
        let models = try snapshots.map { try objects.model(Model.self, for: $0.persistentIdentifier) }
        return ObservedModels(models: models, inserted: results.inserted, deleted: results.deleted, updated: results.updated)
    }

    /// Registers `snapshot` as the stored state of its object, as a fetch does, and gives the
    /// registered model object the saved values — unless this context has changes of it pending
    /// (staged, or made to the object and not yet compared), which it keeps.
    private func refresh(from snapshot: DefaultSnapshot) throws {
        let id = snapshot.persistentIdentifier
        guard storeContext.updates[id] == nil, !storeContext.deletes.contains(id) else { return }
        guard var object = objects.registeredObject(for: id), let known = storeContext.registered[id] else {
            storeContext.registered[id] = snapshot
            return
        }
        guard known != snapshot, Self.changes(of: object, from: known).isEmpty else { return }
        storeContext.registered[id] = snapshot
        try object.update(from: snapshot, resolver: objects)
    }
}
