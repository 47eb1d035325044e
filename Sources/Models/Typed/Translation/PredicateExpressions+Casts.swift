import Foundation
import Snapshot

// `is` and `as?` on models of an entity hierarchy: tests of the stored concrete entity.

extension PredicateExpressions.TypeCheck: StoreTranslatableExpression {
    /// `$0 is Photo`: the object's entity is `Photo` or one of its sub-entities (Swift's `is`
    /// holds for subclasses too); `$0.cover is Photo`, of the to-one's target (false without
    /// one).
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        let model = try castModel(Desired.self, in: self)
        guard case .path(let path) = try translator.term(of: input), case .object = path.target else {
            throw PredicateTranslator.unsupported(
                self, "`is` tests a model object (the predicate's object, or one reached through to-one relationships) for a model type")
        }
        let test = FetchPredicate.entity(model.entityName, includesSubentities: true)
        if path.components.isEmpty {
            try translator.checkScope(of: path, in: self)
            return .predicate(translator.guarded(path, test, whenAbsent: false))
        }
        return .predicate(translator.guarded(path, .any(path: try translator.leaf(path, in: self, guarded: true), test), whenAbsent: false))
    }
}

extension PredicateExpressions.ConditionalCast: StoreTranslatableExpression {
    /// `$0 as? Photo`: the object seen as a `Photo`, read through an optional chain
    /// (`($0 as? Photo)?.width`); the conditions made from it hold of an object of another
    /// entity as they hold of `nil` (``PredicateTranslator/guarded(_:_:whenAbsent:)``).
    func translate(with translator: inout PredicateTranslator) throws -> StoreTerm {
        let model = try castModel(Desired.self, in: self)
        guard case .path(var path) = try translator.term(of: input), case .object = path.target, path.components.isEmpty else {
            throw PredicateTranslator.unsupported(
                self, "`as?` casts the predicate's object (or the element of a contains(where:)) to a model type, as in ($0 as? Photo)?.width")
        }
        path.casts.append(model.entityName)
        path.target = .object(model)
        return .path(path)
    }
}

/// The model type a cast or type test names.
private func castModel(_ type: Any.Type, in expression: Any) throws -> any EntityModel.Type {
    guard let model = type as? any EntityModel.Type else {
        throw PredicateTranslator.unsupported(
            expression, "`is` and `as?` test for a model type (\(type) is not a model type: a PersistentModel or InheritableModel)")
    }
    return model
}
