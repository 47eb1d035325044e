import Engine
import Foundation

extension HistoryLog {
    /// The transactions `descriptor` selects (see ``WALDataStore/fetchHistory(_:)``).
    func fetch(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>, schema: Schema) throws -> [DefaultHistoryTransaction] {
        if let limit = descriptor.fetchLimit, limit < 0 {
            throw DataStoreError(.invalidRequest, "The history fetch limit is \(limit); give a limit of 0 or more, or nil.")
        }
        let s = state
        var lower = s.horizon
        var upper = s.last
        if let after = descriptor.after {
            try check(after, s)
            lower = max(lower, after.value + 1)
        }
        if let before = descriptor.before {
            try checkBound(before, s, call: "fetchHistory")
            guard before.value > 0 else { return [] }
            upper = min(upper, before.value - 1)
        }
        guard lower <= upper, descriptor.fetchLimit != 0 else { return [] }
        let filtered = descriptor.filtersByAuthor || descriptor.entityNames != nil
        let range = LogStore.KeyRange(lower: .inclusive(RecordKeys.history(lower)), upper: .inclusive(RecordKeys.history(upper)))
        let limit = descriptor.fetchLimit ?? Int.max
        var result: [DefaultHistoryTransaction] = []
        var cursor = try engine.scan(range, limit: filtered ? nil : limit, reverse: descriptor.sortOrder == .newestFirst)
        while let entry = try cursor.next() {
            let token = try RecordKeys.historyToken(of: entry.key)
            let record = try HistoryRecord(decoding: try entry.value(), key: entry.key)
            if descriptor.filtersByAuthor {
                if let author = record.author {
                    guard descriptor.authors?.contains(author) == true else { continue }
                } else {
                    guard descriptor.withoutAuthor else { continue }
                }
            }
            var changes = Array(record.changes.enumerated())
            if let names = descriptor.entityNames {
                changes = changes.filter {
                    names.contains($0.element.entity) || names.contains { [entity = $0.element.entity] in schema.isEntity(entity, kindOf: $0) }
                }
                if changes.isEmpty { continue }
            }
            result.append(try transaction(token, record, changes))
            if result.count == limit { break }
        }
        return result
    }

    /// Deletes the transactions before `descriptor.before` (every one without it): the oldest
    /// part of the history, so that every kept token still answers completely.
    func delete(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        guard descriptor.after == nil, !descriptor.filtersByAuthor, descriptor.entityNames == nil, descriptor.fetchLimit == nil else {
            throw DataStoreError(
                .invalidRequest,
                "deleteHistory deletes the oldest transactions, up to a token: give `before` only (deleting by author, entity or limit would leave gaps that fetches after a token could not report)."
            )
        }
        var target = state
        if let before = descriptor.before {
            try checkBound(before, target, call: "deleteHistory")
            target.horizon = max(target.horizon, before.value)
        } else {
            target.horizon = target.last + 1
        }
        try prune(to: target)
    }

    private func checkStore(_ token: DefaultHistoryToken) throws {
        guard token.storeIdentifier == storeIdentifier else {
            throw DataStoreError(
                .foreignIdentifier,
                "The history token was made by the store \(token.storeIdentifier), not by \(storeIdentifier); use a token of this store.")
        }
    }

    /// A token a range may end before (`before`): of this store, and not newer than its newest
    /// transaction. (An old one is fine: the range then holds nothing.)
    private func checkBound(_ token: DefaultHistoryToken, _ s: HistoryState, call: String) throws {
        try checkStore(token)
        if token.value > s.last {
            throw DataStoreError(
                .historyTokenExpired,
                "\(call) was given the token \(token.value) as `before`, newer than the store's newest transaction (\(s.last)): the store was replaced or restored since the token was made; fetch its history again from the start."
            )
        }
    }

    /// A token a fetch may start after: of this store, not newer than its newest transaction,
    /// and of a transaction the store still keeps (a token whose transaction was deleted has
    /// expired, even when nothing after it was deleted).
    private func check(_ token: DefaultHistoryToken, _ s: HistoryState) throws {
        try checkStore(token)
        if token.value > s.last {
            throw DataStoreError(
                .historyTokenExpired,
                "The history token \(token.value) is newer than the store's newest transaction (\(s.last)): the store was replaced or restored since the token was made; fetch its history again from the start."
            )
        }
        if token.value < s.horizon {
            throw DataStoreError(
                .historyTokenExpired,
                "The history token \(token.value) has expired: its transaction was deleted (by deleteHistory, retention, an erase, or a session with history off), and the store keeps transactions from \(s.horizon) on; fetch the whole history again, or the objects themselves."
            )
        }
    }

    /// The public shape of a stored transaction, with the changes selected (each keeps its
    /// position in the whole transaction as its change identifier).
    func transaction(
        _ token: UInt64, _ record: HistoryRecord, _ changes: [(offset: Int, element: HistoryRecord.Change)]
    ) throws -> DefaultHistoryTransaction {
        var result: [HistoryChange] = []
        result.reserveCapacity(changes.count)
        for (i, c) in changes {
            let id = try PersistentIdentifier.identifier(for: storeIdentifier, entityName: c.entity, primaryKey: c.primaryKey)
            switch c.kind {
            case .insert:
                result.append(.insert(HistoryInsert(changeIdentifier: i, transactionIdentifier: token, changedPersistentIdentifier: id)))
            case .update:
                result.append(
                    .update(
                        HistoryUpdate(
                            changeIdentifier: i, transactionIdentifier: token, changedPersistentIdentifier: id, updatedAttributes: c.updated)))
            case .delete:
                let tombstone = HistoryTombstone(c.tombstone.map { ($0.name, $0.value) })
                result.append(
                    .delete(HistoryDelete(changeIdentifier: i, transactionIdentifier: token, changedPersistentIdentifier: id, tombstone: tombstone)))
            }
        }
        return DefaultHistoryTransaction(
            storeIdentifier: storeIdentifier, transactionIdentifier: token, author: record.author, timestamp: record.timestamp, changes: result)
    }
}
