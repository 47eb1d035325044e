import Engine
import Foundation

/// A ``WALDataStore``'s history: what it has recorded (``HistoryState``), recording a save's
/// transaction into the save's own engine batch, retention, deletion and fetches.
///
/// Its methods are called under the store's lock, one at a time; the state sits in the
/// engine's `Locked` (read and written only inside its `withLock`) only so that the type is
/// `Sendable`. The in-memory state changes only after the commit that
/// stores it returned.
final class HistoryLog: Sendable {
    let settings: WALStoreConfiguration.History
    let storeIdentifier: String
    let engine: LogStore
    private let stored: Locked<HistoryState>
    private let clock: Locked<Clock>

    /// The clock, in a struct: a bare closure in the generic `Locked` is reabstracted at each
    /// `inout` access, and the thunks would pile up, one more per call.
    struct Clock: Sendable {
        var now: @Sendable () -> Date
    }

    /// History records deleted per commit by a prune (at open, by deleteHistory).
    static let pruneChunk = 8192
    /// At most this many records are deleted, or examined for their age, in a save's commit.
    static let saveChunk = 64

    /// Reads the history's state and applies the configuration's retention (a store opened
    /// with history off ends its history: every token expires, and its records are deleted).
    /// Prunes in commits of its own.
    init(engine: LogStore, settings: WALStoreConfiguration.History, storeIdentifier: String) throws {
        try settings.validate()
        self.engine = engine
        self.settings = settings
        self.storeIdentifier = storeIdentifier
        let bytes = try engine.value(forKey: RecordKeys.historyMeta)
        stored = Locked(try bytes.map { bytes throws(RecordDecodingError) in try HistoryState(decoding: bytes) } ?? HistoryState())
        clock = Locked(Clock(now: { Date() }))
        guard bytes != nil else { return }
        var target = state
        if settings.isEnabled {
            target.horizon = try retainedHorizon(target, newest: target.last, now: now(), examineAtMost: nil, reading: committed)
        } else {
            // The saves of this session are not recorded: they take a token of their own, so
            // that every token made before them (the newest included) expires.
            target.last += 1
            target.horizon = target.last + 1
        }
        try prune(to: target)
    }

    /// A history that records nothing and writes nothing (a custom migration stage's store):
    /// it neither reads nor prunes the stored history.
    init(recordingNothingOn engine: LogStore, storeIdentifier: String) {
        self.engine = engine
        self.settings = .disabled
        self.storeIdentifier = storeIdentifier
        stored = Locked(HistoryState())
        clock = Locked(Clock(now: { Date() }))
    }

    var state: HistoryState { stored.withLock { $0 } }

    /// Reads the stored state again (after a commit this log did not make).
    func reload() throws {
        let bytes = try engine.value(forKey: RecordKeys.historyMeta)
        let state = try bytes.map { bytes throws(RecordDecodingError) in try HistoryState(decoding: bytes) } ?? HistoryState()
        stored.withLock { $0 = state }
    }

    func now() -> Date { clock.withLock { $0.now }() }

    func setClock(_ body: @escaping @Sendable () -> Date) { clock.withLock { $0 = Clock(now: body) } }

    /// Makes `state` the in-memory state, once the commit that stores it has returned.
    func didCommit(_ state: HistoryState?) {
        if let state { stored.withLock { $0 = state } }
    }

    // MARK: Retention

    /// The engine's keys as history reads them: without pending writes, outside any
    /// generation (history keys are never prefixed).
    var committed: RecordSpace { RecordSpace(engine: engine, generation: 0) }

    /// The first token to keep once transaction `newest` is the newest: past `maximumCount`,
    /// and past the transactions older than `maximumAge` that `keys` holds (in token order, at
    /// most `examineAtMost` of them read).
    func retainedHorizon(_ s: HistoryState, newest: UInt64, now: Date, examineAtMost: Int?, reading keys: RecordSpace) throws -> UInt64 {
        var horizon = s.horizon
        if let count = settings.maximumCount, newest >= UInt64(count) { horizon = max(horizon, newest - UInt64(count) + 1) }
        if let age = settings.maximumAge, horizon <= s.last {
            let cutoff = now.addingTimeInterval(-age)
            let range = LogStore.KeyRange(lower: .inclusive(RecordKeys.history(horizon)), upper: .inclusive(RecordKeys.history(s.last)))
            var examined = 0
            var cursor = try keys.scan(range, limit: examineAtMost)
            while let entry = try cursor.next() {
                let token = try RecordKeys.historyToken(of: entry.key)
                if try HistoryRecord.timestamp(in: entry.value(), key: entry.key) >= cutoff { return token }
                horizon = token + 1
                examined += 1
            }
            // Every stored transaction read was too old: all of them, unless the limit stopped it.
            if examined < (examineAtMost ?? Int.max) { horizon = s.last + 1 }
        }
        return horizon
    }

    /// Deletes up to `limit` records below the horizon that `keys` holds into `batch`, moving
    /// `s.floor` past them.
    func deleteExpired(_ s: inout HistoryState, into batch: inout WriteBatch, limit: Int, reading keys: RecordSpace) throws {
        guard s.floor < s.horizon else { return }
        let range = LogStore.KeyRange(lower: .inclusive(RecordKeys.history(s.floor)), upper: .exclusive(RecordKeys.history(s.horizon)))
        var deleted = 0
        var lastToken: UInt64 = 0
        var cursor = try keys.scan(range, limit: limit)
        while let entry = try cursor.next() {
            batch.delete(entry.key)
            deleted += 1
            lastToken = try RecordKeys.historyToken(of: entry.key)
        }
        s.floor = deleted < limit ? s.horizon : lastToken + 1
    }

    /// Stores `target` (a horizon moved forward) and deletes every record below its horizon, in
    /// commits of at most ``pruneChunk`` deletes. The first commit already stores the new
    /// horizon, so after a crash the later ones are redone by the next open.
    func prune(to target: HistoryState) throws {
        var s = target
        s.floor = min(s.floor, s.horizon)
        guard s != state || s.floor < s.horizon else { return }
        repeat {
            var batch = WriteBatch()
            try deleteExpired(&s, into: &batch, limit: Self.pruneChunk, reading: committed)
            batch.put(RecordKeys.historyMeta, s.encoded())
            try engine.commit(batch)
            didCommit(s)
        } while s.floor < s.horizon
    }

    // MARK: Recording

    /// Adds the transaction `changes` make to `batch` (the save's own), with what retention
    /// deletes; returns the state to install once `batch` is committed. `nil` (nothing added)
    /// with history off or no change.
    ///
    /// `base` is the state the transaction follows: the installed one, or, for a save planned
    /// after others not yet committed (a shared commit), the state the last of them leaves,
    /// whose records `keys` reads as pending writes.
    func record(
        _ changes: [HistoryRecord.Change], author: String?, after base: HistoryState? = nil, reading keys: RecordSpace? = nil,
        into batch: inout WriteBatch
    ) throws -> HistoryState? {
        guard settings.isEnabled, !changes.isEmpty else { return nil }
        var s = base ?? state
        let keys = keys ?? committed
        let token = s.last + 1
        let timestamp = now()
        batch.put(RecordKeys.history(token), HistoryRecord(timestamp: timestamp, author: author, changes: changes).encoded())
        s.horizon = try retainedHorizon(s, newest: token, now: timestamp, examineAtMost: Self.saveChunk, reading: keys)
        s.last = token
        try deleteExpired(&s, into: &batch, limit: Self.saveChunk, reading: keys)
        batch.put(RecordKeys.historyMeta, s.encoded())
        return s
    }

    /// What an erase does to the history (its records go with every other key): every token
    /// expires. Adds the new state to `batch`; `nil` when there is nothing to change.
    func erase(into batch: inout WriteBatch) -> HistoryState? {
        var s = state
        guard s.last > 0 else { return nil }
        s.horizon = s.last + 1
        s.floor = s.horizon
        guard s != state else { return nil }
        batch.put(RecordKeys.historyMeta, s.encoded())
        return s
    }
}
