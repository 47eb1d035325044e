import Snapshot

extension ModelContext {
    /// The objects `descriptor` selects, as model objects registered in this context (one
    /// instance per identifier: an object already registered is returned as it is, with its
    /// in-memory values). Pending changes are included (unless the descriptor's
    /// ``FetchDescriptor/includePendingChanges`` is `false`), as
    /// ``StoreContext/fetch(_:includePendingChanges:)`` includes them, after
    /// ``processPendingChanges()``.
    ///
    /// - Throws: ``PredicateTranslationError`` for a predicate or sort the store cannot run
    ///   (nothing is evaluated in memory instead); the stores' errors.
    public func fetch<Model: EntityModel>(_ descriptor: FetchDescriptor<Model>) throws -> [Model] {
        let storeDescriptor = try descriptor.storeDescriptor()
        try processPendingChanges()
        let snapshots = try storeContext.fetch(storeDescriptor, includePendingChanges: descriptor.includePendingChanges)
        objects.add(snapshots)
        defer { objects.clearSnapshots() }
        try preloadReferences(of: snapshots, as: Model.self)
        return try snapshots.map { try objects.model(Model.self, for: $0.persistentIdentifier) }
    }

    /// Reads, one fetch per entity and level, the objects that making `snapshots` into
    /// `Model` objects will reach through relationships held as references and that are not
    /// registered yet (so making them does not read them one at a time).
    func preloadReferences<Model: EntityModel>(of snapshots: [DefaultSnapshot], as type: Model.Type) throws {
        var models: [String: any EntityModel.Type] = [:]
        var queue: [any EntityModel.Type] = [Model.self]
        while let next = queue.popLast() {
            guard models.updateValue(next, forKey: next.entityName) == nil else { continue }
            queue += next.referencedModelTypes.values
        }
        var seen = Set(snapshots.map(\.persistentIdentifier))
        var frontier = snapshots
        while !frontier.isEmpty {
            var missing: [String: Set<PersistentIdentifier>] = [:]
            for snapshot in frontier {
                let entityName = snapshot.persistentIdentifier.entityName
                guard let model = models[entityName] ?? objects.subclassModel(ofEntity: entityName, kindOf: AnyObject.self) else { continue }
                for name in model.referencedModelTypes.keys {
                    for id in snapshot[name]?.referencedIdentifiers ?? [] where seen.insert(id).inserted && !objects.isRegistered(id) {
                        missing[id.entityName, default: []].insert(id)
                    }
                }
            }
            frontier = []
            for (entityName, ids) in missing.sorted(by: { $0.key < $1.key }) {
                let loaded = try storeContext.fetch(
                    Snapshot.FetchDescriptor(entityName: entityName, predicate: .identifierIn(ids), includesSubentities: false))
                objects.add(loaded)
                frontier += loaded
            }
        }
    }

    /// How many objects `descriptor` selects, pending changes included unless the descriptor
    /// says otherwise.
    ///
    /// - Throws: as ``fetch(_:)``.
    public func fetchCount<Model: EntityModel>(_ descriptor: FetchDescriptor<Model>) throws -> Int {
        let storeDescriptor = try descriptor.storeDescriptor()
        try processPendingChanges()
        return try storeContext.fetchCount(storeDescriptor, includePendingChanges: descriptor.includePendingChanges)
    }

    /// The identifiers of the objects `descriptor` selects, in its order, pending changes
    /// included unless the descriptor says otherwise.
    ///
    /// - Throws: as ``fetch(_:)``.
    public func fetchIdentifiers<Model: EntityModel>(_ descriptor: FetchDescriptor<Model>) throws -> [PersistentIdentifier] {
        let storeDescriptor = try descriptor.storeDescriptor()
        try processPendingChanges()
        return try storeContext.fetchIdentifiers(storeDescriptor, includePendingChanges: descriptor.includePendingChanges)
    }

    /// The object `identifier` names (a temporary identifier a save replaced is followed to
    /// its permanent one), or `nil` when it does not exist or is pending deletion.
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/typeMismatch`` when the object is of another
    ///   entity than `Model`'s; the stores' errors.
    public func model<Model: EntityModel>(_ type: Model.Type, for identifier: PersistentIdentifier) throws -> Model? {
        let id = storeContext.permanentIdentifier(for: identifier) ?? identifier
        guard try storeContext.snapshot(for: id) != nil else { return nil }
        defer { objects.clearSnapshots() }
        return try objects.model(Model.self, for: id)
    }
}
