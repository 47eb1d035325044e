import Foundation

/// What an observed fetch reads, worked out once from its descriptor: which saves can change
/// its answer (``WALDataStore/observe(_:)`` documents the rule).
struct FetchDependencies: Sendable {
    /// The entities whose objects it returns: its entity, and its sub-entities when it includes
    /// them.
    var fetched: Set<String>
    /// The properties of the fetched objects its predicate, sort and prefetch paths read (the
    /// first component of each path).
    var read: Set<String>
    /// The entities its paths reach through relationships (and their sub-entities): any change
    /// to one of their objects re-runs the fetch.
    var related: Set<String>
    /// Whether it skips objects (an offset): a delete before its window moves the window.
    var hasOffset: Bool
    /// The predicate, when it reads only the fetched object's own values (no relationship):
    /// then it can be checked on an inserted object without reading the store.
    var ownPredicate: FetchPredicate?

    init(_ descriptor: FetchDescriptor, schema: Schema) {
        fetched = [descriptor.entityName]
        if descriptor.includesSubentities { fetched.formUnion(schema.subentities(of: descriptor.entityName).map(\.name)) }
        read = []
        related = []
        hasOffset = (descriptor.fetchOffset ?? 0) > 0
        var paths: [(entity: String, path: PropertyPath)] = []
        func walk(_ p: FetchPredicate, from entity: String, top: Bool) {
            switch p {
            case .constant, .identifierIn, .entity: break
            case let .compare(path, _, _), let .string(path, _, _, _), let .isNull(path), let .oneOf(path, _):
                paths.append((entity, path))
            case .and(let list), .or(let list): for q in list { walk(q, from: entity, top: top) }
            case .not(let q): walk(q, from: entity, top: top)
            case let .any(path, q), let .all(path, q):
                paths.append((entity, path))
                // The inner predicate reads the targets: every target entity is related.
                if let target = Self.destination(of: path, from: entity, schema: schema) { walk(q, from: target, top: false) }
            }
            if !top { related.insert(entity) }
        }
        if let predicate = descriptor.predicate { walk(predicate, from: descriptor.entityName, top: true) }
        for sort in descriptor.sortBy { paths.append((descriptor.entityName, sort.path)) }
        for path in descriptor.relationshipKeyPathsForPrefetching { paths.append((descriptor.entityName, path)) }
        for (entity, path) in paths {
            if entity == descriptor.entityName, let first = path.components.first { read.insert(first) }
            var current = entity
            for name in path.components {
                guard let r = Self.relationship(name, of: current, fetchedFrom: descriptor, schema: schema) else { break }
                current = r.destination
                related.insert(current)
            }
        }
        for entity in related { related.formUnion(schema.subentities(of: entity).map(\.name)) }
        ownPredicate = related.isEmpty ? descriptor.predicate : nil
    }

    /// The relationship `name` of `entity` (or, for the fetched entity, of one of the
    /// sub-entities it fetches).
    private static func relationship(
        _ name: String, of entity: String, fetchedFrom descriptor: FetchDescriptor, schema: Schema
    ) -> Schema.Relationship? {
        if let r = schema.relationship(named: name, in: entity) { return r }
        guard entity == descriptor.entityName else { return nil }
        return schema.subentities(of: entity).lazy.compactMap { schema.relationship(named: name, in: $0.name) }.first
    }

    private static func destination(of path: PropertyPath, from entity: String, schema: Schema) -> String? {
        var current = entity
        for name in path.components {
            guard let r = schema.relationship(named: name, in: current) else { return nil }
            current = r.destination
        }
        return current
    }

    /// Every entity a change of which is looked at for this fetch.
    var entities: Set<String> { fetched.union(related) }

    /// Whether `change` of `save` can change the answer of a fetch that last returned `last`
    /// (by primary key). An insert the predicate rejects (`evaluator` checks it on the new
    /// object, when the predicate reads only the object's own values) cannot.
    func isAffected(by change: HistoryRecord.Change, of save: ObservedSave, last: Set<UUID>, evaluator: PredicateEvaluator) -> Bool {
        if related.contains(change.entity) { return true }
        guard fetched.contains(change.entity) else { return false }
        switch change.kind {
        case .insert:
            guard let predicate = ownPredicate, let snapshot = save.inserted[change.primaryKey] else { return true }
            return (try? evaluator.evaluate(predicate, on: snapshot)) ?? true
        case .delete: return hasOffset || last.contains(change.primaryKey)
        case .update: return last.contains(change.primaryKey) || change.updated.contains(where: read.contains)
        }
    }
}
