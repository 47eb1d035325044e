import Snapshot

extension StoreContainer {
    /// The objects `descriptor` selects, from the store of its entity (see
    /// ``WALDataStore/fetch(_:)``). Identifiers of other stores in an ``FetchPredicate/identifier(in:)``
    /// predicate are dropped before the store is asked: they name no object of that store.
    ///
    /// - Throws: ``ContainerError/Code/unknownEntity``; the store's ``DataStoreError``.
    public func fetch(_ descriptor: Snapshot.FetchDescriptor) throws -> DataStoreFetchResult<DefaultSnapshot> {
        try fetch(DataStoreFetchRequest(descriptor: descriptor))
    }

    /// As ``fetch(_:)-(Snapshot.FetchDescriptor)``, with the request's editing state.
    public func fetch(_ request: DataStoreFetchRequest) throws -> DataStoreFetchResult<DefaultSnapshot> {
        try checkUsable()
        let (store, routed) = try route(request)
        return try store.fetch(routed)
    }

    /// How many objects `descriptor` selects, counted by the store of its entity.
    public func fetchCount(_ descriptor: Snapshot.FetchDescriptor) throws -> Int {
        try checkUsable()
        let (store, routed) = try route(DataStoreFetchRequest(descriptor: descriptor))
        return try store.fetchCount(routed)
    }

    /// The identifiers of the objects `descriptor` selects, in its order.
    public func fetchIdentifiers(_ descriptor: Snapshot.FetchDescriptor) throws -> [PersistentIdentifier] {
        try checkUsable()
        let (store, routed) = try route(DataStoreFetchRequest(descriptor: descriptor))
        return try store.fetchIdentifiers(routed)
    }

    /// The stored snapshots of `identifiers`, by identifier, each read from the store that made
    /// it (identifiers are grouped by store and root entity: one fetch per group). An object
    /// that no longer exists is absent from the result.
    ///
    /// - Throws: ``ContainerError/Code/foreignIdentifier`` for a temporary identifier or one of
    ///   another container; the store's ``DataStoreError``.
    public func snapshots(for identifiers: some Sequence<PersistentIdentifier>) throws -> [PersistentIdentifier: DefaultSnapshot] {
        try checkUsable()
        var groups: [Int: [String: Set<PersistentIdentifier>]] = [:]
        for id in identifiers {
            let i = try storeIndex(for: id)
            guard let root = schema.rootEntity(of: id.entityName) else {
                throw ContainerError(.unknownEntity, "\(id) is of \(id.entityName), which the schema does not declare.", entityName: id.entityName)
            }
            groups[i, default: [:]][root.name, default: []].insert(id)
        }
        var result: [PersistentIdentifier: DefaultSnapshot] = [:]
        for (i, byRoot) in groups {
            for (root, ids) in byRoot {
                let descriptor = Snapshot.FetchDescriptor(entityName: root, predicate: .identifier(in: ids))
                for s in try stores[i].fetch(DataStoreFetchRequest(descriptor: descriptor)).fetchedSnapshots { result[s.persistentIdentifier] = s }
            }
        }
        return result
    }

    /// The store of the request's entity, and the request with identifier sets kept to that
    /// store's identifiers.
    func route(_ request: DataStoreFetchRequest) throws -> (WALDataStore, DataStoreFetchRequest) {
        let store = try self.store(forEntity: request.descriptor.entityName)
        var routed = request
        routed.descriptor.predicate = request.descriptor.predicate.map { Self.restricted($0, to: store.identifier) }
        return (store, routed)
    }

    /// `predicate` with every identifier set holding only identifiers of `store`: the same
    /// meaning for objects of that store.
    static func restricted(_ predicate: FetchPredicate, to store: String) -> FetchPredicate {
        switch predicate {
        case .identifierIn(let ids):
            return ids.allSatisfy({ $0.storeIdentifier == store }) ? predicate : .identifierIn(ids.filter { $0.storeIdentifier == store })
        case .and(let list): return .and(list.map { restricted($0, to: store) })
        case .or(let list): return .or(list.map { restricted($0, to: store) })
        case .not(let p): return .not(restricted(p, to: store))
        case let .any(path, p): return .any(path: path, restricted(p, to: store))
        case let .all(path, p): return .all(path: path, restricted(p, to: store))
        case .constant, .compare, .string, .isNull, .oneOf, .entity: return predicate
        }
    }
}
