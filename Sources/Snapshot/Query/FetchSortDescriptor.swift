/// One key of a fetch's order: a property path and a direction.
///
/// A fetch sorts by its descriptors in turn (the first most significant), stably: objects
/// equal on every key keep the order the store found them in. Values order as
/// ``PropertyValue``'s total order (numbers by numeric value alone), so **nulls come first in `.forward` order and last in
/// `.reverse`**; see ``PredicateEvaluator/sorted(_:by:)``.
public struct FetchSortDescriptor: Hashable, Codable, Sendable {
    /// The direction of a sort, as Foundation's `SortOrder`.
    public enum Order: String, Hashable, Codable, Sendable {
        /// Ascending.
        case forward
        /// Descending.
        case reverse
    }

    /// The value sorted by (an attribute, or one reached through to-one relationships). A path
    /// through a to-many relationship has no one value to sort by: a fetch refuses it
    /// (``DataStoreError/Code/invalidPredicate`` naming the entity and the relationship).
    public var path: PropertyPath
    /// The direction.
    public var order: Order

    /// A sort by `path` in `order` (ascending by default).
    public init(_ path: PropertyPath, order: Order = .forward) {
        self.path = path
        self.order = order
    }
}
