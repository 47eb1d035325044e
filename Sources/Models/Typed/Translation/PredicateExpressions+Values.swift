import Foundation

// The leaves of a predicate: its input and the variables of closures, key paths, constants.

extension PredicateExpressions.Variable: StoreTranslatableExpression {
    /// The path the variable stands for (the fetched object, an element, an unwrapped value).
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        .path(try translator.path(of: key, in: self))
    }
}

extension PredicateExpressions.KeyPath: StoreTranslatableExpression {
    /// The declared property (or `persistentModelID`) the key path names, from its root.
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        switch try translator.term(of: root) {
        case .path(let base):
            return try translator.follow(keyPath, from: base, in: self)
        case let .coalesced(base, fallback) where keyPath == \String.isEmpty:
            return .predicate(try translator.coalescing(base, fallback, in: self) { .compare(path: $0, .equal, value: .string("")) })
        default:
            throw PredicateTranslator.unsupported(
                self, "a \(type(of: keyPath)) is read from a computed value; key paths must start from the model or a relationship")
        }
    }
}

extension PredicateExpressions.Value: StoreTranslatableExpression {
    /// The captured constant.
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        .constant(value)
    }
}

extension PredicateExpressions.NilLiteral: StoreTranslatableExpression {
    /// `nil`.
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        .constant(Output.none as Any)
    }
}
