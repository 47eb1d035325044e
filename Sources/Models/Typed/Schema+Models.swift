import Snapshot

extension Schema {
    /// The schema of the entities `models` declare, in that order.
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/invalidSchema`` as ``Schema/init(_:)`` does
    ///   (a relationship to a model type not in the list, an inverse that does not point back).
    public init(models: [any PersistentModel.Type]) throws {
        try self.init(models.map { $0.entity })
    }

    /// The schema of the entities `models` declare, in that order.
    ///
    /// - Throws: as ``init(models:)-([any PersistentModel.Type])``.
    public init(models: any PersistentModel.Type...) throws {
        try self.init(models: models)
    }
}
