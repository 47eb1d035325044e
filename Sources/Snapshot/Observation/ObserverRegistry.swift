import Engine
import Foundation
import Synchronization

/// A store's observers: its observed fetches, indexed by the entities whose changes can change
/// their answers, and its transaction streams.
///
/// **Lock discipline.** Observers are added, and their last results replaced, only by a caller
/// holding the store's lock (`WALDataStore.gate`), which every write holds too: so a
/// registration never interleaves with a save's publication, and publications run one at a
/// time in commit order. The tables themselves sit in a `Locked` (a pthread mutex) because
/// observers are removed from any thread (a cancelled task, a dropped iterator); no fetch runs
/// and no continuation is resumed while that mutex is held. `count` mirrors the number of
/// observers, so that a save with nothing observing costs one atomic load.
final class ObserverRegistry: Sendable {
    struct ResultObserver: Sendable {
        let request: DataStoreFetchRequest
        let dependencies: FetchDependencies
        let continuation: AsyncThrowingStream<[DefaultSnapshot], any Error>.Continuation
        var last: [DefaultSnapshot]
        var lastKeys: Set<UUID>

        mutating func remember(_ snapshots: [DefaultSnapshot]) {
            last = snapshots
            lastKeys = Set(snapshots.compactMap { RecordMapper.primaryKey(of: $0.persistentIdentifier) })
        }
    }

    private struct State {
        var nextID = 0
        var results: [Int: ResultObserver] = [:]
        var byEntity: [String: Set<Int>] = [:]
        var transactions: [Int: TransactionBuffer] = [:]
    }

    private let state = Locked(State())
    private let count = Atomic<Int>(0)
    private let reruns = Atomic<Int>(0)

    /// Whether anything observes the store (the save path's one check).
    var isActive: Bool { count.load(ordering: .acquiring) > 0 }

    /// How many observers are registered (a test hook: zero once every observation ended).
    var observerCount: Int { state.withLock { $0.results.count + $0.transactions.count } }

    /// How many times a write re-ran an observed fetch (a test hook).
    var fetchesRerun: Int { reruns.load(ordering: .relaxed) }

    /// Registers an observed fetch whose current answer is `first` (call holding the store's
    /// lock); returns its id.
    func addResults(
        _ request: DataStoreFetchRequest, dependencies: FetchDependencies, first: [DefaultSnapshot],
        continuation: AsyncThrowingStream<[DefaultSnapshot], any Error>.Continuation
    ) -> Int {
        var observer = ResultObserver(request: request, dependencies: dependencies, continuation: continuation, last: [], lastKeys: [])
        observer.remember(first)
        let id: Int = state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.results[id] = observer
            for entity in dependencies.entities { s.byEntity[entity, default: []].insert(id) }
            return id
        }
        count.add(1, ordering: .releasing)
        return id
    }

    /// Registers a transaction stream's buffer (call holding the store's lock); returns its id.
    func addTransactions(_ buffer: TransactionBuffer) -> Int {
        let id: Int = state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.transactions[id] = buffer
            return id
        }
        count.add(1, ordering: .releasing)
        return id
    }

    /// The newest answer of observed fetch `id` (`nil` once it ended).
    func latest(_ id: Int) -> [DefaultSnapshot]? { state.withLock { $0.results[id]?.last } }

    /// Forgets observer `id` and finishes its sequence (from any thread; again: nothing).
    func remove(_ id: Int) {
        let removed: (ResultObserver?, TransactionBuffer?) = state.withLock { s in
            if let observer = s.results.removeValue(forKey: id) {
                for entity in observer.dependencies.entities {
                    s.byEntity[entity]?.remove(id)
                    if s.byEntity[entity]?.isEmpty == true { s.byEntity[entity] = nil }
                }
                return (observer, nil)
            }
            return (nil, s.transactions.removeValue(forKey: id))
        }
        guard removed.0 != nil || removed.1 != nil else { return }
        count.subtract(1, ordering: .releasing)
        removed.0?.continuation.finish()
        removed.1?.finish()
    }

    /// Ends every observation (the store closes): each sequence ends without an error.
    func removeAll() {
        let ids = state.withLock { Array($0.results.keys) + Array($0.transactions.keys) }
        for id in ids { remove(id) }
    }

    /// Tells the observers about a committed write (call holding the store's lock, after the
    /// commit returned): re-runs each observed fetch the write's changes can affect, yields its
    /// answer when it differs from the last one, and hands the write's transaction to every
    /// transaction stream.
    func publish(_ save: ObservedSave, in store: WALDataStore) {
        let evaluator = PredicateEvaluator(schema: store.schema) { _ in nil }
        let (affected, buffers) = state.withLock { s -> ([(Int, ResultObserver)], [TransactionBuffer]) in
            var affected: [(Int, ResultObserver)] = []
            if save.changesEverything {
                affected = s.results.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            } else if !s.byEntity.isEmpty {
                var candidates: Set<Int> = []
                var entities: Set<String> = []
                for change in save.changes where entities.insert(change.entity).inserted {
                    if let ids = s.byEntity[change.entity] { candidates.formUnion(ids) }
                }
                for id in candidates.sorted() {
                    guard let observer = s.results[id] else { continue }
                    if save.changes.contains(where: {
                        observer.dependencies.isAffected(by: $0, of: save, last: observer.lastKeys, evaluator: evaluator)
                    }) {
                        affected.append((id, observer))
                    }
                }
            }
            return (affected, Array(s.transactions.values))
        }
        for (id, observer) in affected {
            reruns.add(1, ordering: .relaxed)
            do {
                let snapshots = try store.fetchHoldingLock(observer.request)
                guard snapshots != observer.last else { continue }
                let stillRegistered = state.withLock { s in
                    guard s.results[id] != nil else { return false }
                    s.results[id]!.remember(snapshots)
                    return true
                }
                if stillRegistered { observer.continuation.yield(snapshots) }
            } catch {
                observer.continuation.finish(throwing: error)
                remove(id)
            }
        }
        guard !buffers.isEmpty else { return }
        if save.changesEverything {
            let last = store.historyTokenHoldingLock()
            for buffer in buffers { buffer.catchUp(after: last) }
        } else if let token = save.token {
            do {
                guard let transaction = try store.transactionHoldingLock(token) else { return }
                for buffer in buffers { buffer.push(transaction) }
            } catch {
                // The transaction was just committed and cannot be read back: every stream
                // catches up from history (which reports the failure, if it lasts).
                for buffer in buffers { buffer.catchUp(after: DefaultHistoryToken(storeIdentifier: store.identifier, value: token - 1)) }
            }
        }
    }
}
