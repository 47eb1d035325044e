import Foundation
import Snapshot

/// What to fetch of a model type, as SwiftData's `FetchDescriptor<T>`: a `#Predicate`, an order
/// of `SortDescriptor`s, a window, and the relationships whose objects to bring along.
///
/// **Naming.** The Snapshot module's untyped descriptor is also called `FetchDescriptor`. This
/// module imports Snapshot, so in a file that imports both, the unqualified name means this
/// one (a module's declarations shadow those of the modules it imports); write
/// `Snapshot.FetchDescriptor` for the other, or ``storeDescriptor()`` to get it.
///
/// ```swift
/// let recent = FetchDescriptor<Post>(
///     predicate: #Predicate { $0.title.contains("swift") },
///     sortBy: [SortDescriptor(\.date, order: .reverse)])
/// ```
public struct FetchDescriptor<Model: EntityModel>: Sendable {
    /// The condition the objects must satisfy; `nil` for all of them. Translated for the
    /// store as ``Snapshot/FetchPredicate/init(_:)`` says; never evaluated in memory.
    public var predicate: Predicate<Model>?
    /// The order, most significant key first; each key a declared attribute.
    public var sortBy: [SortDescriptor<Model>]
    /// At most this many objects (none when `nil`).
    public var fetchLimit: Int?
    /// Objects skipped after sorting, before the limit (none when `nil`).
    public var fetchOffset: Int?
    /// Relationships (declared key paths of `Model`) whose objects come back with the fetch.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<Model> & Sendable]
    /// Whether a context's fetch includes its pending changes (SwiftData's default: yes).
    public var includePendingChanges: Bool

    /// A descriptor of the objects of `Model` that `predicate` holds for, in the order of
    /// `sortBy`.
    public init(predicate: Predicate<Model>? = nil, sortBy: [SortDescriptor<Model>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = nil
        self.fetchOffset = nil
        self.relationshipKeyPathsForPrefetching = []
        self.includePendingChanges = true
    }

    /// The untyped descriptor the store runs: the model's entity (and its sub-entities), the
    /// translated predicate and sort keys, the window, the prefetched relationships' names.
    ///
    /// - Throws: ``PredicateTranslationError`` for a predicate, sort or prefetch key path the
    ///   store cannot run.
    public func storeDescriptor() throws -> Snapshot.FetchDescriptor {
        let prefetched = try relationshipKeyPathsForPrefetching.map { keyPath in
            guard let property = Model.property(at: keyPath), case .relationship = property.kind else {
                throw PredicateTranslationError(
                    .undeclaredKeyPath, "\(keyPath) is not a relationship among \(Model.self).properties; prefetch declared relationships.",
                    expression: "\(keyPath)")
            }
            return PropertyPath(components: [property.name])
        }
        return Snapshot.FetchDescriptor(
            entityName: Model.entityName, predicate: try predicate.map(FetchPredicate.init), sortBy: try sortBy.map(FetchSortDescriptor.init),
            fetchLimit: fetchLimit, fetchOffset: fetchOffset, relationshipKeyPathsForPrefetching: prefetched)
    }
}
