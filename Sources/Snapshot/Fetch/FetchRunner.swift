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
        guard descriptor.predicate == nil, let counts else { return try countMatches(descriptor) }
        var entities = [descriptor.entityName]
        if descriptor.includesSubentities { entities += schema.subentities(of: descriptor.entityName).map(\.name) }
        var total = 0
        for entity in entities {
            let (sum, overflow) = total.addingReportingOverflow(Int(clamping: try counts.count(of: entity)))
            total = overflow ? Int.max : sum
        }
        return Self.windowed(total, descriptor)
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
        var cursor = try mapper.records.scan(.prefix(prefix), limit: needed)
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
            throw DataStoreError(
                .invalidRequest, "fetchLimit is \(limit); pass nil for no limit, or a count of at least 0.", entityName: descriptor.entityName)
        }
        if let offset = descriptor.fetchOffset, offset < 0 {
            throw DataStoreError(.invalidRequest, "fetchOffset is \(offset); pass nil or a count of at least 0.", entityName: descriptor.entityName)
        }
        // The predicate, sort and prefetch paths against the schema, before anything is read.
        try PredicateEvaluator.check(descriptor, against: schema)
    }

    /// The store's own order (record key order), as a scan would find them: what the evaluator's
    /// stable sort breaks ties with, whichever way the candidates were found.
    private static func sortInKeyOrder(_ candidates: inout [DefaultSnapshot]) {
        candidates.sort { a, b in
            guard let x = RecordMapper.primaryKey(of: a.persistentIdentifier), let y = RecordMapper.primaryKey(of: b.persistentIdentifier) else {
                return false
            }
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
        var names = descriptor.predicate?.propertiesRead ?? []
        for sort in descriptor.sortBy {
            if let first = sort.path.components.first { names.insert(first) }
        }
        return names
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
                guard RecordFilter.isFetched(snapshot.persistentIdentifier.entityName, by: descriptor, in: schema),
                    try evaluator.evaluate(descriptor.predicate!, on: snapshot)
                else { continue }
                candidates.append(snapshot)
            }
            Self.sortInKeyOrder(&candidates)
            return (try evaluator.run(windowDescriptor, over: candidates), nil)
        }
        // Decode only what the predicate and the sort read (everything, when they read to-many
        // arrays: those are filled for every candidate then).
        let properties: Set<String>? = toMany ? nil : propertiesRead(by: descriptor)
        let filter = try RecordFilter(
            descriptor, root: root, mapper: mapper, evaluator: evaluator, properties: properties, toMany: toMany, keepsBytes: whole)
        // Matches are kept as they are found: with a sort and a limit, only the window's worth.
        var matches = FetchWindow<RecordFilter.Candidate>(sortBy: descriptor.sortBy, offset: descriptor.fetchOffset, limit: descriptor.fetchLimit)
        let rootCount = try scanCandidates(descriptor, filter) { candidate in
            matches.offer(candidate, values: candidate.sortValues, primaryKey: candidate.primaryKey)
            // Without a sort, the scan's order (record key order) is the fetch's: it stops once
            // the window is full.
            return descriptor.sortBy.isEmpty && matches.isFull
        }
        // Sorted (ties in record key order, as a scan finds them), offset and limited: as
        // PredicateEvaluator.run.
        let window = matches.window()
        guard whole else {
            // Identifiers only: nothing more is decoded.
            return (
                try window.map { c in
                    DefaultSnapshot(
                        persistentIdentifier: try c.snapshot?.persistentIdentifier ?? mapper.identifier(entity: c.entity, primaryKey: c.primaryKey))
                }, rootCount
            )
        }
        let decoded = try window.map { c in
            if properties == nil, let snapshot = c.snapshot { return snapshot }
            return try mapper.snapshot(
                ofRecord: c.bytes ?? [], key: RecordKeys.record(root: root, primaryKey: c.primaryKey), primaryKey: c.primaryKey, root: root,
                toMany: toMany)
        }
        return (decoded, rootCount)
    }

    /// How many objects `descriptor` (which has a predicate) selects: the candidates are found
    /// and matched as for a fetch, but none is kept, sorted or decoded (a record the bytes
    /// decide is not decoded at all).
    private func countMatches(_ descriptor: FetchDescriptor) throws -> Int {
        try check(descriptor)
        var unordered = descriptor
        unordered.sortBy = []
        unordered.fetchLimit = nil
        unordered.fetchOffset = nil
        if Self.identifierSet(in: descriptor.predicate) != nil {
            return Self.windowed(try candidatesWindow(unordered, toMany: needsToMany(unordered), whole: false).0.count, descriptor)
        }
        let toMany = needsToMany(unordered)
        let filter = try RecordFilter(
            unordered, root: mapper.layout.root(of: descriptor.entityName), mapper: mapper, evaluator: evaluator,
            properties: toMany ? nil : propertiesRead(by: unordered), toMany: toMany, keepsBytes: false)
        var matched = 0
        _ = try scanCandidates(unordered, filter) { _ in
            matched += 1
            return false
        }
        return Self.windowed(matched, descriptor)
    }

    /// How many of `matched` objects the window of `descriptor` holds.
    private static func windowed(_ matched: Int, _ descriptor: FetchDescriptor) -> Int {
        let available = max(0, matched - (descriptor.fetchOffset ?? 0))
        return descriptor.fetchLimit.map { min($0, available) } ?? available
    }

    /// The candidate sources: the index walk the plan chose (``IndexWalk``), or else every record
    /// of the root (``RootScan``); each record's bytes go (in place) to `filter`, and each
    /// candidate it selects to `take`, which returns whether the scan of the root (in record key
    /// order) may stop. Returns how many records the root holds when every one was read (`nil`
    /// when an index chose the candidates or the scan stopped early).
    private func scanCandidates(_ descriptor: FetchDescriptor, _ filter: RecordFilter, take: (RecordFilter.Candidate) throws -> Bool) throws -> Int? {
        if let plan = FetchPlan.make(for: descriptor, layout: mapper.layout) {
            try IndexWalk(plan: plan, mapper: mapper).run(filter, take: take)
            return nil
        }
        return try RootScan(mapper: mapper).run(filter, take: take)
    }

}
