import Foundation

// Optional chaining through to-one relationships, ?? and !.

extension PredicateExpressions.OptionalFlatMap: StoreTranslatableExpression {
    /// `$0.post?.title`: the transform's path continued from the wrapped relationship's.
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        guard case .path(let wrappedPath) = try translator.term(of: wrapped), case .object = wrappedPath.target else {
            throw PredicateTranslator.unsupported(
                self,
                "optional chaining (?.) is supported through to-one relationships held as model references; for an optional attribute use ?? or == nil"
            )
        }
        let result = try translator.binding(variable.key, to: wrappedPath) { try $0.term(of: transform) }
        guard case .path = result else {
            throw PredicateTranslator.unsupported(
                self, "after ?. the store can read a property, not compute a value; compare the property outside the chain")
        }
        return result
    }
}

extension PredicateExpressions.NilCoalesce: StoreTranslatableExpression {
    /// `path ?? constant`.
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        guard case .path(let path) = try translator.term(of: lhs), case .constant(let constant) = try translator.term(of: rhs) else {
            throw PredicateTranslator.unsupported(self, "?? is supported between a property and a constant")
        }
        return .coalesced(path, fallback: try PredicateTranslator.value(of: constant, in: self))
    }
}

extension PredicateExpressions.ForcedUnwrap: StoreTranslatableExpression {
    /// `$0.post!.title` reads as `$0.post?.title`: an object whose relationship is nil does not
    /// match the comparison (evaluating the closure in memory would throw instead).
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        try translator.term(of: inner)
    }
}
