import Engine
/// The transactions saved since an observer last took one, bounded: a slow consumer never
/// blocks a save and never holds more than ``limit`` transactions.
///
/// Past ``limit`` the queued transactions are dropped and replaced, per store, by one
/// ``Event/catchUp(after:)`` marker naming the token before the first one dropped; while that
/// marker waits, later transactions of its store are dropped too (the catch-up reads them from
/// the store's history). The consumer (``TransactionObservation``) reads what a marker covers
/// with `fetchHistory(after:)` and skips any transaction it has already yielded.
///
/// Thread safety: `state` is read and written only inside its `Locked` (a pthread mutex);
/// continuations are resumed after the lock is released.
package final class TransactionBuffer: Sendable {
    enum Event: Sendable {
        case transaction(DefaultHistoryTransaction)
        /// The transactions of the token's store after it were not queued: read them from
        /// history.
        case catchUp(after: DefaultHistoryToken)
    }

    private struct State {
        var queue: [Event] = []
        var head = 0
        /// Stores whose transactions a queued marker covers.
        var covered: Set<String> = []
        var waiter: CheckedContinuation<Event?, Never>?
        var finished = false
        var count: Int { queue.count - head }

        mutating func take() -> Event {
            let event = queue[head]
            head += 1
            if head == queue.count { queue.removeAll(keepingCapacity: true); head = 0 }
            if case .catchUp(let token) = event { covered.remove(token.storeIdentifier) }
            return event
        }
    }

    /// The most transactions held for the consumer.
    let limit: Int
    private let state = Locked(State())

    package init(limit: Int) { self.limit = Swift.max(1, limit) }

    /// Queues a catch-up marker (an observation that starts from a token).
    func catchUp(after token: DefaultHistoryToken) { push(.catchUp(after: token)) }

    /// Hands `transaction` to the waiting consumer, or queues it (see the type's policy).
    func push(_ transaction: DefaultHistoryTransaction) { push(.transaction(transaction)) }

    private func push(_ event: Event) {
        let handoff: (CheckedContinuation<Event?, Never>, Event)? = state.withLock {
            (s: inout State) -> (CheckedContinuation<Event?, Never>, Event)? in
            guard !s.finished else { return nil }
            switch event {
            case .catchUp(let token):
                guard s.covered.insert(token.storeIdentifier).inserted else { return nil }
            case .transaction(let t):
                guard !s.covered.contains(t.storeIdentifier) else { return nil }
                if s.count >= limit {
                    Self.collapse(&s, adding: t)
                    return nil
                }
            }
            s.queue.append(event)
            // A consumer waits only on an empty queue: hand it the event at once.
            guard let waiter = s.waiter else { return nil }
            s.waiter = nil
            return (waiter, s.take())
        }
        if let (waiter, event) = handoff { waiter.resume(returning: event) }
    }

    /// Replaces the queued transactions by one marker per store.
    private static func collapse(_ s: inout State, adding t: DefaultHistoryTransaction) {
        var kept: [Event] = []
        var firstDropped: [String: UInt64] = [:]
        var order: [String] = []
        for event in s.queue[s.head...] {
            switch event {
            case .catchUp: kept.append(event)
            case .transaction(let x):
                if firstDropped[x.storeIdentifier] == nil { order.append(x.storeIdentifier) }
                firstDropped[x.storeIdentifier] = min(firstDropped[x.storeIdentifier] ?? .max, x.transactionIdentifier)
            }
        }
        if firstDropped[t.storeIdentifier] == nil { order.append(t.storeIdentifier) }
        firstDropped[t.storeIdentifier] = min(firstDropped[t.storeIdentifier] ?? .max, t.transactionIdentifier)
        for store in order where !s.covered.contains(store) {
            kept.append(.catchUp(after: DefaultHistoryToken(storeIdentifier: store, value: firstDropped[store]! - 1)))
            s.covered.insert(store)
        }
        s.queue = kept
        s.head = 0
    }

    /// The next event, waiting for one; `nil` once finished (cancelled, or the stores closed).
    func next() async -> Event? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Event?, Never>) in
                let ready: Event?? = state.withLock { (s: inout State) -> Event?? in
                    if s.count > 0 { return Event??.some(s.take()) }
                    if s.finished { return Event??.some(nil) }
                    s.waiter = c
                    return Event??.none
                }
                if let ready { c.resume(returning: ready) }
            }
        } onCancel: {
            finish()
        }
    }

    /// Ends the buffer: the consumer's wait returns `nil`, and nothing more is queued.
    func finish() {
        let waiter: CheckedContinuation<Event?, Never>? = state.withLock { s in
            s.finished = true
            s.queue = []
            s.head = 0
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// How many events wait (a test hook).
    var waiting: Int { state.withLock { $0.count } }
}
