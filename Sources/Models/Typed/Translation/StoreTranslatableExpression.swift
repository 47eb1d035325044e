import Foundation

/// A `PredicateExpression` the store can run: it translates itself, and its operands through
/// the translator, into a ``StoreTerm``.
///
/// Foundation's `PredicateExpressions` types conform in `PredicateExpressions+*.swift`; an
/// expression that does not conform is refused with
/// ``PredicateTranslationError/Code/unsupportedExpression``.
protocol StoreTranslatableExpression {
    /// This expression's translation.
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm
}
