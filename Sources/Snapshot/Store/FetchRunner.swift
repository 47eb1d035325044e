import Engine
import Foundation

/// Answers one fetch from the engine's records: plans (index or scan), reads the candidates,
/// and runs the descriptor through ``PredicateEvaluator``. Used under the store's lock.
final class FetchRunner {
    let mapper: RecordMapper
    private var cache: [PersistentIdentifier: DefaultSnapshot?] = [:]
    var schema: Schema { mapper.schema }

    init(mapper: RecordMapper) { self.mapper = mapper }

    private lazy var evaluator = PredicateEvaluator(schema: schema) { [unowned self] id in try self.resolve(id) }

    private func resolve(_ id: PersistentIdentifier) throws -> DefaultSnapshot? {
        if let cached = cache[id] { return cached }
        let loaded = try mapper.load(id)
        cache[id] = .some(loaded)
        return loaded
    }

    func fetch(_ request: DataStoreFetchRequest) throws -> DataStoreFetchResult<DefaultSnapshot> {
        let descriptor = request.descriptor
        let selected = try select(descriptor, toMany: true)
        let related = try evaluator.related(to: selected, through: descriptor.relationshipKeyPathsForPrefetching)
        return DataStoreFetchResult(
            descriptor: descriptor, fetchedSnapshots: selected.map { $0.keeping(descriptor.propertiesToFetch) }, relatedSnapshots: related)
    }

    func identifiers(_ descriptor: FetchDescriptor) throws -> [PersistentIdentifier] {
        if descriptor.predicate == nil && descriptor.sortBy.isEmpty, let ids = try identifiersFromKeys(descriptor) { return ids }
        return try select(descriptor, toMany: needsToMany(descriptor)).map(\.persistentIdentifier)
    }

    /// Without predicate or sort, for a root without sub-entities: the identifiers of the
    /// record keys, windowed, without reading a record.
    private func identifiersFromKeys(_ descriptor: FetchDescriptor) throws -> [PersistentIdentifier]? {
        try check(descriptor)
        let root = mapper.layout.root(of: descriptor.entityName)
        guard root == descriptor.entityName, schema.subentities(of: root).isEmpty else { return nil }
        let prefix = RecordKeys.recordPrefix(root: root)
        var ids: [PersistentIdentifier] = []
        let needed = descriptor.fetchLimit.map { (descriptor.fetchOffset ?? 0) + $0 }
        for entry in try mapper.engine.scan(.prefix(prefix), limit: needed) {
            guard entry.key.count == prefix.count + 16 else { throw RecordDecodingError("a record key of the wrong length", key: entry.key) }
            ids.append(try mapper.identifier(entity: root, primaryKey: RecordKeys.uuid(from: Array(entry.key.suffix(16)))))
        }
        return Array(ids.dropFirst(descriptor.fetchOffset ?? 0))
    }

    /// Whether the descriptor reads to-many relationships of the fetched objects themselves.
    private func needsToMany(_ descriptor: FetchDescriptor) -> Bool {
        var names: Set<String> = Set(descriptor.sortBy.compactMap(\.path.components.first))
        func walk(_ p: FetchPredicate) {
            switch p {
            case .constant, .identifierIn: break
            case let .compare(path, _, _), let .string(path, _, _, _), let .isNull(path), let .oneOf(path, _): path.components.first.map { _ = names.insert($0) }
            case .and(let list), .or(let list): list.forEach(walk)
            case .not(let q): walk(q)
            case let .any(path, _), let .all(path, _): path.components.first.map { _ = names.insert($0) }
            }
        }
        descriptor.predicate.map(walk)
        let entities = [descriptor.entityName] + schema.subentities(of: descriptor.entityName).map(\.name)
        return names.contains { name in entities.contains { schema.relationship(named: name, in: $0)?.isToMany == true } }
    }

    private func check(_ descriptor: FetchDescriptor) throws {
        _ = try schema.requireEntity(named: descriptor.entityName)
        if let limit = descriptor.fetchLimit, limit < 0 {
            throw DataStoreError(.invalidRequest, "fetchLimit is \(limit); pass nil for no limit, or a count of at least 0.", entityName: descriptor.entityName)
        }
        if let offset = descriptor.fetchOffset, offset < 0 {
            throw DataStoreError(.invalidRequest, "fetchOffset is \(offset); pass nil or a count of at least 0.", entityName: descriptor.entityName)
        }
    }

    private func isFetched(_ entity: String, _ descriptor: FetchDescriptor) -> Bool {
        entity == descriptor.entityName || (descriptor.includesSubentities && schema.isEntity(entity, kindOf: descriptor.entityName))
    }

    private static func isFloatingZero(_ value: PropertyValue) -> Bool {
        switch value {
        case .double(let d): d == 0
        case .float(let f): f == 0
        case .decimal(let d): d.isZero
        default: false
        }
    }

    /// The store's own order (record key order), as a scan would find them: what the evaluator's
    /// stable sort breaks ties with, whichever way the candidates were found.
    private static func sortInKeyOrder(_ candidates: inout [DefaultSnapshot]) {
        candidates.sort { a, b in
            guard let x = RecordMapper.primaryKey(of: a.persistentIdentifier), let y = RecordMapper.primaryKey(of: b.persistentIdentifier) else { return false }
            return x.ordering(comparedTo: y) < 0
        }
    }

    /// The identifiers a predicate restricts the fetch to, when it is an identifier set or a
    /// conjunction holding one (the smallest, when several).
    private static func identifierSet(in predicate: FetchPredicate?) -> Set<PersistentIdentifier>? {
        switch predicate {
        case .identifierIn(let ids)?:
            return ids
        case .and(let list)?:
            return list.compactMap { identifierSet(in: $0) }.min { $0.count < $1.count }
        default:
            return nil
        }
    }

    /// The descriptor's window of full snapshots (to-many arrays only when `toMany`).
    ///
    /// Candidates are read without their to-many arrays unless the predicate or the sort reads
    /// them; the arrays of the window are filled in afterwards (in one scan per relationship
    /// when the window is a large part of what was read), so a filtered or limited fetch reads
    /// join records only for what it returns.
    func select(_ descriptor: FetchDescriptor, toMany: Bool) throws -> [DefaultSnapshot] {
        let evaluationNeedsToMany = toMany && needsToMany(descriptor)
        var (window, rootCount) = try candidatesWindow(descriptor, toMany: evaluationNeedsToMany)
        guard toMany && !evaluationNeedsToMany else { return window }
        let bulk = rootCount.map { window.count >= 64 && window.count * 4 >= $0 } ?? false
        try mapper.fillToMany(&window, bulk: bulk)
        return window
    }

    /// The window, and how many records the root holds when they were all read to find it
    /// (`nil` when an index or identifiers chose the candidates).
    private func candidatesWindow(_ descriptor: FetchDescriptor, toMany: Bool) throws -> ([DefaultSnapshot], Int?) {
        try check(descriptor)
        let root = mapper.layout.root(of: descriptor.entityName)
        var candidates: [DefaultSnapshot] = []
        var rootCount: Int?
        if let wanted = Self.identifierSet(in: descriptor.predicate) {
            // The fetch SwiftData makes to resolve models: one point read per identifier, never a
            // scan of the entity.
            for id in wanted {
                guard let snapshot = try mapper.load(id, toMany: toMany) else { continue }
                guard isFetched(snapshot.persistentIdentifier.entityName, descriptor),
                    try evaluator.evaluate(descriptor.predicate!, on: snapshot)
                else { continue }
                candidates.append(snapshot)
            }
            Self.sortInKeyOrder(&candidates)
        } else if let plan = FetchPlan.make(for: descriptor, layout: mapper.layout) {
            var boundary: PropertyValue?
            var boundaryKey: [UInt8]?
            for entry in try mapper.engine.scan(plan.range, reverse: plan.reverse) {
                // Past the window's last value (read from the key, not the record): done.
                if let boundaryKey, !entry.key.starts(with: boundaryKey) { break }
                guard entry.key.count > 16, let entity = String(validating: try entry.value(), as: UTF8.self) else {
                    throw RecordDecodingError("a malformed index entry", key: entry.key)
                }
                guard isFetched(entity, descriptor) else { continue }
                let pk = RecordKeys.uuid(from: Array(entry.key.suffix(16)))
                guard let record = try mapper.readRecord(root: root, primaryKey: pk) else {
                    throw RecordDecodingError("an index entry of a record that is missing", key: entry.key)
                }
                let snapshot = try mapper.snapshot(
                    of: record, key: RecordKeys.record(root: root, primaryKey: pk), primaryKey: pk, root: root, toMany: toMany)
                guard try descriptor.predicate.map({ try evaluator.evaluate($0, on: snapshot) }) ?? true else { continue }
                if let topK = plan.topK {
                    let value = try evaluator.value(at: topK.sort.path, of: snapshot)
                    if let boundary, PredicateEvaluator.compareKeys([value], [boundary], [topK.sort]) != 0 { break }
                    candidates.append(snapshot)
                    if candidates.count == topK.needed {
                        boundary = value
                        // -0.0 and 0.0 tie with two encodings: compare those by reading records.
                        if !Self.isFloatingZero(value) { boundaryKey = plan.prefix + OrderedValueEncoding.encoded([value]) }
                    }
                } else {
                    candidates.append(snapshot)
                }
            }
            Self.sortInKeyOrder(&candidates)
        } else {
            let prefix = RecordKeys.recordPrefix(root: root)
            rootCount = 0
            for entry in try mapper.engine.scan(prefix: prefix) {
                rootCount? += 1
                guard entry.key.count == prefix.count + 16 else { throw RecordDecodingError("a record key of the wrong length", key: entry.key) }
                let bytes = try entry.value()
                mapper.countRecordRead()
                let entity = try RecordValue.entityName(in: bytes, key: entry.key)
                guard schema.entity(named: entity) != nil, mapper.layout.root(of: entity) == root else {
                    throw RecordDecodingError("a record of \(entity), which is not an entity of the root \(root)", key: entry.key)
                }
                guard isFetched(entity, descriptor) else { continue }
                let record = try RecordValue(decoding: bytes, key: entry.key)
                candidates.append(try mapper.snapshot(
                    of: record, key: entry.key, primaryKey: RecordKeys.uuid(from: Array(entry.key.suffix(16))), root: root, toMany: toMany))
            }
        }
        var whole = descriptor
        whole.propertiesToFetch = []
        return (try evaluator.run(whole, over: candidates), rootCount)
    }
}
