import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// Three versions of a library's models: V1 has books (title, author) and notes; V2 renames
/// `author` to `writer` and removes notes; V3 adds an optional page count.
enum LibraryV1: VersionedModelSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static var models: [any PersistentModel.Type] { [Book.self, Note.self] }

    final class Book: ModelObject, PersistentModel {
        var title = ""
        var author = ""
        static let properties: [ModelProperty<Book>] = [.attribute(\.title), .attribute(\.author)]
    }

    final class Note: ModelObject, PersistentModel {
        var text = ""
        static let properties: [ModelProperty<Note>] = [.attribute(\.text)]
    }
}

enum LibraryV2: VersionedModelSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static var models: [any PersistentModel.Type] { [Book.self] }

    final class Book: ModelObject, PersistentModel {
        var title = ""
        var writer = ""
        static let properties: [ModelProperty<Book>] = [.attribute(\.title), .attribute(\.writer, originalName: "author")]
    }
}

enum LibraryV3: VersionedModelSchema {
    static let versionIdentifier = Schema.Version(3, 0, 0)
    static var models: [any PersistentModel.Type] { [Book.self] }

    final class Book: ModelObject, PersistentModel {
        var title = ""
        var writer = ""
        var pages: Int?
        static let properties: [ModelProperty<Book>] = [.attribute(\.title), .attribute(\.writer), .attribute(\.pages)]
    }
}

enum LibraryToV2: ModelMigrationPlan {
    static var schemas: [any VersionedModelSchema.Type] { [LibraryV1.self, LibraryV2.self] }
    static var stages: [ModelMigrationStage] { [.lightweight(fromVersion: LibraryV1.self, toVersion: LibraryV2.self)] }
}

enum LibraryToV3: ModelMigrationPlan {
    static var schemas: [any VersionedModelSchema.Type] { [LibraryV1.self, LibraryV2.self, LibraryV3.self] }
    static var stages: [ModelMigrationStage] {
        [
            .lightweight(fromVersion: LibraryV1.self, toVersion: LibraryV2.self),
            .custom(
                fromVersion: LibraryV2.self, toVersion: LibraryV3.self,
                willMigrate: { context in
                    // The old models: titles in capitals before the step.
                    for book in try context.fetch(FetchDescriptor<LibraryV2.Book>()) { book.title = book.title.uppercased() }
                    try context.save()
                },
                didMigrate: { context in
                    // The new models: the new attribute filled after it (left unsaved: the stage saves it).
                    for book in try context.fetch(FetchDescriptor<LibraryV3.Book>()) { book.pages = book.title.count * 10 }
                }),
        ]
    }
}

enum LibraryFailingStage: ModelMigrationPlan {
    struct Refusal: Error {}
    static var schemas: [any VersionedModelSchema.Type] { [LibraryV2.self, LibraryV3.self] }
    static var stages: [ModelMigrationStage] {
        [.custom(fromVersion: LibraryV2.self, toVersion: LibraryV3.self, willMigrate: { _ in throw Refusal() }, didMigrate: nil)]
    }
}

/// Migrations and history through the container, in model types.
@Suite struct ContainerMigrationTests {
    let temporary = TemporaryDirectory("walstore-models-migration")

    var configurations: [StoreContainer.Configuration] { [.init(name: "Library", entityNames: nil, path: temporary.path + "/library")] }

    func open(
        _ version: any VersionedModelSchema.Type, plan: (any ModelMigrationPlan.Type)? = nil,
        history: WALStoreConfiguration.History = .disabled
    ) throws -> StoreContainer {
        try StoreContainer(schema: Schema(models: version.models), configurations: configurations, migrationPlan: plan, history: history)
    }

    /// A V1 store with two books and a note, closed.
    func writeVersion1() throws {
        let container = try open(LibraryV1.self, plan: LibraryToV2.self)
        let context = ModelContext(container)
        for (title, author) in [("Dune", "Herbert"), ("Emma", "Austen")] {
            let book = LibraryV1.Book()
            book.title = title
            book.author = author
            try context.insert(book)
        }
        let note = LibraryV1.Note()
        note.text = "return by Friday"
        try context.insert(note)
        try context.save()
        try container.close()
    }

    @Test func aLightweightRenameThroughTheContainerKeepsTheValuesUnderTheNewName() throws {
        try writeVersion1()
        let container = try open(LibraryV2.self, plan: LibraryToV2.self)
        let books = try ModelContext(container).fetch(FetchDescriptor<LibraryV2.Book>(sortBy: [SortDescriptor(\.title)]))
        #expect(books.map(\.title) == ["Dune", "Emma"])
        #expect(books.map(\.writer) == ["Herbert", "Austen"])
        try container.close()
    }

    @Test func aCustomStageEditsObjectsThroughContextsOfTheOldAndOfTheNewModels() throws {
        try writeVersion1()
        let container = try open(LibraryV3.self, plan: LibraryToV3.self)
        let books = try ModelContext(container).fetch(FetchDescriptor<LibraryV3.Book>(sortBy: [SortDescriptor(\.title)]))
        #expect(books.map(\.title) == ["DUNE", "EMMA"], "willMigrate saved through the V2 models")
        #expect(books.map(\.writer) == ["Herbert", "Austen"])
        #expect(books.map(\.pages) == [40, 40], "didMigrate's pending changes were saved")
        try container.close()
    }

    @Test func aStageThatThrowsAbandonsTheMigrationAndLeavesTheStoreAsItWas() throws {
        try writeVersion1()
        try open(LibraryV2.self, plan: LibraryToV2.self).close()
        let refusal = #expect(throws: ContainerError.self) { try open(LibraryV3.self, plan: LibraryFailingStage.self) }
        #expect(refusal?.code == .migrationFailed)
        #expect(refusal?.configurationNames == ["Library"])
        #expect((refusal?.underlying as? DataStoreError)?.code == .migrationFailed)
        #expect((refusal?.underlying as? DataStoreError)?.underlying is LibraryFailingStage.Refusal)
        let container = try open(LibraryV2.self, plan: LibraryToV2.self)
        let books = try ModelContext(container).fetch(FetchDescriptor<LibraryV2.Book>(sortBy: [SortDescriptor(\.title)]))
        #expect(books.map(\.title) == ["Dune", "Emma"], "still in version 2, unchanged")
        try container.close()
    }

    @Test func removingAnEntityThatHoldsObjectsWithoutAPlanIsRefusedWithAdviceTheContainerAccepts() throws {
        try writeVersion1()
        let before = try directoryFiles(temporary.path)
        let refusal = #expect(throws: ContainerError.self) { try open(LibraryV2.self) }
        let error = try #require(refusal)
        #expect(error.code == .schemaMismatch)
        #expect(error.configurationNames == ["Library"])
        #expect((error.underlying as? DataStoreError)?.code == .schemaMismatch)
        #expect(error.entityName == "Note")
        #expect(error.message.contains("ModelMigrationPlan"))
        #expect(error.message.contains("migrationPlan:"))
        #expect(try directoryFiles(temporary.path) == before, "the store is unchanged")
        // What the advice names works.
        let container = try open(LibraryV2.self, plan: LibraryToV2.self)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<LibraryV2.Book>()) == 2)
        try container.close()
    }

    @Test func eachStoreOfSeveralConfigurationsMigratesItsOwnPartOfThePlan() throws {
        let split: [StoreContainer.Configuration] = [
            .init(name: "Books", entityNames: ["Book"], path: temporary.path + "/books"),
            .init(name: "Rest", entityNames: nil, path: temporary.path + "/rest"),
        ]
        let old = try StoreContainer(schema: Schema(models: LibraryV1.models), configurations: split, migrationPlan: LibraryToV2.self)
        let context = ModelContext(old)
        let book = LibraryV1.Book()
        book.title = "Dune"
        book.author = "Herbert"
        try context.insert(book)
        try context.insert(LibraryV1.Note())
        try context.save()
        try old.close()

        let new = try StoreContainer(schema: Schema(models: LibraryV2.models), configurations: split, migrationPlan: LibraryToV2.self)
        #expect(try ModelContext(new).fetch(FetchDescriptor<LibraryV2.Book>()).map(\.writer) == ["Herbert"])
        #expect(new.store(named: "Rest")?.schema.entities.isEmpty == true, "the removed entity's store migrated to its empty part")
        try new.close()
    }

    @Test func aStoreInAVersionNewerThanTheConfiguredOneIsRefused() throws {
        try writeVersion1()
        try open(LibraryV2.self, plan: LibraryToV2.self).close()
        let before = try directoryFiles(temporary.path)
        let refusal = #expect(throws: ContainerError.self) { try open(LibraryV1.self, plan: LibraryToV2.self) }
        #expect(refusal?.code == .schemaMismatch)
        #expect(refusal?.message.contains("2.0.0") == true)
        #expect(try directoryFiles(temporary.path) == before)
    }

    @Test func aPlanWhoseModelLeavesAStoredPropertyOutIsRefusedBeforeAnythingOpens() throws {
        enum Leaky: VersionedModelSchema {
            static let versionIdentifier = Schema.Version(9, 0, 0)
            static var models: [any PersistentModel.Type] { [LibraryV2.Book.self, Forgetful.self] }
        }
        enum LeakyPlan: ModelMigrationPlan {
            static var schemas: [any VersionedModelSchema.Type] { [LibraryV2.self, Leaky.self] }
            static var stages: [ModelMigrationStage] { [] }
        }
        let refusal = #expect(throws: ContainerError.self) { try open(LibraryV2.self, plan: LeakyPlan.self) }
        #expect(refusal?.code == .invalidSchema)
        #expect((refusal?.underlying as? DataStoreError)?.propertyName == "forgotten")
        #expect(!FileManager.default.fileExists(atPath: temporary.path + "/library"), "no store was opened")
    }
}

/// History through the container and a context.
@Suite struct ContainerHistoryTests {
    @Test func historyIsRecordedWhenAskedAndFetchedAndDeletedThroughAContext() throws {
        let home = try ModelsHome()
        let container = try StoreContainer(schema: ModelsHome.schema, configurations: home.configurations, history: .enabled())
        let context = ModelContext(container, editingState: EditingState(author: "editor"))
        let post = Post()
        post.title = "first"
        try context.insert(post)
        try context.save()
        post.title = "second"
        try context.save()
        let draft = Draft()
        draft.text = "later"
        try context.insert(draft)
        try context.save()

        let all = try context.fetchHistory(HistoryDescriptor())
        #expect(all.count == 3)
        #expect(all.allSatisfy { $0.author == "editor" })
        #expect(
            all.map { $0.changes.map(\.changedPersistentIdentifier) } == [
                [post.persistentModelID], [post.persistentModelID], [draft.persistentModelID],
            ])
        let posts = try context.fetchHistory(HistoryDescriptor(entityNames: ["Post"]))
        #expect(posts.count == 2)
        let afterFirst = try context.fetchHistory(HistoryDescriptor(after: posts[0].token))
        #expect(afterFirst.map(\.token) == [posts[1].token], "a token reads its own store, after it")
        #expect(try context.fetchHistory(HistoryDescriptor(fetchLimit: 1, sortOrder: .newestFirst)).map(\.token) == [all[2].token])

        try context.deleteHistory(HistoryDescriptor(before: posts[1].token))
        #expect(try context.fetchHistory(HistoryDescriptor(entityNames: ["Post"])).map(\.token) == [posts[1].token])
        try context.deleteHistory(HistoryDescriptor())
        #expect(try context.fetchHistory(HistoryDescriptor()).isEmpty)
        try container.close()
    }

    @Test func aTokenOfAnotherContainerIsRefused() throws {
        let home = try ModelsHome()
        let container = try StoreContainer(schema: ModelsHome.schema, configurations: home.configurations, history: .enabled())
        let foreign = DefaultHistoryToken(storeIdentifier: "not-a-store-of-this-container", value: 1)
        let refusal = #expect(throws: ContainerError.self) { try container.fetchHistory(HistoryDescriptor(after: foreign)) }
        #expect(refusal?.code == .foreignIdentifier)
        try container.close()
    }

    @Test func withoutHistoryNothingIsRecorded() throws {
        let home = try ModelsHome()
        let container = try home.container()
        let context = ModelContext(container)
        try context.insert(Draft())
        try context.save()
        #expect(try context.fetchHistory(HistoryDescriptor()).isEmpty)
        try container.close()
    }
}
