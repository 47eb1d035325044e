import Foundation
import Models
import Snapshot
import Testing

/// `is` and `as?` in `#Predicate`s: translated to tests of the stored concrete entity, selecting
/// what evaluating the closure on the model objects selects.
@Suite struct PredicateCastTranslationTests {
    // Made in generic code, where the compiler cannot tell how a type test turns out (written
    // with the concrete type it would warn that the test always holds).
    static func isKind<Desired>(_: Desired.Type, viewsAbove views: Int) -> Predicate<Article> {
        #Predicate<Article> { $0 is Desired && $0.views > views }
    }
    static func isNotKind<Desired>(_: Desired.Type) -> Predicate<Article> { #Predicate<Article> { !($0 is Desired) || $0.isPinned } }
    static func postIsKind<Desired>(_: Desired.Type) -> Predicate<Figure> { #Predicate<Figure> { $0.post is Desired } }

    @Test func isTranslatesToATestOfTheConcreteEntityAndItsSubEntities() throws {
        try expectSameSelection(Self.isKind(Article.self, viewsAbove: 40))
        #expect(
            try FetchPredicate(Self.isKind(Article.self, viewsAbove: 40))
                == .and([.entity("Article", includesSubentities: true), .compare(path: "views", .greater, value: .int(40))]))
        try expectSameSelection(Self.isNotKind(Article.self))
    }

    @Test func isOfAToOneTestsItsTargetAndIsFalseWithoutOne() throws {
        try expectSameSelection(Self.postIsKind(Article.self))
        #expect(try FetchPredicate(Self.postIsKind(Article.self)) == .any(path: "post", .entity("Article", includesSubentities: true)))
    }

    // Casts from a generic input, for the same reason.
    static func viewsAbove40<Input: PersistentModel>(_: Input.Type, fallback: Int) -> Predicate<Input> {
        #Predicate<Input> { ($0 as? Article)?.views ?? fallback > 40 }
    }
    static func titleIsDraft<Input: PersistentModel>(_: Input.Type) -> Predicate<Input> { #Predicate<Input> { ($0 as? Article)?.title == "Draft" } }
    static func ratingIsNil<Input: PersistentModel>(_: Input.Type) -> Predicate<Input> { #Predicate<Input> { ($0 as? Article)?.rating == nil } }
    static func tagsEmpty<Input: PersistentModel>(_: Input.Type) -> Predicate<Input> { #Predicate<Input> { ($0 as? Article)?.tags.isEmpty ?? true } }

    @Test func aConditionalCastReadsTheCastObjectsPropertyOnlyOfObjectsOfThatEntity() throws {
        try expectSameSelection(Self.viewsAbove40(Article.self, fallback: 0))
        #expect(
            try FetchPredicate(Self.viewsAbove40(Article.self, fallback: 0))
                == .and([
                    .entity("Article", includesSubentities: true), .not(.isNull(path: "views")), .compare(path: "views", .greater, value: .int(40)),
                ]))
        // A fallback that satisfies the comparison: objects of other entities are selected.
        try expectSameSelection(Self.viewsAbove40(Article.self, fallback: 100))
        #expect(
            try FetchPredicate(Self.viewsAbove40(Article.self, fallback: 100))
                == .or([
                    .not(.entity("Article", includesSubentities: true)), .isNull(path: "views"), .compare(path: "views", .greater, value: .int(40)),
                ]))
        try expectSameSelection(Self.titleIsDraft(Article.self))
        try expectSameSelection(Self.ratingIsNil(Article.self))
    }

    static func isLabel<Input: PersistentModel>(_: Input.Type) -> Predicate<Input> { #Predicate<Input> { $0 is Label } }
    static func labelNamedSwift<Input: PersistentModel>(_: Input.Type) -> Predicate<Input> { #Predicate<Input> { ($0 as? Label)?.name == "swift" } }
    /// A cast of a to-one's target (`($0.post as? Desired)`), which the store cannot run.
    static func postViews<Desired: Article>(_: Desired.Type) -> Predicate<Figure> { #Predicate<Figure> { ($0.post as? Desired)?.views ?? 0 > 3 } }
    /// A type test of an attribute's value.
    static func titleIs<Desired>(_: Desired.Type) -> Predicate<Article> { #Predicate<Article> { $0.title is Desired } }

    @Test func aTestOrCastForAnUnrelatedModelSelectsNothingAsInMemory() throws {
        let blog = try TypedBlogStore()
        let articles = try blog.all(Article.self)
        let isLabel = Self.isLabel(Article.self)
        let asLabel = Self.labelNamedSwift(Article.self)
        for predicate in [isLabel, asLabel] {
            #expect(try articles.filter { try predicate.evaluate($0) }.isEmpty)
            #expect(try blog.fetchIdentifiers(Models.FetchDescriptor(predicate: predicate)).isEmpty)
        }
        #expect(try FetchPredicate(isLabel) == .entity("Label", includesSubentities: true))
    }

    @Test func whatTheStoreCannotRunAfterACastIsRefusedByTheTranslation() {
        #expect(throws: PredicateTranslationError.self) { try FetchPredicate(Self.tagsEmpty(Article.self)) }
        #expect(throws: PredicateTranslationError.self) { try FetchPredicate(Self.postViews(Article.self)) }
        #expect(throws: PredicateTranslationError.self) { try FetchPredicate(Self.titleIs(Article.self)) }
    }
}
