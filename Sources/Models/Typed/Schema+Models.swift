import Snapshot

extension Schema {
    /// The schema of the entities `models` declare, in that order. The classes of an
    /// ``InheritableModel`` hierarchy listed here are the ones a fetch of their superclass
    /// makes objects of: list every class whose objects are saved.
    ///
    /// - Throws: ``Snapshot/DataStoreError/Code/invalidSchema`` naming the model and property
    ///   when a model has a stored property its `properties` list leaves out and
    ///   `transientProperties` does not name (it would never be saved); as ``Schema/init(_:)``
    ///   does (a relationship to a model type not in the list, an inverse that does not point
    ///   back, a subclass model declaring a property name it inherits).
    public init(models: [any EntityModel.Type]) throws {
        for model in models { try model.checkDeclaresEveryStoredProperty() }
        try self.init(models.map { $0.entity })
        ModelTypeRegistry.register(models)
    }

    /// The schema of the entities `models` declare, in that order.
    ///
    /// - Throws: as ``init(models:)-([any EntityModel.Type])``.
    public init(models: any EntityModel.Type...) throws {
        try self.init(models: models)
    }
}
