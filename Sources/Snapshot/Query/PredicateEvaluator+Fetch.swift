extension PredicateEvaluator {
    /// What `descriptor` selects from `snapshots`, as a store without indexes answers it: the
    /// snapshots of its entity (and sub-entities, with ``FetchDescriptor/includesSubentities``
    /// and a ``schema``), filtered by its predicate, sorted, offset, limited, and holding only
    /// ``FetchDescriptor/propertiesToFetch`` when that is not empty.
    ///
    /// - Throws: ``DataStoreError/Code/invalidRequest`` for a negative limit or offset; with a
    ///   schema, what ``check(_:against:)`` refuses, before any snapshot is read; and as
    ///   ``evaluate(_:on:)`` and ``sorted(_:by:)``.
    public func run(_ descriptor: FetchDescriptor, over snapshots: [DefaultSnapshot]) throws -> [DefaultSnapshot] {
        if let limit = descriptor.fetchLimit, limit < 0 {
            throw DataStoreError(
                .invalidRequest, "fetchLimit is \(limit); pass nil for no limit, or a count of at least 0.", entityName: descriptor.entityName)
        }
        if let offset = descriptor.fetchOffset, offset < 0 {
            throw DataStoreError(.invalidRequest, "fetchOffset is \(offset); pass nil or a count of at least 0.", entityName: descriptor.entityName)
        }
        if let schema { try Self.check(descriptor, against: schema) }
        let selected = try snapshots.filter { snapshot in
            try isOfFetchedEntity(snapshot.persistentIdentifier.entityName, descriptor)
                && (try descriptor.predicate.map { try evaluate($0, on: snapshot) } ?? true)
        }
        // Sorted, offset and limited by the window every store's fetch uses.
        return try window(selected, sortBy: descriptor.sortBy, offset: descriptor.fetchOffset, limit: descriptor.fetchLimit)
            .map { $0.keeping(descriptor.propertiesToFetch) }
    }

    /// The objects that the paths reach from `snapshots`, by identifier: what a fetch returns
    /// as related snapshots for its relationships to prefetch. Each path is read as
    /// ``targets(at:of:)`` reads it.
    public func related(to snapshots: [DefaultSnapshot], through paths: [PropertyPath]) throws -> [PersistentIdentifier: DefaultSnapshot] {
        var result: [PersistentIdentifier: DefaultSnapshot] = [:]
        for snapshot in snapshots {
            for path in paths {
                for target in try targets(at: path, of: snapshot) { result[target.persistentIdentifier] = target }
            }
        }
        return result
    }

    private func isOfFetchedEntity(_ entityName: String, _ descriptor: FetchDescriptor) throws -> Bool {
        if entityName == descriptor.entityName { return true }
        guard descriptor.includesSubentities, let schema else { return false }
        return schema.isEntity(entityName, kindOf: descriptor.entityName)
    }
}
