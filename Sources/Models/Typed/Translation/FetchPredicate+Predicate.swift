import Foundation
import Snapshot

extension FetchPredicate {
    /// The store predicate that selects the objects `predicate` holds for: Foundation's
    /// `#Predicate` translated, never evaluated in memory.
    ///
    /// **Supported subset** (each operand a declared property of `Model` — see
    /// ``PersistentModel/properties`` — or a constant captured from outside the closure):
    /// - `==`, `!=` between a property and a constant (`nil` included: `$0.content == nil`, and
    ///   `$0.post == nil` for an `Equatable` model); between the object's, or a to-one
    ///   relationship's, `persistentModelID` and an identifier (`$0.persistentModelID == id`,
    ///   `$0.post?.persistentModelID == id`). (`#Predicate` captures only `Codable` and
    ///   `Sendable` constants, so a model object itself cannot be compared with: compare
    ///   identifiers.)
    /// - `<`, `<=`, `>`, `>=` between an attribute and a constant, either way round;
    /// - `&&`, `||`, `!`, and a Boolean attribute as a condition (`$0.isDraft`);
    /// - `String.contains(_:)` and `starts(with:)` with a constant needle (case-sensitive, by
    ///   `Character`; `#Predicate` on Linux has no case-insensitive or localized string
    ///   operation to translate), and `String.isEmpty`;
    /// - `list.contains($0.property)` with a constant list (`oneOf`; `identifierIn` for
    ///   `ids.contains($0.persistentModelID)`), and `$0.tags.contains(tag)` on a to-many
    ///   relationship;
    /// - `$0.tags.contains { … }` and `$0.tags.allSatisfy { … }` on a to-many relationship
    ///   held as model references (the closure reads the element's properties), and
    ///   `$0.tags.isEmpty`;
    /// - optional chaining through to-one relationships held as model references
    ///   (`$0.post?.title == "x"`: nil when there is no target, as in Swift), `!` (read as
    ///   `?.`: an object without a target does not match, where the closure would throw),
    ///   and `property ?? constant` in a comparison or string operation.
    ///
    /// Comparisons follow ``PredicateEvaluator``: numbers by value across widths, strings by
    /// ``CanonicalStringOrder`` (Swift's `==`, and a total order), `nil` compared with `<`/`>`
    /// never matches. Anything else —
    /// arithmetic, ternaries, two properties compared with each other, a key path through a
    /// computed value (`$0.title.count`), a property the model does not declare — is refused.
    ///
    /// - Throws: ``PredicateTranslationError`` naming the refused expression;
    ///   ``Snapshot/DataStoreError/Code/typeMismatch`` for a `??` whose constant cannot be
    ///   compared as asked.
    public init<Model: EntityModel>(_ predicate: Predicate<Model>) throws {
        var translator = PredicateTranslator(input: predicate.variable)
        self = try translator.condition(of: predicate.expression)
    }
}
