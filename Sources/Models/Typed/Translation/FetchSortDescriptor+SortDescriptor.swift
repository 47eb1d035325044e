import Foundation
import Snapshot

extension FetchSortDescriptor {
    /// The store sort key for `sort`: its key path (a declared attribute of `Model`) and its
    /// order.
    ///
    /// Foundation's `SortDescriptor` exposes its key path on Linux (`keyPath`), so the typed
    /// API takes `SortDescriptor(\.date, order: .reverse)` as is. The store orders values as
    /// ``PredicateEvaluator/sorted(_:by:)`` says (strings by ``CanonicalStringOrder``, nulls
    /// first in `.forward` order); a `String` key is sorted that way whatever the descriptor's
    /// comparator.
    ///
    /// - Throws: ``PredicateTranslationError/Code/undeclaredKeyPath`` for a key path that is
    ///   not a declared attribute (a relationship, a computed property, a path through a
    ///   relationship) or a descriptor made from a comparator without a key path.
    public init<Model: EntityModel>(_ sort: SortDescriptor<Model>) throws {
        guard let keyPath = sort.keyPath else {
            throw PredicateTranslationError(
                .undeclaredKeyPath, "A SortDescriptor without a key path cannot be run by the store; sort by a declared attribute's key path.",
                expression: "\(sort)")
        }
        guard let property = Model.property(at: keyPath), case .attribute = property.kind else {
            throw PredicateTranslationError(
                .undeclaredKeyPath,
                "\(keyPath) is not an attribute among \(Model.self).properties; the store sorts by declared attributes of the fetched entity.",
                expression: "\(keyPath)")
        }
        self.init(PropertyPath(components: [property.name]), order: sort.order == .forward ? .forward : .reverse)
    }
}
