import Snapshot

extension Schema {
    /// The schema of the entities `models` declare, in that order.
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/invalidSchema`` naming the model and property
    ///   when a model has a stored property its `properties` list leaves out and
    ///   `transientProperties` does not name (it would never be saved); as ``Schema/init(_:)``
    ///   does (a relationship to a model type not in the list, an inverse that does not point
    ///   back).
    public init(models: [any PersistentModel.Type]) throws {
        for model in models { try model.checkDeclaresEveryStoredProperty() }
        try self.init(models.map { $0.entity })
    }

    /// The schema of the entities `models` declare, in that order.
    ///
    /// - Throws: as ``init(models:)-([any PersistentModel.Type])``.
    public init(models: any PersistentModel.Type...) throws {
        try self.init(models: models)
    }
}
