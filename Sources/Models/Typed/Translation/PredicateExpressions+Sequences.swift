import Foundation
import Snapshot

// String.contains(_:), starts(with:), Sequence.contains(_:), contains(where:), allSatisfy(_:).

extension PredicateExpressions.CollectionContainsCollection: StoreTranslatableExpression {
    /// `$0.title.contains("swift")`: the string attribute contains the constant.
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        .predicate(try translator.stringMatch(try translator.term(of: base), .contains, try translator.term(of: other), in: self))
    }
}

extension PredicateExpressions.SequenceStartsWith: StoreTranslatableExpression {
    /// `$0.title.starts(with: "Swift")`: the string attribute begins with the constant.
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        .predicate(try translator.stringMatch(try translator.term(of: base), .beginsWith, try translator.term(of: prefix), in: self))
    }
}

extension PredicateExpressions.SequenceContains: StoreTranslatableExpression {
    /// `names.contains($0.name)` (a constant list holds the property: `oneOf`, or
    /// `identifierIn` for the object's identity), or `$0.tags.contains(tag)` (a to-many
    /// relationship holds the object or identifier).
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        switch (try translator.term(of: sequence), try translator.term(of: element)) {
        case let (.constant(list), .path(path)):
            let values = try PredicateTranslator.elements(of: list, in: self).map { try PredicateTranslator.value(of: $0, in: self) }
            switch path.target {
            case .identifier where path.components.isEmpty, .object where path.components.isEmpty:
                try translator.checkScope(of: path, in: self)
                return .predicate(.identifierIn(Set(values.compactMap { if case .toOne(let id?) = $0 { id } else { nil } })))
            case .identifier, .object, .reference, .attribute:
                return .predicate(.oneOf(path: try translator.leaf(path, in: self), values: values))
            case .objects, .references:
                throw PredicateTranslator.unsupported(self, "a constant list cannot hold a to-many relationship")
            }
        case let (.path(path), .constant(constant)):
            switch path.target {
            case .objects, .references:
                guard case .toOne(let id?) = try PredicateTranslator.value(of: constant, in: self) else {
                    return .predicate(.constant(false))
                }
                return .predicate(.any(path: try translator.leaf(path, in: self), .identifierIn([id])))
            default:
                throw PredicateTranslator.unsupported(
                    self, "contains(_:) on \(path.dotted) needs a to-many relationship; the store cannot look inside an array attribute")
            }
        default:
            throw PredicateTranslator.unsupported(
                self, "contains(_:) is supported between a constant list and a property, or a to-many relationship and a constant")
        }
    }
}

extension PredicateExpressions.SequenceContainsWhere: StoreTranslatableExpression {
    /// `$0.tags.contains { $0.name == "news" }`: `.any` over the to-many relationship.
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        let (path, model) = try toManyPath(try translator.term(of: sequence), in: self, translator: translator)
        let test = try translator.elementScope(variable.key, model: model) { try $0.condition(of: self.test) }
        return .predicate(.any(path: path, test))
    }
}

extension PredicateExpressions.SequenceAllSatisfy: StoreTranslatableExpression {
    /// `$0.tags.allSatisfy { $0.name != "draft" }`: `.all` over the to-many relationship.
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        let (path, model) = try toManyPath(try translator.term(of: sequence), in: self, translator: translator)
        let test = try translator.elementScope(variable.key, model: model) { try $0.condition(of: self.test) }
        return .predicate(.all(path: path, test))
    }
}

/// The property path and element model of a to-many relationship held as references.
private func toManyPath(_ term: StoreTerm, in expression: Any, translator: PredicateTranslator) throws -> (PropertyPath, any EntityModel.Type) {
    guard case .path(let path) = term, case .objects(let model) = path.target else {
        throw PredicateTranslator.unsupported(
            expression, "contains(where:) and allSatisfy are supported on to-many relationships held as model references")
    }
    return (try translator.leaf(path, in: expression), model)
}
