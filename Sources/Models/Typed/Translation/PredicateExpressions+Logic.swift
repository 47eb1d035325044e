import Foundation
import Snapshot

// &&, ||, !, and the comparisons.

extension PredicateExpressions.Conjunction: StoreTranslatableExpression {
    /// `.and` of both sides (nested conjunctions flattened).
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        var operands: [FetchPredicate] = []
        for side in [try translator.condition(of: lhs), try translator.condition(of: rhs)] {
            if case .and(let inner) = side { operands += inner } else { operands.append(side) }
        }
        return .predicate(.and(operands))
    }
}

extension PredicateExpressions.Disjunction: StoreTranslatableExpression {
    /// `.or` of both sides (nested disjunctions flattened).
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        var operands: [FetchPredicate] = []
        for side in [try translator.condition(of: lhs), try translator.condition(of: rhs)] {
            if case .or(let inner) = side { operands += inner } else { operands.append(side) }
        }
        return .predicate(.or(operands))
    }
}

extension PredicateExpressions.Negation: StoreTranslatableExpression {
    /// `.not` of the operand.
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        .predicate(.not(try translator.condition(of: wrapped)))
    }
}

extension PredicateExpressions.Equal: StoreTranslatableExpression {
    /// A property equal to a constant; an object's identity equal to a model or identifier.
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        .predicate(try translator.equality(try translator.term(of: lhs), try translator.term(of: rhs), in: self))
    }
}

extension PredicateExpressions.NotEqual: StoreTranslatableExpression {
    /// The negation of the equality.
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        .predicate(.not(try translator.equality(try translator.term(of: lhs), try translator.term(of: rhs), in: self)))
    }
}

extension PredicateExpressions.Comparison: StoreTranslatableExpression {
    /// An attribute ordered against a constant (either side).
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        let comparison: FetchPredicate.Comparison =
            switch op {
            case .lessThan: .less
            case .lessThanOrEqual: .lessOrEqual
            case .greaterThan: .greater
            case .greaterThanOrEqual: .greaterOrEqual
            @unknown default: throw PredicateTranslator.unsupported(self, "the comparison operator \(op) is not one the store knows")
            }
        return .predicate(try translator.ordering(try translator.term(of: lhs), comparison, try translator.term(of: rhs), in: self))
    }
}
