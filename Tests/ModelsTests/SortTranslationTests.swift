import Foundation
import Models
import Snapshot
import Testing

@Suite struct SortTranslationTests {
    /// The store's order for `sortBy` equals the order `sorted(using:)` gives in memory.
    func expectSameOrder(_ sortBy: [SortDescriptor<Article>], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let blog = try TypedBlogStore()
        let expected = try blog.all(Article.self).sorted(using: sortBy).map(\.persistentModelID)
        #expect(try blog.fetchIdentifiers(Models.FetchDescriptor(sortBy: sortBy)) == expected, sourceLocation: sourceLocation)
    }

    @Test func aSortDescriptorsKeyPathAndOrderBecomeTheStoreSort() throws {
        #expect(try FetchSortDescriptor(SortDescriptor(\Article.date, order: .reverse)) == FetchSortDescriptor("date", order: .reverse))
        #expect(try FetchSortDescriptor(SortDescriptor(\Article.views)) == FetchSortDescriptor("views", order: .forward))
    }

    @Test func theStoreOrdersAsSortedUsingDoes() throws {
        try expectSameOrder([SortDescriptor(\.date, order: .reverse)])
        try expectSameOrder([SortDescriptor(\.views)])
        try expectSameOrder([SortDescriptor(\.title)])
        try expectSameOrder([SortDescriptor(\.content, order: .reverse), SortDescriptor(\.views, order: .reverse)])
    }

    @Test func optionalValuesSortWithNilFirstAscending() throws {
        try expectSameOrder([SortDescriptor(\.rating), SortDescriptor(\.date)])
        try expectSameOrder([SortDescriptor(\.rating, order: .reverse), SortDescriptor(\.date)])
    }

    @Test func sortingByAnUndeclaredKeyPathIsRefused() throws {
        let error = try #require(throws: PredicateTranslationError.self) {
            try FetchSortDescriptor(SortDescriptor(\Article.title.count))
        }
        #expect(error.code == .undeclaredKeyPath)
    }

    @Test func prefetchingNamesTheDeclaredRelationships() throws {
        var descriptor = Models.FetchDescriptor<Article>()
        descriptor.relationshipKeyPathsForPrefetching = [\.tags]
        #expect(try descriptor.storeDescriptor().relationshipKeyPathsForPrefetching == ["tags"])
        descriptor.relationshipKeyPathsForPrefetching = [\.title]
        #expect(throws: PredicateTranslationError.self) { try descriptor.storeDescriptor() }
    }
}

@Suite struct ModelDeclarationTests {
    @Test func theEntityComesFromThePropertyList() throws {
        let entity = Article.entity
        #expect(entity.name == "Article")
        #expect(entity.attributes.map(\.name) == ["title", "content", "date", "views", "rating", "isPinned", "status"])
        #expect(entity.attributes.first { $0.name == "content" }?.isOptional == true)
        #expect(entity.attributes.first { $0.name == "status" }?.valueType == .string)
        #expect(entity.relationships.map(\.name) == ["attachments", "tags"])
        #expect(entity.relationships[0].deleteRule == .cascade)
        #expect(entity.relationships[1].destination == "Label")
        #expect(entity.indexes.map(\.properties) == [["date"]])
        #expect(Figure.entity.attributes[0].options == .externalStorage)
        #expect(Note.entity.attributes.first { $0.name == "words" }?.valueType == .array(.string))
        #expect(Article.propertyNames[\Article.title] == "title")
    }

    @Test func aModelRoundTripsThroughItsSnapshot() throws {
        var note = Note()
        note.text = "hello"
        note.words = ["a", "b"]
        note.post = try PersistentIdentifier.identifier(for: "S", entityName: "Article", primaryKey: UUID())
        let copy = try Note(snapshot: note.snapshot)
        #expect(copy.snapshot == note.snapshot)
        #expect(copy.persistentModelID == note.persistentModelID)
    }

    @Test func aValueOfTheWrongTypeIsATypeMismatchNamingTheProperty() throws {
        var snapshot = Note().snapshot
        snapshot["text"] = .int(3)
        let error = try #require(throws: DataStoreError.self) { try Note(snapshot: snapshot) }
        #expect(error.code == .typeMismatch)
        #expect(error.propertyName == "text")
    }

    @Test func aModelReferenceWithoutAContextIsRefused() throws {
        var snapshot = Figure().snapshot
        snapshot["post"] = .toOne(try PersistentIdentifier.identifier(for: "S", entityName: "Article", primaryKey: UUID()))
        let error = try #require(throws: DataStoreError.self) { try Figure(snapshot: snapshot) }
        #expect(error.code == .unsupportedFeature)
    }
}
