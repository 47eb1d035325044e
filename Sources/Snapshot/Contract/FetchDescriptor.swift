/// What to fetch: the objects of an entity that satisfy a predicate, in an order, a window of
/// them, and which of their properties and relationships to bring.
///
/// The store applies, in this order: the entity (and, with ``includesSubentities``, its
/// sub-entities), the ``predicate``, the ``sortBy`` keys (stably), ``fetchOffset``,
/// ``fetchLimit``; then it keeps only ``propertiesToFetch`` when that is not empty, and
/// returns the objects ``relationshipKeyPathsForPrefetching`` reach as related snapshots.
public struct FetchDescriptor: Hashable, Codable, Sendable {
    /// The entity whose objects are fetched.
    public var entityName: String
    /// The condition they must satisfy; `nil` for all of them.
    public var predicate: FetchPredicate?
    /// The order, most significant key first; empty for the store's own order.
    public var sortBy: [FetchSortDescriptor]
    /// At most this many objects (none when `nil`); must not be negative.
    public var fetchLimit: Int?
    /// Objects skipped after sorting, before the limit (none when `nil`); must not be negative.
    public var fetchOffset: Int?
    /// The properties the returned snapshots hold; empty for every property.
    public var propertiesToFetch: [String]
    /// Relationship paths whose targets come back in ``DataStoreFetchResult/relatedSnapshots``.
    public var relationshipKeyPathsForPrefetching: [PropertyPath]
    /// Whether objects of the entity's sub-entities are fetched too (as SwiftData does).
    public var includesSubentities: Bool

    /// A descriptor fetching the objects of `entityName`.
    public init(
        entityName: String, predicate: FetchPredicate? = nil, sortBy: [FetchSortDescriptor] = [], fetchLimit: Int? = nil,
        fetchOffset: Int? = nil, propertiesToFetch: [String] = [], relationshipKeyPathsForPrefetching: [PropertyPath] = [],
        includesSubentities: Bool = true
    ) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.propertiesToFetch = propertiesToFetch
        self.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching
        self.includesSubentities = includesSubentities
    }
}
