/// One value of an observed fetch (``WALDataStore/observe(_:)``): its answer, and how that
/// answer differs from the value the same iterator returned before it.
public struct ObservedResults: Sendable, Equatable {
    /// The objects the fetch selects, in its order, as a fetch returned them.
    public let snapshots: [DefaultSnapshot]
    /// The objects in this answer that were not in the last one (every object, for the first
    /// value).
    public let inserted: Set<PersistentIdentifier>
    /// The objects of the last answer that are not in this one.
    public let deleted: Set<PersistentIdentifier>
    /// The objects in both answers whose snapshots differ.
    public let updated: Set<PersistentIdentifier>

    /// The answer's identifiers, in its order.
    public var identifiers: [PersistentIdentifier] { snapshots.map(\.persistentIdentifier) }

    /// `snapshots`, with its differences from `previous` (`nil`: the first value).
    package init(_ snapshots: [DefaultSnapshot], since previous: [DefaultSnapshot]?) {
        self.snapshots = snapshots
        var old: [PersistentIdentifier: DefaultSnapshot] = [:]
        for s in previous ?? [] { old[s.persistentIdentifier] = s }
        var inserted: Set<PersistentIdentifier> = []
        var updated: Set<PersistentIdentifier> = []
        for s in snapshots {
            let id = s.persistentIdentifier
            guard let before = old.removeValue(forKey: id) else {
                inserted.insert(id)
                continue
            }
            if before != s { updated.insert(id) }
        }
        self.inserted = inserted
        self.updated = updated
        self.deleted = Set(old.keys)
    }
}

/// The answers of an observed fetch, as they change (``WALDataStore/observe(_:)``): the
/// current answer first, then a new one after each save that changed it.
///
/// It holds at most one answer the consumer has not taken, the newest: a slow consumer skips
/// intermediate answers (each value's ``ObservedResults`` differences are computed against the
/// value this iterator returned before, so they stay exact) and never makes a save wait. An
/// answer equal to the last one returned is not returned again.
///
/// The observation ends — its registration and what it holds are freed — when the task
/// iterating it is cancelled, when the last copy of the sequence and its iterator go away, or
/// when the store closes (the iteration then ends with `nil`). A fetch that fails when re-run
/// (the engine fails) ends the iteration by throwing that error.
public struct ResultsObservation: AsyncSequence, Sendable {
    /// One answer and its differences from the one before.
    public typealias Element = ObservedResults
    /// What a re-run fetch that failed threw.
    public typealias Failure = any Error

    let stream: AsyncThrowingStream<[DefaultSnapshot], any Error>
    let handle: ObservationHandle
    /// The newest answer the registry holds (`nil` once the observation ended).
    let latest: @Sendable () -> [DefaultSnapshot]?

    /// The iterator: returns ``ObservedResults`` in save order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<[DefaultSnapshot], any Error>.AsyncIterator
        let handle: ObservationHandle
        let latest: @Sendable () -> [DefaultSnapshot]?
        var last: [DefaultSnapshot]?

        /// The next answer that differs from the last one returned, waiting for a save that
        /// brings one; `nil` once the observation ended. It resumes on `actor` (the caller's),
        /// with the newest answer saved by then.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws -> ObservedResults? {
            while let received = try await base.next(isolation: actor) {
                // A value handed over while the consumer waited may have been overtaken by
                // saves that returned before the consumer ran: return the newest answer.
                let snapshots = latest() ?? received
                if snapshots == last { continue }
                defer { last = snapshots }
                return ObservedResults(snapshots, since: last)
            }
            return nil
        }

        /// As ``next(isolation:)``, outside any actor.
        public mutating func next() async throws -> ObservedResults? {
            try await next(isolation: nil)
        }
    }

    /// An iterator whose first value is the answer when the observation began (or a newer one,
    /// when a save came before the first `next()`).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), handle: handle, latest: latest, last: nil)
    }

    /// Ends the observation now: a waiting iteration ends with `nil`.
    public func cancel() { handle.cancel() }
}
