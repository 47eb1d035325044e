import Engine
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Migrations that are refused leave the store's files byte-identical, with a typed error that
/// names what differs or which objects collide.
@Suite struct MigrationRefusalTests {
    typealias F = MigrationFixture

    func expectRefused(_ schema: Schema, code: DataStoreError.Code, naming text: String) throws {
        let home = MigrationHome()
        let old = try home.filled()
        let files = try home.files()
        do {
            let store = try home.open(schema)
            try? store.close()
            Issue.record("the migration was not refused")
        } catch let error as DataStoreError {
            #expect(error.code == code, "\(error)")
            #expect(error.message.contains(text), "\(error.message)")
        }
        #expect(try home.files() == files, "the files are byte-identical")
        let store = try home.open(BlogModel.schema)
        #expect(try F.dump(store) == old)
        try store.close()
    }

    @Test func aTypeChangeIsRefusedNamingIt() throws {
        try expectRefused(
            try F.blog {
                $0[named: "Post"].attributes[0].valueType = .int; $0[named: "Post"].indexes = []
            }, code: .schemaMismatch,
            naming: "entity Post: attribute title changed type from string to int (incompatible)")
    }

    @Test func anOptionalAttributeMadeRequiredWithoutDefaultOverANullIsRefusedNamingTheObject() throws {
        try expectRefused(
            try F.blog { $0[named: "Post"].attributes[1].isOptional = false }, code: .missingValue,
            naming: "Post.content in 1")
    }

    @Test func aUniquenessConstraintOverDuplicatesIsRefusedNamingTheObjects() throws {
        // A fourth post on the first one's date: the new rule over dates cannot hold.
        let schema = try F.blog {
            $0[named: "Post"].uniquenessConstraints = [.init(["date"])]; $0[named: "Post"].attributes[2].defaultValue = nil
        }
        let home = MigrationHome()
        do {
            let store = try home.open(BlogModel.schema)
            try F.fill(store)
            _ = try store.save(DataStoreSaveChangesRequest(inserted: [BlogModel.post(title: "delta", date: F.epoch)]))
            try store.close()
        }
        let files = try home.files()
        #expect(throws: DataStoreError.self) { try home.open(schema) }
        do { _ = try home.open(schema) } catch let error as DataStoreError {
            #expect(error.code == .uniqueness)
            #expect(error.identifier?.entityName == "Post" && error.message.contains("uniqueness rule (date) of Post"), "\(error)")
        }
        #expect(try home.files() == files, "the files are byte-identical")
    }

    @Test func differencesAreListedOneByOne() throws {
        let home = MigrationHome()
        try home.filled()
        let schema = try F.blog {
            $0[named: "Post"].attributes[0].valueType = .int
            $0[named: "Post"].indexes = []
            $0[named: "Tag"].attributes.append(.init("rank", .int, isOptional: true))
        }
        do {
            _ = try home.open(schema)
            Issue.record("not refused")
        } catch let error as DataStoreError {
            let difference = try #require(error.underlying as? SchemaDifference)
            #expect(difference.incompatible.map(\.description) == ["entity Post: attribute title changed type from string to int"])
            #expect(difference.changes.contains(.attributeAdded(entity: "Tag", attribute: "rank")))
            #expect(difference.changes.contains(.indexRemoved(entity: "Post", properties: ["date"])))
        }
    }

    @Test func originalNamesAreValidated() {
        #expect(throws: DataStoreError.self) {
            try Schema([.init("A", attributes: [.init("x", .int, originalName: "old"), .init("y", .int, originalName: "old")])])
        }
        #expect(throws: DataStoreError.self) { try Schema([.init("A", originalName: "not a name")]) }
    }
}
