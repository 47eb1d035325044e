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
        return try select(descriptor, toMany: needsToMany(descriptor), whole: false).map(\.persistentIdentifier)
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
        var cursor = try mapper.engine.scan(.prefix(prefix), limit: needed)
        while let entry = try cursor.next() {
            guard entry.key.count == prefix.count + 16 else { throw RecordDecodingError("a record key of the wrong length", key: entry.key) }
            ids.append(try mapper.identifier(entity: root, primaryKey: RecordKeys.uuid(from: Array(entry.key.suffix(16)))))
        }
        return Array(ids.dropFirst(descriptor.fetchOffset ?? 0))
    }

    /// Whether the descriptor reads to-many relationships of the fetched objects themselves.
    private func needsToMany(_ descriptor: FetchDescriptor) -> Bool {
        let names = propertiesRead(by: descriptor)
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
        // The predicate, sort and prefetch paths against the schema, before anything is read.
        try PredicateEvaluator.check(descriptor, against: schema)
    }

    private func isFetched(_ entity: String, _ descriptor: FetchDescriptor) -> Bool {
        entity == descriptor.entityName || (descriptor.includesSubentities && schema.isEntity(entity, kindOf: descriptor.entityName))
    }

    /// Whether an object of the concrete entity `entity` passes the entity tests among the
    /// predicate's top-level conjuncts: known from a record's or an index entry's entity name,
    /// before the object is decoded.
    private func passesEntityTests(_ entity: String, _ predicate: FetchPredicate?) throws -> Bool {
        let conjuncts: [FetchPredicate]
        switch predicate {
        case .and(let list)?: conjuncts = list
        case let p?: conjuncts = [p]
        case nil: return true
        }
        for case let .entity(name, includesSubentities) in conjuncts
        where try !evaluator.isOfEntity(entity, name, includesSubentities: includesSubentities) {
            return false
        }
        return true
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

    /// The descriptor's window of full snapshots (to-many arrays only when `toMany`); with
    /// `whole` false, snapshots that may hold only the properties the predicate and sort read
    /// (for callers that want identifiers).
    ///
    /// Candidates found by a scan or an index are decoded with only the properties the
    /// predicate and sort read (to-many arrays only when they read them); the window is then
    /// decoded whole from the bytes already read, and its to-many arrays filled in (in one
    /// scan per relationship when the window is a large part of the root), so a filtered or
    /// limited fetch decodes, and reads join records for, only what it returns.
    func select(_ descriptor: FetchDescriptor, toMany: Bool, whole: Bool = true) throws -> [DefaultSnapshot] {
        let evaluationNeedsToMany = toMany && needsToMany(descriptor)
        var (window, rootCount) = try candidatesWindow(descriptor, toMany: evaluationNeedsToMany, whole: whole)
        guard whole, toMany && !evaluationNeedsToMany else { return window }
        let bulk = rootCount.map { window.count >= 64 && window.count * 4 >= $0 } ?? false
        try mapper.fillToMany(&window, bulk: bulk)
        return window
    }

    /// The properties the predicate and the sort read on the fetched objects themselves (the
    /// first component of each path).
    private func propertiesRead(by descriptor: FetchDescriptor) -> Set<String> {
        var names: Set<String> = Set(descriptor.sortBy.compactMap(\.path.components.first))
        func walk(_ p: FetchPredicate) {
            switch p {
            case .constant, .identifierIn: break
            case let .compare(path, _, _), let .string(path, _, _, _), let .isNull(path), let .oneOf(path, _): path.components.first.map { _ = names.insert($0) }
            case .and(let list), .or(let list): list.forEach(walk)
            case .not(let q): walk(q)
            case let .any(path, _), let .all(path, _): path.components.first.map { _ = names.insert($0) }
            case .entity: break
            }
        }
        descriptor.predicate.map(walk)
        return names
    }

    /// One object a scan or an index found: decoded in part, and the bytes to decode it whole.
    private struct Candidate {
        var snapshot: DefaultSnapshot
        let key: [UInt8]
        let primaryKey: UUID
        let bytes: [UInt8]
    }

    /// The window, and how many records the root holds when they were all read to find it
    /// (`nil` when an index or identifiers chose the candidates).
    private func candidatesWindow(_ descriptor: FetchDescriptor, toMany: Bool, whole: Bool) throws -> ([DefaultSnapshot], Int?) {
        try check(descriptor)
        let root = mapper.layout.root(of: descriptor.entityName)
        var windowDescriptor = descriptor
        windowDescriptor.propertiesToFetch = []
        if let wanted = Self.identifierSet(in: descriptor.predicate) {
            // The fetch SwiftData makes to resolve models: one point read per identifier, never a
            // scan of the entity.
            var candidates: [DefaultSnapshot] = []
            for id in wanted {
                guard let snapshot = try mapper.load(id, toMany: toMany) else { continue }
                guard isFetched(snapshot.persistentIdentifier.entityName, descriptor),
                    try evaluator.evaluate(descriptor.predicate!, on: snapshot)
                else { continue }
                candidates.append(snapshot)
            }
            Self.sortInKeyOrder(&candidates)
            return (try evaluator.run(windowDescriptor, over: candidates), nil)
        }
        // Decode only what the predicate and the sort read (everything, when they read to-many
        // arrays: those are filled for every candidate then).
        let read = propertiesRead(by: descriptor)
        let properties: Set<String>? = toMany ? nil : read
        func candidate(_ bytes: [UInt8], key: [UInt8], primaryKey pk: UUID) throws -> Candidate {
            Candidate(
                snapshot: try mapper.snapshot(ofRecord: bytes, key: key, primaryKey: pk, root: root, toMany: toMany, only: properties),
                key: key, primaryKey: pk, bytes: bytes)
        }
        var candidates: [Candidate] = []
        var rootCount: Int?
        var evaluated = false
        if let plan = FetchPlan.make(for: descriptor, layout: mapper.layout) {
            // Index entries name the object's concrete entity: read only when the root has
            // sub-entities to tell apart.
            let rootOnly = schema.subentities(of: root).isEmpty
            var boundary: PropertyValue?
            var boundaryKey: [UInt8]?
            var cursor = try mapper.engine.scan(plan.range, reverse: plan.reverse)
            while let entry = try cursor.next() {
                // Past the window's last value (read from the key, not the record): done.
                if let boundaryKey, !entry.key.starts(with: boundaryKey) { break }
                guard entry.key.count > 16 else { throw RecordDecodingError("a malformed index entry", key: entry.key) }
                if !rootOnly {
                    guard let entity = String(validating: try entry.value(), as: UTF8.self) else {
                        throw RecordDecodingError("a malformed index entry", key: entry.key)
                    }
                    guard isFetched(entity, descriptor), try passesEntityTests(entity, descriptor.predicate) else { continue }
                } else if try !passesEntityTests(root, descriptor.predicate) {
                    break
                }
                let pk = RecordKeys.uuid(from: Array(entry.key.suffix(16)))
                let key = RecordKeys.record(root: root, primaryKey: pk)
                guard let bytes = try mapper.engine.value(forKey: key) else {
                    throw RecordDecodingError("an index entry of a record that is missing", key: entry.key)
                }
                mapper.countRecordRead()
                let found = try candidate(bytes, key: key, primaryKey: pk)
                guard isFetched(found.snapshot.persistentIdentifier.entityName, descriptor),
                    try descriptor.predicate.map({ try evaluator.evaluate($0, on: found.snapshot) }) ?? true
                else { continue }
                if let topK = plan.topK {
                    let value = try evaluator.value(at: topK.sort.path, of: found.snapshot)
                    if let boundary, PredicateEvaluator.compareKeys([value], [boundary], [topK.sort]) != 0 { break }
                    candidates.append(found)
                    if candidates.count == topK.needed {
                        boundary = value
                        // -0.0 and 0.0 tie with two encodings: compare those by reading records.
                        if !Self.isFloatingZero(value) { boundaryKey = plan.prefix + OrderedValueEncoding.encoded([value]) }
                    }
                } else {
                    candidates.append(found)
                }
            }
            // The store's own order (record key order) breaks the sort's ties, as a scan would.
            candidates.sort { $0.primaryKey.ordering(comparedTo: $1.primaryKey) < 0 }
            evaluated = true
        } else {
            let prefix = RecordKeys.recordPrefix(root: root)
            rootCount = 0
            var cursor = try mapper.engine.scan(prefix: prefix)
            while let entry = try cursor.next() {
                rootCount? += 1
                guard entry.key.count == prefix.count + 16 else { throw RecordDecodingError("a record key of the wrong length", key: entry.key) }
                let bytes = try entry.value()
                mapper.countRecordRead()
                let entity = try mapper.entityName(ofRecord: bytes, key: entry.key)
                guard schema.entity(named: entity) != nil, mapper.layout.root(of: entity) == root else {
                    throw RecordDecodingError("a record of \(entity), which is not an entity of the root \(root)", key: entry.key)
                }
                guard isFetched(entity, descriptor), try passesEntityTests(entity, descriptor.predicate) else { continue }
                candidates.append(try candidate(bytes, key: entry.key, primaryKey: RecordKeys.uuid(from: Array(entry.key.suffix(16)))))
            }
        }
        // Filter (unless the index walk did), sort stably, window: as PredicateEvaluator.run.
        var kept: [Int] = []
        for (i, c) in candidates.enumerated() {
            if !evaluated, let predicate = descriptor.predicate, try !evaluator.evaluate(predicate, on: c.snapshot) { continue }
            kept.append(i)
        }
        let order = try evaluator.sortedOrder(kept.map { candidates[$0].snapshot }, by: descriptor.sortBy)
        let offset = min(descriptor.fetchOffset ?? 0, order.count)
        let end = descriptor.fetchLimit.map { offset + min($0, order.count - offset) } ?? order.count
        let window = order[offset..<end].map { kept[$0] }
        guard whole, properties != nil else { return (window.map { candidates[$0].snapshot }, rootCount) }
        let decoded = try window.map { i in
            let c = candidates[i]
            return try mapper.snapshot(
                ofRecord: c.bytes, key: c.key, primaryKey: c.primaryKey, root: root, toMany: toMany)
        }
        return (decoded, rootCount)
    }
}
