/// A delete of every object of an entity that satisfies a predicate, as SwiftData's
/// `DataStoreBatchDeleteRequest`: one save, with the schema's delete rules applied.
public struct DataStoreBatchDeleteRequest: Hashable, Sendable {
    /// The entity whose objects are deleted.
    public var entityName: String
    /// The objects to delete; `nil` deletes every object of the entity.
    public var predicate: FetchPredicate?
    /// Whether objects of the entity's sub-entities are deleted too.
    public var includeSubentities: Bool
    /// Who is deleting.
    public var editingState: EditingState

    /// A batch delete of the objects of `entityName` that satisfy `predicate`.
    public init(entityName: String, predicate: FetchPredicate? = nil, includeSubentities: Bool = true, editingState: EditingState = EditingState()) {
        self.entityName = entityName
        self.predicate = predicate
        self.includeSubentities = includeSubentities
        self.editingState = editingState
    }
}
