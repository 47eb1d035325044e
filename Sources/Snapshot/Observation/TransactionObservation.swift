/// The transactions saved to one store or to a container's stores, as they are committed
/// (``WALDataStore/observeTransactions(after:bufferingLimit:)``): each
/// ``DefaultHistoryTransaction`` once, in commit order per store, as `fetchHistory` returns it.
///
/// **A slow consumer** never makes a save wait: at most `bufferingLimit` transactions are held
/// for it; past that they are dropped and the iterator reads them back from the store's
/// history (`fetchHistory(after:)`, in pages) before it returns later ones, so none is missed
/// or repeated. When history no longer holds them (retention or `deleteHistory` removed them,
/// the store was erased), `next()` throws ``DataStoreError/Code/historyTokenExpired``: fetch
/// what you show again, and observe anew from the newest token.
///
/// The observation ends — its registrations and what it holds are freed — when the task
/// iterating it is cancelled, when the last copy of the sequence and its iterator go away, or
/// when the store closes (the iteration then ends with `nil`).
public struct TransactionObservation: AsyncSequence, Sendable {
    /// One committed transaction, as `fetchHistory` returns it.
    public typealias Element = DefaultHistoryTransaction
    /// What reading history back threw (``DataStoreError/Code/historyTokenExpired``, …).
    public typealias Failure = any Error

    /// Reads the transactions of a store after a token number (0: from its first), at most a
    /// limit of them, oldest first; throws ``DataStoreError/Code/historyTokenExpired`` when
    /// some of them are no longer kept (``WALDataStore/transactionsToCatchUp(after:limit:)``).
    package typealias CatchUp = @Sendable (_ storeIdentifier: String, _ after: UInt64, _ limit: Int) async throws -> [DefaultHistoryTransaction]

    let buffer: TransactionBuffer
    let handle: ObservationHandle
    let catchUp: CatchUp

    /// A sequence fed by `buffer`, which reads what the buffer dropped through `catchUp`, and
    /// ends its registrations through `handle`.
    package init(buffer: TransactionBuffer, handle: ObservationHandle, catchUp: @escaping CatchUp) {
        self.buffer = buffer
        self.handle = handle
        self.catchUp = catchUp
    }

    /// Transactions read back from history per call.
    static let pageSize = 256

    /// The iterator: returns each transaction once, in commit order per store.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let buffer: TransactionBuffer
        let handle: ObservationHandle
        let catchUp: CatchUp
        /// Per store, the number of the newest transaction returned.
        var delivered: [String: UInt64] = [:]
        /// Transactions read back from history, not yet returned.
        var pending: [DefaultHistoryTransaction] = []
        /// A store whose history read back filled a page: read on after the pending ones.
        var more: (store: String, after: UInt64)?

        /// The next transaction, waiting for a save that commits one; `nil` once the
        /// observation ended.
        ///
        /// - Throws: ``DataStoreError/Code/historyTokenExpired`` when transactions it held no
        ///   room for are no longer in the store's history; the store's errors reading history.
        public mutating func next() async throws -> DefaultHistoryTransaction? {
            while true {
                if !pending.isEmpty {
                    let t = pending.removeFirst()
                    if take(t) { return t }
                    continue
                }
                if let (store, after) = more {
                    more = nil
                    try await readBack(store, after: Swift.max(after, delivered[store] ?? 0))
                    continue
                }
                guard let event = await buffer.next() else {
                    // Cancelled or finished: the registrations go now, not when the sequence goes.
                    handle.cancel()
                    return nil
                }
                switch event {
                case .transaction(let t):
                    if take(t) { return t }
                case .catchUp(let token):
                    try await readBack(token.storeIdentifier, after: Swift.max(token.value, delivered[token.storeIdentifier] ?? 0))
                }
            }
        }

        private mutating func take(_ t: DefaultHistoryTransaction) -> Bool {
            guard t.transactionIdentifier > delivered[t.storeIdentifier] ?? 0 else { return false }
            delivered[t.storeIdentifier] = t.transactionIdentifier
            return true
        }

        private mutating func readBack(_ store: String, after: UInt64) async throws {
            let page = try await catchUp(store, after, TransactionObservation.pageSize)
            pending = page
            if page.count == TransactionObservation.pageSize, let last = page.last { more = (store, last.transactionIdentifier) }
        }
    }

    /// An iterator over the transactions (one observation: make one iterator of it).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(buffer: buffer, handle: handle, catchUp: catchUp)
    }

    /// Ends the observation now: a waiting iteration ends with `nil`.
    public func cancel() { handle.cancel() }
}
