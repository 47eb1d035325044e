import Snapshot

extension StoreContext {
    /// The objects `descriptor` selects, registered in this context.
    ///
    /// With `includePendingChanges` (the default, as SwiftData's), the answer is what the
    /// store would return were the pending changes saved: pending inserts that match appear,
    /// pending deletes do not, pending updates are judged by their new values; then the sort,
    /// offset and limit are applied to the merged objects as ``PredicateEvaluator`` specifies
    /// (ties in the store's order, pending inserts last, in insertion order). When nothing
    /// pending can change the answer, the store answers alone. Without
    /// `includePendingChanges`, the store's answer is returned as it is.
    ///
    /// - Throws: the store's errors (``DataStoreError``), and the predicate's, for pending
    ///   objects too; ``ContainerError/Code/unknownEntity``.
    public func fetch(_ descriptor: Snapshot.FetchDescriptor, includePendingChanges: Bool = true) throws -> [DefaultSnapshot] {
        // Refused before anything is read, whatever is pending or stored (the store checks too).
        if schema.entity(named: descriptor.entityName) != nil { try PredicateEvaluator.check(descriptor, against: schema) }
        guard includePendingChanges, let pending = try pendingObjects(affecting: descriptor) else {
            let fetched = try container.fetch(descriptor).fetchedSnapshots
            if descriptor.propertiesToFetch.isEmpty {
                for s in fetched where updates[s.persistentIdentifier] == nil { registered[s.persistentIdentifier] = s }
            }
            return fetched
        }
        var base = descriptor
        base.propertiesToFetch = []
        base.fetchOffset = nil
        base.relationshipKeyPathsForPrefetching = []
        if Self.readsRelationships(descriptor) {
            // Pending changes to other objects can change what matches or how it sorts: judge
            // every object of the entity here.
            base.predicate = nil
            base.sortBy = []
            base.fetchLimit = nil
        } else if let limit = descriptor.fetchLimit {
            // A stored object that stays in the window is at most this many places lower in
            // the store's own answer: one place per pending update or delete above it.
            base.fetchLimit = (descriptor.fetchOffset ?? 0) + limit + pending.replaced.count
        }
        var candidates: [DefaultSnapshot] = []
        for s in try container.fetch(base).fetchedSnapshots {
            let id = s.persistentIdentifier
            if updates[id] == nil { registered[id] = s }
            if !pending.replaced.contains(id) { candidates.append(s) }
        }
        candidates += pending.changed
        candidates.sort { $0.persistentIdentifier.primaryKey < $1.persistentIdentifier.primaryKey }
        candidates += pending.inserted
        if !deletes.isEmpty { candidates = candidates.map(withoutDeletedReferences) }
        let evaluator = PredicateEvaluator(schema: schema) { [unowned self] id in try self.snapshot(for: id).map(self.withoutDeletedReferences) }
        return try evaluator.run(descriptor, over: candidates)
    }

    /// How many objects `descriptor` selects, pending changes included as ``fetch(_:includePendingChanges:)``
    /// includes them.
    public func fetchCount(_ descriptor: Snapshot.FetchDescriptor, includePendingChanges: Bool = true) throws -> Int {
        if try !includePendingChanges || pendingObjects(affecting: descriptor) == nil { return try container.fetchCount(descriptor) }
        return try fetch(descriptor).count
    }

    /// The identifiers of the objects `descriptor` selects, in its order, pending changes
    /// included as ``fetch(_:includePendingChanges:)`` includes them.
    public func fetchIdentifiers(_ descriptor: Snapshot.FetchDescriptor, includePendingChanges: Bool = true) throws -> [PersistentIdentifier] {
        if try !includePendingChanges || pendingObjects(affecting: descriptor) == nil { return try container.fetchIdentifiers(descriptor) }
        return try fetch(descriptor).map(\.persistentIdentifier)
    }

    struct Pending {
        /// Stored objects of the fetched entity whose stored state is out of date here.
        var replaced: Set<PersistentIdentifier> = []
        /// Their new states (the updated ones), and the inserts, in order.
        var changed: [DefaultSnapshot] = []
        var inserted: [DefaultSnapshot] = []
    }

    /// The pending objects of the fetched entities, or `nil` when nothing pending can change
    /// the fetch's answer.
    func pendingObjects(affecting descriptor: Snapshot.FetchDescriptor) throws -> Pending? {
        guard hasChanges else { return nil }
        _ = try requireEntity(descriptor.entityName)
        func fetched(_ id: PersistentIdentifier) -> Bool {
            id.entityName == descriptor.entityName
                || (descriptor.includesSubentities && schema.isEntity(id.entityName, kindOf: descriptor.entityName))
        }
        var pending = Pending()
        for id in updateOrder where fetched(id) {
            pending.replaced.insert(id)
            pending.changed.append(updates[id]!)
        }
        for id in deleteOrder where fetched(id) { pending.replaced.insert(id) }
        for id in insertOrder where fetched(id) { pending.inserted.append(inserts[id]!) }
        if pending.replaced.isEmpty && pending.inserted.isEmpty && !Self.readsRelationships(descriptor) { return nil }
        return pending
    }

    /// `snapshot` without references to objects pending deletion (as the store sweeps them).
    func withoutDeletedReferences(_ snapshot: DefaultSnapshot) -> DefaultSnapshot {
        var s = snapshot
        for (name, value) in snapshot.values {
            switch value {
            case .toOne(let t?) where deletes.contains(t): s.values[name] = .toOne(nil)
            case .toMany(let ids) where ids.contains(where: deletes.contains): s.values[name] = .toMany(ids.filter { !deletes.contains($0) })
            default: break
            }
        }
        return s
    }

    /// Whether the predicate or sort reads other objects (through a relationship).
    static func readsRelationships(_ descriptor: Snapshot.FetchDescriptor) -> Bool {
        func reads(_ p: FetchPredicate) -> Bool {
            switch p {
            case .constant, .identifierIn, .entity: false
            case let .compare(path, _, _), let .string(path, _, _, _), let .isNull(path), let .oneOf(path, _): path.components.count > 1
            case .and(let list), .or(let list): list.contains(where: reads)
            case .not(let q): reads(q)
            case .any, .all: true
            }
        }
        return descriptor.sortBy.contains { $0.path.components.count > 1 } || descriptor.predicate.map(reads) ?? false
    }
}
