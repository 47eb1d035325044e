import EngineTestSupport
import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// A version no plan lists: books with a title only.
enum LibraryUnlisted: VersionedModelSchema {
    static let versionIdentifier = Schema.Version(0, 9, 0)
    static var models: [any PersistentModel.Type] { [Book.self] }

    final class Book: ModelObject, PersistentModel {
        var title = ""
        static let properties: [ModelProperty<Book>] = [.attribute(\.title)]
    }
}

@Suite struct ContainerUnknownVersionTests {
    @Test func aStoreInAVersionThePlanDoesNotListIsRefusedWithItsFilesUnchanged() throws {
        let temporary = TemporaryDirectory("walstore-models-unknown-version")
        let configurations: [StoreContainer.Configuration] = [.init(name: "Library", entityNames: nil, path: temporary.path + "/library")]
        let old = try StoreContainer(schema: Schema(models: LibraryUnlisted.models), configurations: configurations)
        let context = ModelContext(old)
        let book = LibraryUnlisted.Book()
        book.title = "Dune"
        try context.insert(book)
        try context.save()
        try old.close()
        let before = try directoryFiles(temporary.path)

        let refusal = #expect(throws: ContainerError.self) {
            try StoreContainer(schema: Schema(models: LibraryV2.models), configurations: configurations, migrationPlan: LibraryToV2.self)
        }
        #expect(refusal?.code == .schemaMismatch)
        #expect(refusal?.message.contains("1.0.0") == true, "the message names the plan's versions")
        #expect(try directoryFiles(temporary.path) == before)
    }
}
