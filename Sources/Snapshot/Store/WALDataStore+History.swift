import Foundation

extension WALDataStore: HistoryProviding {
    /// The transactions the store records.
    public typealias HistoryType = DefaultHistoryTransaction

    /// ``DefaultHistoryTransaction``.
    public static var historyType: DefaultHistoryTransaction.Type { DefaultHistoryTransaction.self }

    /// The recorded transactions `descriptor` selects, in its order.
    ///
    /// With history on (``WALStoreConfiguration/history``), every save, batch delete and
    /// `delete` rule that changes something is one transaction, committed in the same engine
    /// commit as the save: after a crash, the objects and their history agree. A transaction
    /// holds its token (numbered from 1 in commit order), the request's
    /// ``EditingState/author``, the time of the save, and its changes: each object inserted,
    /// updated (with the properties whose stored value changed) or deleted (with a tombstone of
    /// its ``Schema/Attribute/Options/preserveValueOnDeletion`` attributes), once, in this order:
    /// the request's inserts, updates and deletes in request order, then the objects deleted by
    /// cascade, then the other objects the save changed (inverses, nullified references), each
    /// group by identifier. A save that changes nothing records nothing. Entity and property
    /// names are stored as strings, so transactions stay readable after the schema changes.
    ///
    /// `after` and `before` select a token range (a range scan of the history's keys);
    /// `authors` and `entityNames` are applied to each transaction read; `fetchLimit` counts
    /// the transactions returned, from the end `sortOrder` starts at.
    ///
    /// - Throws: ``DataStoreError/Code/historyTokenExpired`` when `after` is the token of a
    ///   transaction the store no longer keeps (deleted by ``deleteHistory(_:)``, retention, an
    ///   erase, or a session with history off), or `after` or `before` is newer than its newest
    ///   transaction — never a partial answer;
    ///   ``DataStoreError/Code/foreignIdentifier`` for a token of another store;
    ///   ``DataStoreError/Code/invalidRequest`` for a negative limit; `engine` when a record
    ///   does not decode or the engine fails.
    public func fetchHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws -> [DefaultHistoryTransaction] {
        try gate.withLock { try Self.engineCall("Fetching history") { try history.fetch(descriptor, schema: schema) } }
    }

    /// Deletes the transactions before `descriptor.before` (the whole history without it);
    /// the tokens of the deleted transactions expire, `before` itself stays valid (delete
    /// before the last token processed, and a fetch after it goes on working). Only `before`
    /// may be given: the history is deleted from its oldest end, so a fetch after any token
    /// still kept is complete.
    ///
    /// When it returns, the deletion is durable (in the durable sync mode); the deleted records
    /// are removed in commits of a few thousand, the first of which already hides them all, and
    /// a crash part way leaves the rest to the next open. Their bytes leave the files at the
    /// engine's next compaction.
    ///
    /// - Throws: ``DataStoreError/Code/invalidRequest`` with any other filter (`withoutAuthor`
    ///   included); the store is then unchanged;
    ///   ``DataStoreError/Code/historyTokenExpired`` for a token newer than the newest
    ///   transaction; ``DataStoreError/Code/foreignIdentifier`` for a token of another store;
    ///   `engine` when the engine fails.
    public func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        try gate.withLock { try Self.engineCall("Deleting history") { try history.delete(descriptor) } }
    }

    /// As ``fetchHistory(_:)``, run on one of the engine's I/O threads.
    public func fetchHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) async throws -> [DefaultHistoryTransaction] {
        try await onIOThread { try self.fetchHistory(descriptor) }
    }

    /// As ``deleteHistory(_:)``, run on one of the engine's I/O threads; durable as
    /// ``deleteHistory(_:)``.
    public func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) async throws {
        try await onIOThread { try self.deleteHistory(descriptor) }
    }

    /// Replaces the clock that stamps transactions and that retention by age compares with
    /// (tests).
    package func setHistoryClock(_ clock: @escaping @Sendable () -> Date) {
        gate.withLock { history.setClock(clock) }
    }
}
