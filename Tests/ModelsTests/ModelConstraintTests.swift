import Foundation
import Models
import Snapshot
import SnapshotTestSupport
import Testing

/// Uniqueness constraints and indexes declared by key path (`.unique(\.email)`,
/// `.index(\.title, \.date)`), as SwiftData's `#Unique` and `#Index` declare them.
@StoreActor @Suite struct ModelConstraintTests {
    final class Member: ModelObject, PersistentModel {
        var email = ""
        var first = ""
        var last = ""
        var joined = Date.distantPast
        var bio = ""
        static let properties: [ModelProperty<Member>] = [
            .attribute(\.email), .attribute(\.first), .attribute(\.last), .attribute(\.joined), .attribute(\.bio, "about"),
        ]
        static let constraints: [ModelConstraint<Member>] = [.unique(\.email), .unique(\.first, \.last), .index(\.joined, \.bio)]
    }

    /// Declares an index on a computed property, which is not a property of the entity.
    final class Misdeclared: ModelObject, PersistentModel {
        var name = ""
        var shout: String { name.uppercased() }
        static let properties: [ModelProperty<Misdeclared>] = [.attribute(\.name)]
        static let constraints: [ModelConstraint<Misdeclared>] = [.index(\.shout)]
    }

    @Test func theEntityHoldsTheConstraintsAndIndexesByPropertyName() throws {
        let entity = try #require(try Schema(models: Member.self).entity(named: "Member"))
        #expect(entity.uniquenessConstraints.map(\.properties) == [["email"], ["first", "last"]])
        #expect(entity.indexes.map(\.properties) == [["joined", "about"]], "a renamed property by its name in the entity")
    }

    @Test func aKeyPathThatIsNotADeclaredPropertyIsRefusedWhenTheSchemaIsMade() {
        let refusal = #expect(throws: DataStoreError.self) { try Schema(models: Misdeclared.self) }
        #expect(refusal?.code == .invalidSchema)
        #expect(refusal?.entityName == "Misdeclared")
        #expect(refusal.map { "\($0)".contains("an index on") && "\($0)".contains("not a property its properties list declares") } == true)
    }

    /// Two new objects with the same first and last name in one save (one alone would be
    /// upserted into a stored object with those values, as SwiftData does).
    @Test func aSaveThatBreaksAKeyPathConstraintIsRefusedNamingIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("constraints-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try StoreContainer(
            schema: Schema(models: Member.self), configurations: [.init(name: "Members", entityNames: nil, directory: directory)])
        defer { try? container.close() }
        let context = ModelContext(container)
        let ann = Member()
        (ann.email, ann.first, ann.last) = ("ann@x", "Ann", "Lee")
        let twin = Member()
        (twin.email, twin.first, twin.last) = ("other@x", "Ann", "Lee")
        try context.insert(ann)
        try context.insert(twin)
        let refusal = #expect(throws: DataStoreError.self) { try context.save() }
        #expect(refusal?.code == .uniqueness)
        #expect(refusal?.constraint == ["first", "last"])
    }
}
