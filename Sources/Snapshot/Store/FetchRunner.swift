import Engine
import Foundation

/// Answers one fetch from the engine's records: plans (index or scan), reads the candidates,
/// matches each on its record's bytes (``RecordMatcher``, format 2) or, where that cannot
/// decide, on its snapshot through ``PredicateEvaluator``, keeps the window's worth of matches
/// (``FetchWindow``), and decodes only the window. Used under the store's lock.
final class FetchRunner {
    let mapper: RecordMapper
    /// The store's per-entity counts: what a count without predicate reads (`nil`: count by
    /// reading the keys).
    let counts: EntityCounts?
    private var cache: [PersistentIdentifier: DefaultSnapshot?] = [:]
    private var matchers: [String: RecordMatcher] = [:]
    var schema: Schema { mapper.schema }

    init(mapper: RecordMapper, counts: EntityCounts? = nil) {
        self.mapper = mapper
        self.counts = counts
    }

    private lazy var evaluator = PredicateEvaluator(schema: schema) { [unowned self] id in try self.resolve(id) }

    private func resolve(_ id: PersistentIdentifier) throws -> DefaultSnapshot? {
        if let cached = cache[id] { return cached }
        let loaded = try mapper.load(id)
        cache[id] = .some(loaded)
        return loaded
    }

    /// Loads, in one batch, the objects the first relationship of each prefetch path names from
    /// `snapshots` and that are not loaded yet, so that following the paths reads no record
    /// one at a time for that step.
    private func preloadTargets(of snapshots: [DefaultSnapshot], through paths: [PropertyPath]) throws {
        var ids: [PersistentIdentifier] = []
        var seen = Set<PersistentIdentifier>()
        func want(_ id: PersistentIdentifier) {
            if cache[id] == nil, seen.insert(id).inserted { ids.append(id) }
        }
        for path in paths {
            guard let first = path.components.first else { continue }
            for snapshot in snapshots {
                switch snapshot.values[first] {
                case .toOne(let id?)?: want(id)
                case .toMany(let targets)?: targets.forEach(want)
                default: break
                }
            }
        }
        guard !ids.isEmpty else { return }
        for (id, snapshot) in try mapper.loadAll(ids, toMany: true) { cache[id] = .some(snapshot) }
    }

    func fetch(_ request: DataStoreFetchRequest) throws -> DataStoreFetchResult<DefaultSnapshot> {
        let descriptor = request.descriptor
        let selected = try select(descriptor, toMany: true)
        try preloadTargets(of: selected, through: descriptor.relationshipKeyPathsForPrefetching)
        let related = try evaluator.related(to: selected, through: descriptor.relationshipKeyPathsForPrefetching)
        return DataStoreFetchResult(
            descriptor: descriptor, fetchedSnapshots: selected.map { $0.keeping(descriptor.propertiesToFetch) }, relatedSnapshots: related)
    }

    /// How many objects the descriptor selects: without predicate, the sum of the per-entity
    /// counts (no record or key of an object is read), else the identifiers selected.
    func count(_ descriptor: FetchDescriptor) throws -> Int {
        try check(descriptor)
        guard descriptor.predicate == nil, let counts else {
            // The order matters only to a window.
            var unordered = descriptor
            if descriptor.fetchLimit == nil && descriptor.fetchOffset == nil { unordered.sortBy = [] }
            return try identifiers(unordered).count
        }
        var entities = [descriptor.entityName]
        if descriptor.includesSubentities { entities += schema.subentities(of: descriptor.entityName).map(\.name) }
        var total = 0
        for entity in entities {
            let (sum, overflow) = total.addingReportingOverflow(Int(clamping: try counts.count(of: entity)))
            total = overflow ? Int.max : sum
        }
        let available = max(0, total - (descriptor.fetchOffset ?? 0))
        return descriptor.fetchLimit.map { min($0, available) } ?? available
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

    /// One object a scan or an index found that the predicate selects: its record's bytes (to
    /// decode it whole if it is in the window), its sort values, and its snapshot decoded in
    /// part when the predicate or the sort needed one (a format-2 record matched on its bytes
    /// has none).
    private struct Candidate {
        var snapshot: DefaultSnapshot?
        let entity: String
        let key: [UInt8]
        let primaryKey: UUID
        let bytes: [UInt8]
        let sortValues: [PropertyValue]
    }

    /// The predicate compiled for the records of `entity`, once per fetch.
    private func matcher(_ predicate: FetchPredicate, for entity: String) -> RecordMatcher {
        if let m = matchers[entity] { return m }
        let m = RecordMatcher(
            predicate, entity: entity, fields: mapper.layout.recordFields(of: entity), evaluator: evaluator, storeIdentifier: mapper.storeIdentifier)
        matchers[entity] = m
        return m
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
            for (_, snapshot) in try mapper.loadAll(Array(wanted), toMany: toMany) {
                guard let snapshot else { continue }
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
        /// The candidate the record `bytes` (stored under `key`) is, when it is of an entity
        /// fetched and matches; `nil` otherwise. A format-2 record is matched on its bytes, and
        /// decoded (in part) only when the matcher or the sort cannot do without it.
        func examine(_ bytes: [UInt8], key: [UInt8], primaryKey pk: UUID) throws -> Candidate? {
            guard bytes.first == RecordReader.version else {
                let entity = try mapper.entityName(ofRecord: bytes, key: key)
                try checkRoot(entity, key)
                guard isFetched(entity, descriptor), try passesEntityTests(entity, descriptor.predicate) else { return nil }
                let snapshot = try mapper.snapshot(ofRecord: bytes, key: key, primaryKey: pk, root: root, toMany: toMany, only: properties)
                guard try descriptor.predicate.map({ try evaluator.evaluate($0, on: snapshot) }) ?? true else { return nil }
                let values = try descriptor.sortBy.map { try evaluator.value(at: $0.path, of: snapshot) }
                return Candidate(snapshot: snapshot, entity: entity, key: key, primaryKey: pk, bytes: bytes, sortValues: values)
            }
            let reader = try RecordReader(bytes, key: key)
            let entity = reader.entityName
            let recordFields = try mapper.checkedFields(of: reader, root: root)
            guard isFetched(entity, descriptor), try passesEntityTests(entity, descriptor.predicate) else { return nil }
            var snapshot: DefaultSnapshot?
            func decoded() throws -> DefaultSnapshot {
                if let snapshot { return snapshot }
                let s = try mapper.snapshot(of: reader, primaryKey: pk, root: root, toMany: toMany, only: properties)
                snapshot = s
                return s
            }
            if let predicate = descriptor.predicate {
                switch try matcher(predicate, for: entity).matches(reader, primaryKey: pk) {
                case false?: return nil
                case true?: break
                case nil: guard try evaluator.evaluate(predicate, on: try decoded()) else { return nil }
                }
            }
            let values = try descriptor.sortBy.map { sort in
                // A field of the object itself, held inline: read alone.
                if snapshot == nil, sort.path.components.count == 1, let field = recordFields.field(named: sort.path.components[0]),
                    !reader.isAsset(field.index)
                {
                    return try reader.value(of: field, storeIdentifier: mapper.storeIdentifier)
                }
                return try evaluator.value(at: sort.path, of: try decoded())
            }
            return Candidate(snapshot: snapshot, entity: entity, key: key, primaryKey: pk, bytes: bytes, sortValues: values)
        }
        func checkRoot(_ entity: String, _ key: [UInt8]) throws {
            guard schema.entity(named: entity) != nil, mapper.layout.root(of: entity) == root else {
                throw RecordDecodingError("a record of \(entity), which is not an entity of the root \(root)", key: key)
            }
        }
        // Matches are kept as they are found: with a sort and a limit, only the window's worth.
        var matches = FetchWindow<Candidate>(sortBy: descriptor.sortBy, offset: descriptor.fetchOffset, limit: descriptor.fetchLimit)
        func offer(_ c: Candidate) {
            matches.offer(c, values: c.sortValues, primaryKey: c.primaryKey)
        }
        var rootCount: Int?
        if let plan = FetchPlan.make(for: descriptor, layout: mapper.layout) {
            // Index entries name the object's concrete entity: read only when the root has
            // sub-entities to tell apart.
            let rootOnly = schema.subentities(of: root).isEmpty
            var boundary: PropertyValue?
            var boundaryKey: [UInt8]?
            walk: for range in plan.reverse ? plan.ranges.reversed() : plan.ranges {
                var cursor = try mapper.engine.scan(range, reverse: plan.reverse)
                while let entry = try cursor.next() {
                    // Past the window's last value (read from the key, not the record): done.
                    if let boundaryKey, !entry.key.starts(with: boundaryKey) { break walk }
                    guard entry.key.count > 16 else { throw RecordDecodingError("a malformed index entry", key: entry.key) }
                    if !rootOnly {
                        guard let entity = String(validating: try entry.value(), as: UTF8.self) else {
                            throw RecordDecodingError("a malformed index entry", key: entry.key)
                        }
                        guard isFetched(entity, descriptor), try passesEntityTests(entity, descriptor.predicate) else { continue }
                    } else if try !passesEntityTests(root, descriptor.predicate) {
                        break walk
                    }
                    let pk = RecordKeys.uuid(from: Array(entry.key.suffix(16)))
                    let key = RecordKeys.record(root: root, primaryKey: pk)
                    guard let bytes = try mapper.engine.value(forKey: key) else {
                        throw RecordDecodingError("an index entry of a record that is missing", key: entry.key)
                    }
                    mapper.countRecordRead()
                    guard let found = try examine(bytes, key: key, primaryKey: pk) else { continue }
                    if let topK = plan.topK {
                        let value = found.sortValues[0]
                        if let boundary, PredicateEvaluator.compareKeys([value], [boundary], [topK.sort]) != 0 { break walk }
                        offer(found)
                        if boundary == nil && matches.count == topK.needed {
                            boundary = value
                            // -0.0 and 0.0 tie with two encodings: compare those by reading records.
                            if !Self.isFloatingZero(value) { boundaryKey = plan.prefix + OrderedValueEncoding.encoded([value]) }
                        }
                    } else {
                        offer(found)
                    }
                }
            }
        } else {
            let prefix = RecordKeys.recordPrefix(root: root)
            rootCount = 0
            var cursor = try mapper.engine.scan(prefix: prefix)
            while let entry = try cursor.next() {
                rootCount? += 1
                guard entry.key.count == prefix.count + 16 else { throw RecordDecodingError("a record key of the wrong length", key: entry.key) }
                let bytes = try entry.value()
                mapper.countRecordRead()
                guard let found = try examine(bytes, key: entry.key, primaryKey: RecordKeys.uuid(from: Array(entry.key.suffix(16)))) else { continue }
                offer(found)
                // Without a sort, the scan's order (record key order) is the fetch's: it stops
                // once the window is full.
                if descriptor.sortBy.isEmpty && matches.isFull {
                    rootCount = nil
                    break
                }
            }
        }
        // Sorted (ties in record key order, as a scan finds them), offset and limited: as
        // PredicateEvaluator.run.
        let window = matches.window()
        guard whole else {
            // Identifiers only: nothing more is decoded.
            return (try window.map { c in
                DefaultSnapshot(persistentIdentifier: try c.snapshot?.persistentIdentifier ?? mapper.identifier(entity: c.entity, primaryKey: c.primaryKey))
            }, rootCount)
        }
        let decoded = try window.map { c in
            if properties == nil, let snapshot = c.snapshot { return snapshot }
            return try mapper.snapshot(ofRecord: c.bytes, key: c.key, primaryKey: c.primaryKey, root: root, toMany: toMany)
        }
        return (decoded, rootCount)
    }
}
