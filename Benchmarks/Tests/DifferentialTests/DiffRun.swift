import CoreDataSQLiteStore
import Foundation
import Snapshot

/// A store under test behind one interface, with the way to close and open it again.
protocol DiffSide: AnyObject {
    var name: String { get }
    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot>
    func fetch(_ request: DataStoreFetchRequest) throws -> DataStoreFetchResult<DefaultSnapshot>
    func fetchCount(_ request: DataStoreFetchRequest) throws -> Int
    func fetchIdentifiers(_ request: DataStoreFetchRequest) throws -> [PersistentIdentifier]
    func delete(_ request: DataStoreBatchDeleteRequest) throws
    func reopen() throws
    func close()
}

/// A ``DiffSide`` over any batching store of default snapshots.
final class StoreSide<Store: DataStoreBatching>: DiffSide where Store.SnapshotType == DefaultSnapshot {
    let name: String
    private let open: () throws -> Store
    private let shut: (Store) -> Void
    private var store: Store?

    init(name: String, open: @escaping () throws -> Store, close: @escaping (Store) -> Void) throws {
        self.name = name
        self.open = open
        self.shut = close
        store = try open()
    }

    private func current() throws -> Store {
        guard let store else { throw DataStoreError(.engine, "\(name) is closed: a reopen failed earlier.") }
        return store
    }

    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try current().save(request)
    }
    func fetch(_ request: DataStoreFetchRequest) throws -> DataStoreFetchResult<DefaultSnapshot> { try current().fetch(request) }
    func fetchCount(_ request: DataStoreFetchRequest) throws -> Int { try current().fetchCount(request) }
    func fetchIdentifiers(_ request: DataStoreFetchRequest) throws -> [PersistentIdentifier] { try current().fetchIdentifiers(request) }
    func delete(_ request: DataStoreBatchDeleteRequest) throws { try current().delete(request) }

    func reopen() throws {
        close()
        store = try open()
    }

    func close() {
        if let store { shut(store) }
        store = nil
    }
}

/// Where two stores disagreed: the step, what kind of disagreement (the shrinker keeps it), and
/// both answers.
struct Disagreement: Error, CustomStringConvertible {
    var stepIndex: Int
    /// The step's kind and the shape of the difference (`save: uniqueness vs ok`,
    /// `fetch: answer`, `save: state`): the shrinker keeps a candidate only when it
    /// reproduces this.
    var signature: String
    var detail: String

    var description: String { "step \(stepIndex) (\(signature)):\n\(detail)" }
}

/// One differential run: a ``WALDataStore`` and a ``CoreDataSQLiteStore`` made fresh on
/// ``DiffSchema``, the steps applied to both, every answer and the whole state after every
/// step that writes compared in logical identifiers.
final class DiffRun {
    /// Logical identifiers ↔ one store's permanent ones.
    struct Mapping {
        var toStore: [PersistentIdentifier: PersistentIdentifier] = [:]
        /// Each permanent identifier's smallest logical name.
        var toLogical: [PersistentIdentifier: PersistentIdentifier] = [:]

        func logical(_ id: PersistentIdentifier) -> PersistentIdentifier {
            if let logical = toLogical[id] { return logical }
            // An object the harness never inserted: shown as such, so it differs from any other.
            return (try? PersistentIdentifier.identifier(for: "unmapped", entityName: id.entityName, primaryKey: .string("\(id.primaryKey)"))) ?? id
        }
    }

    /// An answer, in logical identifiers.
    enum Answer: Equatable, CustomStringConvertible {
        case failed(code: String, message: String)
        case saved(remapped: [String])
        case objects([DefaultSnapshot], related: [DefaultSnapshot])
        case count(Int)
        case identifiers([PersistentIdentifier])
        case done

        static func == (lhs: Answer, rhs: Answer) -> Bool {
            switch (lhs, rhs) {
            case let (.failed(a, _), .failed(b, _)): a == b
            case let (.saved(a), .saved(b)): a == b
            case let (.objects(a, ra), .objects(b, rb)): a == b && ra == rb
            case let (.count(a), .count(b)): a == b
            case let (.identifiers(a), .identifiers(b)): a == b
            case (.done, .done): true
            default: false
            }
        }

        var shape: String {
            switch self {
            case .failed(let code, _): code
            default: "ok"
            }
        }

        var description: String {
            switch self {
            case let .failed(code, message): "threw \(code): \(message)"
            case .saved(let remapped): "saved; inserts → " + (remapped.isEmpty ? "none" : remapped.joined(separator: ", "))
            case let .objects(snapshots, related):
                "\(snapshots.count) objects:\n" + snapshots.map { "      " + Describe.snapshot($0) }.joined(separator: "\n")
                    + (related.isEmpty ? "" : "\n    related:\n" + related.map { "      " + Describe.snapshot($0) }.joined(separator: "\n"))
            case .count(let n): "count \(n)"
            case .identifiers(let ids): "identifiers [" + ids.map(Logical.text).joined(separator: ", ") + "]"
            case .done: "done"
            }
        }
    }

    let directory: String
    let sides: [any DiffSide]
    /// Each side's files, for checking that a refused call leaves them byte-identical.
    let sideDirectories: [String]
    private(set) var maps: [Mapping]
    /// The state both stores agree on after the last step, by logical identifier.
    private(set) var current: [PersistentIdentifier: DefaultSnapshot] = [:]
    /// Every object's last agreed snapshot, deleted ones included (the values an update of a
    /// deleted object, or a delete, sends).
    private(set) var lastKnown: [PersistentIdentifier: DefaultSnapshot] = [:]
    private var closed = false

    /// Two fresh stores under a new temporary directory; `tamper` (for the harness's own
    /// tests) wraps the second.
    init(tamper: ((any DiffSide) -> any DiffSide)? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("walstore-diff-\(UUID().uuidString)").path
        let schema = DiffSchema.schema
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let walPath = directory + "/wal"
        let sqliteDirectory = directory + "/sqlite"
        let wal = try StoreSide(
            name: "WALDataStore", open: { try WALDataStore(WALStoreConfiguration(name: "Diff", schema: schema, path: walPath)) },
            close: { try? $0.close() })
        let sqlite = try StoreSide(
            name: "CoreDataSQLiteStore",
            // synchronous=NORMAL: nothing here is about power loss, and it keeps runs fast.
            open: { try CoreDataSQLiteStore(CoreDataSQLiteConfiguration(name: "Diff", schema: schema, directory: sqliteDirectory, synchronous: .normal)) },
            close: { $0.close() })
        sides = [wal, tamper?(sqlite) ?? sqlite]
        sideDirectories = [walPath, sqliteDirectory]
        maps = [Mapping(), Mapping()]
    }

    deinit { close() }

    /// Closes both stores and removes their files.
    func close() {
        guard !closed else { return }
        closed = true
        for side in sides { side.close() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Applies `steps` in order and returns the first disagreement, if any.
    static func replay(_ steps: [Step], tamper: ((any DiffSide) -> any DiffSide)? = nil) throws -> Disagreement? {
        let run = try DiffRun(tamper: tamper)
        defer { run.close() }
        for (i, step) in steps.enumerated() {
            if let disagreement = run.execute(step, index: i) { return disagreement }
        }
        return nil
    }

    /// The canonical logical name of `id` (an alias made by an upsert maps to the object's
    /// smallest name), in the first store.
    func canonical(_ id: PersistentIdentifier) -> PersistentIdentifier? {
        maps[0].toStore[id].flatMap { maps[0].toLogical[$0] }
    }

    // MARK: Steps

    /// Applies `step` to both stores; a disagreement when their answers, or their states after
    /// a step that writes, differ.
    func execute(_ step: Step, index: Int) -> Disagreement? {
        let kind: String
        var answers: [Answer] = []
        var before: [[String: Data]] = []
        switch step {
        case .save, .batchDelete: before = sideDirectories.map(Self.files)
        case .fetch, .reopen: break
        }
        switch step {
        case .save(let save):
            kind = "save"
            let temporaries = Dictionary(uniqueKeysWithValues: save.inserted.map {
                ($0.persistentIdentifier, PersistentIdentifier.temporary(entityName: $0.persistentIdentifier.entityName))
            })
            for s in sides.indices { answers.append(self.save(save, temporaries: temporaries, side: s)) }
        case .fetch(let fetch):
            kind = fetch.kind.rawValue
            for s in sides.indices { answers.append(self.fetch(fetch, side: s)) }
        case let .batchDelete(entity, predicate):
            kind = "batchDelete"
            for s in sides.indices {
                answers.append(attempt {
                    try sides[s].delete(DataStoreBatchDeleteRequest(entityName: entity, predicate: predicate.map { map($0, side: s) }))
                    return .done
                })
            }
        case .reopen:
            kind = "reopen"
            for side in sides { answers.append(attempt { try side.reopen(); return .done }) }
        }
        if answers[0] != answers[1] && !Self.refusedForDifferentReasons(step, answers) {
            return Disagreement(
                stepIndex: index, signature: "\(kind): \(answers[0].shape) vs \(answers[1].shape)",
                detail: "  \(step)\n  \(sides[0].name): \(answers[0])\n  \(sides[1].name): \(answers[1])")
        }
        // A refused save or batch delete leaves the store's files byte-identical.
        for (s, answer) in answers.enumerated() where !before.isEmpty {
            guard case .failed = answer else { continue }
            let after = Self.files(sideDirectories[s])
            if after != before[s] {
                let changed = Set(after.keys).union(before[s].keys).filter { after[$0] != before[s][$0] }.sorted()
                return Disagreement(
                    stepIndex: index, signature: "\(kind): \(sides[s].name) refused and changed its files",
                    detail: "  \(step)\n  \(sides[s].name): \(answer)\n  and changed \(changed.joined(separator: ", "))")
            }
        }
        if case .fetch = step { return nil }
        return compareStates(step, index: index, kind: kind)
    }

    /// Whether both stores refused a save of several objects, or a batch delete, with different
    /// codes: such a request may break two rules, and which one a store names depends on the
    /// order it checks objects in (WALDataStore's follows their identifiers, which differ from
    /// store to store), so both refusals count as the same answer. One object's save must be
    /// refused for the same reason.
    static func refusedForDifferentReasons(_ step: Step, _ answers: [Answer]) -> Bool {
        guard case .failed = answers[0], case .failed = answers[1] else { return false }
        switch step {
        case .save(let save): return save.itemCount > 1
        case .batchDelete: return true
        case .fetch, .reopen: return false
        }
    }

    private func attempt(_ body: () throws -> Answer) -> Answer {
        do {
            return try body()
        } catch let error as DataStoreError {
            return .failed(code: "\(error.code)", message: error.message)
        } catch {
            return .failed(code: "not a DataStoreError", message: "\(error)")
        }
    }

    private func save(_ save: SaveStep, temporaries: [PersistentIdentifier: PersistentIdentifier], side s: Int) -> Answer {
        func resolve(_ id: PersistentIdentifier) -> PersistentIdentifier? { temporaries[id] ?? maps[s].toStore[id] }
        let inserted = save.inserted.map { snapshot in
            DefaultSnapshot(persistentIdentifier: temporaries[snapshot.persistentIdentifier]!, values: map(snapshot.values, resolve))
        }
        let updated = save.updated.compactMap { change -> DefaultSnapshot? in
            guard let permanent = maps[s].toStore[change.id], let name = canonical(change.id), let base = lastKnown[name] else { return nil }
            var values = base.values
            for (key, value) in change.values { values[key] = value }
            return DefaultSnapshot(persistentIdentifier: permanent, values: map(values, resolve))
        }
        let deleted = save.deleted.compactMap { id -> DefaultSnapshot? in
            guard let permanent = maps[s].toStore[id] else { return nil }
            let values = canonical(id).flatMap { lastKnown[$0]?.values } ?? [:]
            return DefaultSnapshot(persistentIdentifier: permanent, values: map(values, resolve))
        }
        return attempt {
            let result = try sides[s].save(DataStoreSaveChangesRequest(inserted: inserted, updated: updated, deleted: deleted))
            var remapped: [String] = []
            for snapshot in save.inserted {
                let logical = snapshot.persistentIdentifier
                guard let permanent = result.remappedIdentifiers[temporaries[logical]!] else {
                    remapped.append("\(Logical.text(logical)) → not remapped")
                    continue
                }
                maps[s].toStore[logical] = permanent
                if let earlier = maps[s].toLogical[permanent], earlier < logical {
                    remapped.append("\(Logical.text(logical)) → \(Logical.text(earlier))")
                } else {
                    maps[s].toLogical[permanent] = logical
                    remapped.append("\(Logical.text(logical)) → new")
                }
            }
            return .saved(remapped: remapped)
        }
    }

    private func fetch(_ fetch: FetchStep, side s: Int) -> Answer {
        var descriptor = fetch.descriptor
        descriptor.predicate = descriptor.predicate.map { map($0, side: s) }
        let request = DataStoreFetchRequest(descriptor: descriptor)
        let ordered = !descriptor.sortBy.isEmpty
        return attempt {
            switch fetch.kind {
            case .fetch:
                let result = try sides[s].fetch(request)
                var snapshots = result.fetchedSnapshots.map { logical($0, side: s) }
                if !ordered { snapshots.sort { $0.persistentIdentifier < $1.persistentIdentifier } }
                let related = result.relatedSnapshots.values.map { logical($0, side: s) }.sorted { $0.persistentIdentifier < $1.persistentIdentifier }
                return .objects(snapshots, related: related)
            case .fetchCount:
                return .count(try sides[s].fetchCount(request))
            case .fetchIdentifiers:
                var ids = try sides[s].fetchIdentifiers(request).map { maps[s].logical($0) }
                if !ordered { ids.sort() }
                return .identifiers(ids)
            }
        }
    }

    /// Every file under `directory`, by relative path, with its bytes.
    static func files(_ directory: String) -> [String: Data] {
        var result: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return result }
        while let path = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            result[path] = FileManager.default.contents(atPath: directory + "/" + path) ?? Data()
        }
        return result
    }

    // MARK: States

    /// Every object of every entity, fetched whole, in logical identifiers.
    private func state(side s: Int) throws -> [PersistentIdentifier: DefaultSnapshot] {
        var state: [PersistentIdentifier: DefaultSnapshot] = [:]
        for entity in DiffSchema.entityNames {
            let descriptor = FetchDescriptor(entityName: entity, includesSubentities: false)
            for snapshot in try sides[s].fetch(DataStoreFetchRequest(descriptor: descriptor)).fetchedSnapshots {
                let logical = logical(snapshot, side: s)
                state[logical.persistentIdentifier] = logical
            }
        }
        return state
    }

    private func compareStates(_ step: Step, index: Int, kind: String) -> Disagreement? {
        var states: [[PersistentIdentifier: DefaultSnapshot]] = []
        for s in sides.indices {
            do {
                states.append(try state(side: s))
            } catch {
                return Disagreement(stepIndex: index, signature: "\(kind): state unreadable", detail: "  \(step)\n  \(sides[s].name) fails to fetch its state: \(error)")
            }
        }
        if states[0] != states[1] {
            var lines: [String] = []
            for id in Set(states[0].keys).union(states[1].keys).sorted() where states[0][id] != states[1][id] {
                lines.append("    \(Logical.text(id)):")
                for s in sides.indices {
                    lines.append("      \(sides[s].name): " + (states[s][id].map(Describe.snapshot) ?? "absent"))
                }
            }
            return Disagreement(
                stepIndex: index, signature: "\(kind): state",
                detail: "  \(step)\n  the states after it differ:\n" + lines.joined(separator: "\n"))
        }
        current = states[0]
        for (id, snapshot) in current { lastKnown[id] = snapshot }
        return nil
    }

    // MARK: Logical ↔ store identifiers

    /// `values` with each logical reference replaced by `resolve`'s identifier; references it
    /// cannot resolve (an insert a shrunk program no longer makes) are dropped.
    private func map(_ values: [String: PropertyValue], _ resolve: (PersistentIdentifier) -> PersistentIdentifier?) -> [String: PropertyValue] {
        values.mapValues { value in
            switch value {
            case .toOne(let id?): .toOne(resolve(id))
            case .toMany(let ids): .toMany(ids.compactMap(resolve))
            default: value
            }
        }
    }

    /// `predicate` with its logical identifiers replaced by store `s`'s.
    private func map(_ predicate: FetchPredicate, side s: Int) -> FetchPredicate {
        func resolve(_ id: PersistentIdentifier) -> PersistentIdentifier? { maps[s].toStore[id] }
        switch predicate {
        case let .compare(path, comparison, .toOne(id?)):
            // An object the program never made: an identifier no store holds.
            return .compare(path: path, comparison, value: .toOne(resolve(id) ?? id))
        case .identifierIn(let ids): return .identifierIn(Set(ids.compactMap(resolve)))
        case .and(let parts): return .and(parts.map { map($0, side: s) })
        case .or(let parts): return .or(parts.map { map($0, side: s) })
        case .not(let inner): return .not(map(inner, side: s))
        case let .any(path, inner): return .any(path: path, map(inner, side: s))
        case let .all(path, inner): return .all(path: path, map(inner, side: s))
        default: return predicate
        }
    }

    /// A store's snapshot in logical identifiers, with to-many lists sorted and every null
    /// (absent, `.null`, `.toOne(nil)`) dropped: a property without a value is the same however
    /// a store spells it.
    private func logical(_ snapshot: DefaultSnapshot, side s: Int) -> DefaultSnapshot {
        var values: [String: PropertyValue] = [:]
        for (name, value) in snapshot.values where !value.isNull {
            switch value {
            case .toOne(let id?): values[name] = .toOne(maps[s].logical(id))
            case .toMany(let ids): values[name] = .toMany(ids.map { maps[s].logical($0) }.sorted())
            default: values[name] = value
            }
        }
        return DefaultSnapshot(persistentIdentifier: maps[s].logical(snapshot.persistentIdentifier), values: values)
    }
}
