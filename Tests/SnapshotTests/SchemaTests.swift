import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

@Suite struct SchemaTests {
    typealias E = Schema.Entity
    typealias A = Schema.Attribute
    typealias R = Schema.Relationship

    static let post = E("Post", attributes: [A("title", .string)], relationships: [R("tags", destination: "Tag", .toMany, inverse: "posts")])
    static let tag = E("Tag", attributes: [A("name", .string)], relationships: [R("posts", destination: "Post", .toMany, inverse: "tags")])

    /// Each inconsistent schema, and the inconsistency it must be refused with.
    static let cases: [(String, [E], Schema.Inconsistency)] = [
        (
            "unknown destination", [E("Post", relationships: [R("author", destination: "Person")])],
            .unknownDestination(entity: "Post", relationship: "author", destination: "Person")
        ),
        (
            "inverse missing on the destination", [post, E("Tag", attributes: [A("name", .string)])],
            .unknownInverse(entity: "Post", relationship: "tags", inverse: "posts")
        ),
        (
            "inverse is an attribute", [post, E("Tag", attributes: [A("posts", .string)])],
            .unknownInverse(entity: "Post", relationship: "tags", inverse: "posts")
        ),
        (
            "inverse points elsewhere", [post, E("Tag", relationships: [R("posts", destination: "Tag", .toMany)])],
            .inverseMismatch(entity: "Post", relationship: "tags", inverse: "posts")
        ),
        (
            "inverse names another relationship back",
            [
                E("Post", relationships: [R("tags", destination: "Tag", .toMany, inverse: "posts"), R("pinned", destination: "Tag")]),
                E("Tag", relationships: [R("posts", destination: "Post", .toMany, inverse: "pinned")]),
            ],
            .inverseMismatch(entity: "Post", relationship: "tags", inverse: "posts")
        ),
        ("two roots with one name", [E("Post"), E("Post")], .duplicateEntity("Post")),
        ("a sub-entity named as a root", [E("Post"), E("Post", superentity: "Post")], .duplicateEntity("Post")),
        ("unknown superentity", [E("Photo", superentity: "Media")], .unknownSuperentity(entity: "Photo", superentity: "Media")),
        ("inheritance cycle", [E("A", superentity: "B"), E("B", superentity: "A")], .inheritanceCycle(entity: "A")),
        (
            "duplicate property", [E("Post", attributes: [A("title", .string)], relationships: [R("title", destination: "Post")])],
            .duplicateProperty(entity: "Post", property: "title")
        ),
        (
            "redeclared inherited property",
            [E("Media", attributes: [A("name", .string)]), E("Photo", superentity: "Media", attributes: [A("name", .data)])],
            .duplicateProperty(entity: "Photo", property: "name")
        ),
        (
            "index on unknown property", [E("Post", attributes: [A("title", .string)], indexes: [["title", "date"]])],
            .unknownIndexedProperty(entity: "Post", property: "date")
        ),
        ("index on to-many", [post, tag.with(indexes: [["posts"]])], .toManyIndexedProperty(entity: "Tag", property: "posts")),
        ("empty index", [E("Post", indexes: [[]])], .emptyIndex(entity: "Post")),
        (
            "constraint on unknown property", [E("Post", attributes: [A("title", .string)], uniquenessConstraints: [["title", "slug"]])],
            .unknownConstrainedProperty(entity: "Post", property: "slug")
        ),
        ("constraint on to-many", [post.with(uniquenessConstraints: [["tags"]]), tag], .toManyConstrainedProperty(entity: "Post", property: "tags")),
        ("empty constraint", [E("Post", uniquenessConstraints: [[]])], .emptyConstraint(entity: "Post")),
        (
            "default of another type", [E("Post", attributes: [A("views", .int, defaultValue: "many")])],
            .defaultValueMismatch(entity: "Post", attribute: "views")
        ),
        (
            "null default of a non-optional", [E("Post", attributes: [A("views", .int, defaultValue: .null)])],
            .defaultValueMismatch(entity: "Post", attribute: "views")
        ),
        (
            "external storage on a number", [E("Post", attributes: [A("views", .int, options: .externalStorage)])],
            .invalidOption(entity: "Post", attribute: "views")
        ),
        (
            "minimum above maximum", [E("Post", relationships: [R("next", destination: "Post", .toMany, minimumCount: 3, maximumCount: 2)])],
            .invalidCount(entity: "Post", relationship: "next")
        ),
        (
            "negative count", [E("Post", relationships: [R("next", destination: "Post", .toMany, minimumCount: -1)])],
            .invalidCount(entity: "Post", relationship: "next")
        ),
        (
            "to-one with two targets", [E("Post", relationships: [R("next", destination: "Post", maximumCount: 2)])],
            .invalidCount(entity: "Post", relationship: "next")
        ),
        ("entity name not an identifier", [E("My Post")], .invalidName(entity: "My Post", property: nil)),
        ("property name with a dot", [E("Post", attributes: [A("a.b", .string)])], .invalidName(entity: "Post", property: "a.b")),
        ("reserved property name", [E("Post", attributes: [A("entityName", .string)])], .invalidName(entity: "Post", property: "entityName")),
        (
            "asset-suffixed property name", [E("Post", attributes: [A("title_ckAsset", .string)])],
            .invalidName(entity: "Post", property: "title_ckAsset")
        ),
    ]

    @Test(arguments: 0..<cases.count) func inconsistentSchemasAreRefusedNamingThePlace(_ i: Int) {
        let (what, entities, expected) = Self.cases[i]
        do {
            _ = try Schema(entities)
            Issue.record("\(what): accepted")
        } catch let error as DataStoreError {
            #expect(error.code == .invalidSchema, "\(what)")
            #expect(error.underlying as? Schema.Inconsistency == expected, "\(what): \(error)")
            #expect(error.entityName == expected.entityName, "\(what)")
            #expect(error.propertyName == expected.propertyName, "\(what)")
            #expect(error.message.contains(expected.entityName), "\(what): the message names the entity")
        } catch {
            Issue.record("\(what): unexpected \(error)")
        }
    }

    @Test func consistentSchemasAreAcceptedAndRoundTrip() throws {
        let schema = BlogModel.schema
        #expect(schema.entities.map(\.name) == ["Post", "Attachment", "Tag"])
        #expect(try JSONDecoder().decode(Schema.self, from: JSONEncoder().encode(schema)) == schema)
        // A one-sided inverse (the other side declares none) is accepted, as in SwiftData.
        _ = try Schema([Self.post, E("Tag", relationships: [R("posts", destination: "Post", .toMany)])])
        // Decoding re-validates.
        let bad = try JSONEncoder().encode(["entities": [E("Post", relationships: [R("x", destination: "Nowhere")])]])
        #expect(throws: DataStoreError.self) { try JSONDecoder().decode(Schema.self, from: bad) }
    }

    @Test func inheritanceLookups() throws {
        let schema = try Schema([
            E(
                "Media", isAbstract: true, attributes: [A("name", .string, options: .unique)],
                relationships: [R("album", destination: "Album", inverse: "items")], indexes: [["name"]]),
            E(
                "Photo", superentity: "Media", attributes: [A("pixels", .data, options: .externalStorage)],
                uniquenessConstraints: [["name", "album"]]),
            E("RawPhoto", superentity: "Photo", attributes: [A("iso", .int32)], indexes: [["iso", "name"]]),
            E("Album", relationships: [R("items", destination: "Media", .toMany, inverse: "album")]),
        ])
        #expect(schema.rootEntity(of: "RawPhoto")?.name == "Media")
        #expect(schema.rootEntity(of: "Album")?.name == "Album")
        #expect(schema.rootEntity(of: "Nope") == nil)
        #expect(schema.subentities(of: "Media").map(\.name) == ["Photo", "RawPhoto"])
        #expect(schema.subentities(of: "RawPhoto").isEmpty)
        #expect(schema.allProperties(of: "RawPhoto").map(\.name) == ["name", "album", "pixels", "iso"])
        #expect(schema.attribute(named: "name", in: "RawPhoto")?.valueType == .string)
        #expect(schema.relationship(named: "album", in: "RawPhoto")?.destination == "Album")
        #expect(schema.attribute(named: "album", in: "RawPhoto") == nil)
        #expect(schema.isEntity("RawPhoto", kindOf: "Media") && !schema.isEntity("Media", kindOf: "Photo"))
        #expect(schema.allIndexes(of: "RawPhoto").map(\.properties) == [["name"], ["iso", "name"]])
        #expect(schema.allUniquenessConstraints(of: "RawPhoto").map(\.properties) == [["name"], ["name", "album"]])
        #expect(throws: DataStoreError.self) { try schema.requireEntity(named: "Video") }
    }

    @Test func everyInconsistencyIsListed() {
        let problems = Schema.inconsistencies(in: [E("Post", relationships: [R("a", destination: "X"), R("b", destination: "Y")]), E("Post")])
        #expect(
            problems == [
                .duplicateEntity("Post"),
                .unknownDestination(entity: "Post", relationship: "a", destination: "X"),
                .unknownDestination(entity: "Post", relationship: "b", destination: "Y"),
            ])
    }

    @Test func valueTypesAcceptTheirCasesOnly() {
        #expect(A.ValueType.int32.accepts(.int32(1)) && !A.ValueType.int32.accepts(.int64(1)))
        #expect(A.ValueType.array(.string).accepts(.array(["a", "b"])) && !A.ValueType.array(.string).accepts(.array([1])))
        #expect(A.ValueType.codable(typeName: "P").accepts(.codable(typeName: "P", encoded: Data())))
        #expect(!A.ValueType.codable(typeName: "P").accepts(.codable(typeName: "Q", encoded: Data())))
        #expect(!A.ValueType.string.accepts(.null))
    }
}

extension Schema.Entity {
    func with(indexes: [[String]] = [], uniquenessConstraints: [[String]] = []) -> Schema.Entity {
        var copy = self
        copy.indexes += indexes.map(Schema.Index.init)
        copy.uniquenessConstraints += uniquenessConstraints.map(Schema.UniquenessConstraint.init)
        return copy
    }
}
