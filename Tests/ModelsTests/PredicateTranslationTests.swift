import Foundation
import Models
import Snapshot
import Testing

/// Checks that the store, running the translation of `predicate`, selects exactly the objects
/// that evaluating the closure in memory selects, and that those are neither none nor all.
func expectSameSelection<Model: PersistentModel>(
    _ predicate: Predicate<Model>, in store: TypedBlogStore? = nil, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let blog = try store ?? TypedBlogStore()
    let all = try blog.all(Model.self)
    let expected = Set(try all.filter { try predicate.evaluate($0) }.map(\.persistentModelID))
    #expect(!expected.isEmpty && expected.count < all.count, "the predicate should select some objects but not all", sourceLocation: sourceLocation)
    let fetched = try blog.fetchIdentifiers(Models.FetchDescriptor(predicate: predicate))
    #expect(Set(fetched) == expected, sourceLocation: sourceLocation)
    #expect(fetched.count == expected.count, sourceLocation: sourceLocation)
}

@Suite struct PredicateTranslationTests {
    // MARK: Comparisons

    @Test func equalityOfAnAttributeWithAConstantSelectsWhatTheClosureSelects() throws {
        try expectSameSelection(#Predicate<Article> { $0.title == "Draft" })
        #expect(try FetchPredicate(#Predicate<Article> { $0.title == "Draft" }) == .compare(path: "title", .equal, value: .string("Draft")))
    }

    @Test func inequalityIsTheNegationOfEquality() throws {
        let published = Article.Status.published
        try expectSameSelection(#Predicate<Article> { $0.status != published })
    }

    @Test func orderingOperatorsCompareAnAttributeWithAConstant() throws {
        try expectSameSelection(#Predicate<Article> { $0.views > 40 })
        try expectSameSelection(#Predicate<Article> { $0.views >= 40 })
        try expectSameSelection(#Predicate<Article> { $0.views < 7 })
        try expectSameSelection(#Predicate<Article> { $0.views <= 7 })
        #expect(try FetchPredicate(#Predicate<Article> { $0.views > 40 }) == .compare(path: "views", .greater, value: .int(40)))
    }

    @Test func aConstantOnTheLeftFlipsTheOperator() throws {
        try expectSameSelection(#Predicate<Article> { 40 < $0.views })
        #expect(try FetchPredicate(#Predicate<Article> { 40 < $0.views }) == .compare(path: "views", .greater, value: .int(40)))
    }

    @Test func datesCompareByTime() throws {
        let cutoff = TypedBlogStore.start + TypedBlogStore.day
        try expectSameSelection(#Predicate<Article> { $0.date >= cutoff })
    }

    @Test func aRawRepresentableAttributeComparesByItsRawValue() throws {
        let (published, archived) = (Article.Status.published, Article.Status.archived)
        try expectSameSelection(#Predicate<Article> { $0.status == published })
        #expect(try FetchPredicate(#Predicate<Article> { $0.status == archived }) == .compare(path: "status", .equal, value: .string("archived")))
    }

    // MARK: Logic

    @Test func conjunctionDisjunctionAndNegationCombineConditions() throws {
        try expectSameSelection(#Predicate<Article> { $0.views > 5 && $0.isPinned })
        try expectSameSelection(#Predicate<Article> { $0.views > 100 || $0.title == "Draft" })
        try expectSameSelection(#Predicate<Article> { !($0.views > 5) })
    }

    @Test func nestedConjunctionsAreFlattened() throws {
        let translated = try FetchPredicate(#Predicate<Article> { $0.views > 1 && $0.views < 100 && $0.isPinned })
        guard case .and(let operands) = translated else { Issue.record("not a conjunction: \(translated)"); return }
        #expect(operands.count == 3)
    }

    @Test func aBooleanAttributeIsAConditionByItself() throws {
        try expectSameSelection(#Predicate<Article> { $0.isPinned })
        try expectSameSelection(#Predicate<Article> { !$0.isPinned })
    }

    // MARK: Strings

    @Test func stringContainsIsCaseSensitiveAsInSwift() throws {
        try expectSameSelection(#Predicate<Article> { $0.title.contains("swift") })
        #expect(
            try FetchPredicate(#Predicate<Article> { $0.title.contains("swift") }) == .string(path: "title", .contains, needle: "swift", options: []))
    }

    @Test func startsWithIsAPrefixMatch() throws {
        try expectSameSelection(#Predicate<Article> { $0.title.starts(with: "Swift") })
    }

    @Test func stringIsEmptyIsEqualityWithTheEmptyString() throws {
        try expectSameSelection(#Predicate<Article> { $0.title.isEmpty })
        try expectSameSelection(#Predicate<Article> { !$0.title.isEmpty })
    }

    // MARK: Nil and optionals

    @Test func equalityWithNilSelectsNulls() throws {
        try expectSameSelection(#Predicate<Article> { $0.content == nil })
        try expectSameSelection(#Predicate<Article> { $0.rating != nil })
    }

    @Test func nilCoalescingComparesTheFallbackWhereTheValueIsNull() throws {
        try expectSameSelection(#Predicate<Article> { ($0.rating ?? 0) < 2 })
        try expectSameSelection(#Predicate<Article> { ($0.rating ?? 4) >= 4 })
        try expectSameSelection(#Predicate<Article> { ($0.content ?? "").isEmpty == false })
    }

    @Test func nilCoalescingWorksInStringOperations() throws {
        try expectSameSelection(#Predicate<Article> { ($0.content ?? "none").contains("on") })
    }

    @Test func optionalChainingFollowsAToOneRelationship() throws {
        try expectSameSelection(#Predicate<Figure> { $0.post?.title == "Swift 6 released" })
        try expectSameSelection(#Predicate<Figure> { $0.post?.title != "Swift 6 released" })
        #expect(
            try FetchPredicate(#Predicate<Figure> { $0.post?.title == "x" }) == .compare(path: "post.title", .equal, value: .string("x")))
    }

    @Test func optionalChainingWithCoalescingOrdersThroughTheRelationship() throws {
        try expectSameSelection(#Predicate<Figure> { ($0.post?.views ?? 0) > 50 })
        try expectSameSelection(#Predicate<Figure> { ($0.post?.views ?? 1000) > 50 })
    }

    @Test func aForcedUnwrapReadsThroughTheRelationship() throws {
        // Every attachment but the orphan has a post; the closure would throw on the orphan,
        // the store does not select it.
        let blog = try TypedBlogStore()
        let predicate = #Predicate<Figure> { $0.post!.views > 50 }
        let attached = try blog.all(Figure.self).filter { $0.post != nil }
        let expected = Set(try attached.filter { try predicate.evaluate($0) }.map(\.persistentModelID))
        #expect(!expected.isEmpty && expected.count < attached.count)
        #expect(Set(try blog.fetchIdentifiers(Models.FetchDescriptor(predicate: predicate))) == expected)
    }

    @Test func aToOneRelationshipComparesWithNil() throws {
        try expectSameSelection(#Predicate<Figure> { $0.post == nil })
        try expectSameSelection(#Predicate<Figure> { $0.post != nil })
        #expect(try FetchPredicate(#Predicate<Figure> { $0.post == nil }) == .isNull(path: "post"))
    }

    // MARK: Identity

    @Test func equalityWithAnIdentifierIsAnIdentifierFetch() throws {
        let blog = try TypedBlogStore()
        let id = try #require(try blog.all(Article.self).first { $0.title == "Draft" }).persistentModelID
        try expectSameSelection(#Predicate<Article> { $0.persistentModelID == id }, in: blog)
        #expect(try FetchPredicate(#Predicate<Article> { $0.persistentModelID == id }) == .identifierIn([id]))
        try expectSameSelection(#Predicate<Article> { $0.persistentModelID != id }, in: blog)
    }

    @Test func aToOneRelationshipsIdentifierComparesWithAnIdentifier() throws {
        let blog = try TypedBlogStore()
        let id = try #require(try blog.all(Article.self).first { $0.title == "Swift 6 released" }).persistentModelID
        try expectSameSelection(#Predicate<Figure> { $0.post?.persistentModelID == id }, in: blog)
        try expectSameSelection(#Predicate<Figure> { $0.post?.persistentModelID == nil }, in: blog)
    }

    @Test func aConstantListOfIdentifiersIsAnIdentifierFetch() throws {
        let blog = try TypedBlogStore()
        let ids = try blog.all(Article.self).filter { $0.views > 50 }.map(\.persistentModelID)
        try expectSameSelection(#Predicate<Article> { ids.contains($0.persistentModelID) }, in: blog)
        #expect(try FetchPredicate(#Predicate<Article> { ids.contains($0.persistentModelID) }) == .identifierIn(Set(ids)))
    }

    // MARK: Membership

    @Test func aConstantListHoldingTheAttributeIsOneOf() throws {
        let titles = ["Draft", "Rust and Swift", "not a title"]
        try expectSameSelection(#Predicate<Article> { titles.contains($0.title) })
        #expect(
            try FetchPredicate(#Predicate<Article> { titles.contains($0.title) }) == .oneOf(path: "title", values: titles.map(PropertyValue.string)))
    }

    @Test func aToManyRelationshipContainingAnIdentifiedObjectIsAnAnyOverIdentifiers() throws {
        let blog = try TypedBlogStore()
        let news = try #require(try blog.all(Label.self).first { $0.name == "news" }).persistentModelID
        try expectSameSelection(#Predicate<Article> { $0.tags.contains { $0.persistentModelID == news } }, in: blog)
        #expect(
            try FetchPredicate(#Predicate<Article> { $0.tags.contains { $0.persistentModelID == news } }) == .any(path: "tags", .identifierIn([news]))
        )
    }

    @Test func containsWhereTestsTheElementsOfAToManyRelationship() throws {
        try expectSameSelection(#Predicate<Article> { $0.tags.contains { $0.name == "linux" } })
        try expectSameSelection(#Predicate<Label> { $0.posts.contains { $0.views > 100 } })
        #expect(
            try FetchPredicate(#Predicate<Article> { $0.tags.contains { $0.name == "linux" } })
                == .any(path: "tags", .compare(path: "name", .equal, value: .string("linux"))))
    }

    @Test func allSatisfyTestsEveryElement() throws {
        try expectSameSelection(#Predicate<Article> { $0.tags.allSatisfy { $0.colour != nil } })
    }

    @Test func aToManyRelationshipsIsEmptyHoldsWithoutElements() throws {
        try expectSameSelection(#Predicate<Article> { $0.tags.isEmpty })
        try expectSameSelection(#Predicate<Label> { !$0.posts.isEmpty })
    }

    @Test func aNestedRelationshipTestReadsTheInnerElement() throws {
        try expectSameSelection(#Predicate<Label> { $0.posts.contains { $0.attachments.contains { $0.caption == "penguin" } } })
    }

    // MARK: Refused

    @Test func arithmeticIsRefusedNamingTheExpression() throws {
        let error = try #require(throws: PredicateTranslationError.self) {
            try FetchPredicate(#Predicate<Article> { $0.views + 1 > 3 })
        }
        #expect(error.code == .unsupportedExpression)
        #expect(error.expression.contains("Arithmetic"))
    }

    @Test func aKeyPathThroughAComputedValueIsRefused() throws {
        let error = try #require(throws: PredicateTranslationError.self) {
            try FetchPredicate(#Predicate<Article> { $0.title.count > 3 })
        }
        #expect(error.code == .undeclaredKeyPath)
        #expect(error.expression.contains("KeyPath<String, Int>"))
    }

    @Test func comparingTwoPropertiesIsRefused() throws {
        let error = try #require(throws: PredicateTranslationError.self) {
            try FetchPredicate(#Predicate<Article> { $0.title != $0.title })
        }
        #expect(error.code == .unsupportedExpression)
        #expect(error.expression.contains("NotEqual"))
    }

    @Test func theOuterObjectInsideContainsWhereIsRefused() throws {
        let error = try #require(throws: PredicateTranslationError.self) {
            try FetchPredicate(#Predicate<Article> { post in post.tags.contains { $0.name == post.title } })
        }
        #expect(error.code == .unsupportedExpression)
    }

    @Test func containsOnAnArrayAttributeIsRefused() throws {
        let error = try #require(throws: PredicateTranslationError.self) {
            try FetchPredicate(#Predicate<Note> { $0.words.contains("swift") })
        }
        #expect(error.code == .unsupportedExpression)
        #expect(error.expression.contains("SequenceContains"))
    }

    @Test func aRefusedPredicateFailsTheTypedDescriptorsConversionAndFetchesNothing() throws {
        let descriptor = Models.FetchDescriptor<Article>(predicate: #Predicate { $0.views * 2 > 3 })
        #expect(throws: PredicateTranslationError.self) { try descriptor.storeDescriptor() }
    }
}
