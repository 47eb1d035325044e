import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// A library of items, some of them photos (some raw) or videos, in albums.
enum LibraryModel {
    static func schema(indexed: Bool) -> Schema {
        do {
            return try Schema([
                .init(
                    "Item", attributes: [.init("name", .string), .init("level", .int, isOptional: true)],
                    relationships: [.init("album", destination: "Album", inverse: "items")], indexes: indexed ? [["level"]] : []),
                .init("Photo", superentity: "Item", attributes: [.init("width", .int)]),
                .init("RawPhoto", superentity: "Photo", attributes: [.init("iso", .int)]),
                .init("Video", superentity: "Item", attributes: [.init("seconds", .double)]),
                .init(
                    "Album", attributes: [.init("title", .string)], relationships: [.init("items", destination: "Item", .toMany, inverse: "album")]),
            ])
        } catch {
            preconditionFailure("\(error)")
        }
    }

    static func make(_ entity: String, _ values: [String: PropertyValue]) -> DefaultSnapshot {
        DefaultSnapshot(persistentIdentifier: .temporary(entityName: entity), values: values)
    }

    /// Saves an album of nine items into `store`.
    static func fill(_ store: WALDataStore) throws {
        var album = make("Album", ["title": "trip"])
        var items: [DefaultSnapshot] = []
        for i in 0..<9 {
            var values: [String: PropertyValue] = [
                "name": .string("item \(i)"), "level": i == 4 ? .null : .int(i), "album": .toOne(album.persistentIdentifier),
            ]
            let entity: String
            switch i % 4 {
            case 0: entity = "Item"
            case 1: entity = "Photo"; values["width"] = .int(i * 300)
            case 2: entity = "RawPhoto"; values["width"] = .int(i * 300); values["iso"] = .int(100 * i)
            default: entity = "Video"; values["seconds"] = .double(Double(i))
            }
            items.append(make(entity, values))
        }
        album["items"] = .toMany(items.map(\.persistentIdentifier))
        _ = try store.save(DataStoreSaveChangesRequest(inserted: [album] + items))
    }
}

/// Requests the schema says cannot be answered are refused before anything is read, the same
/// on an empty store and a full one, with or without an index; entity tests select by the
/// stored concrete entity.
@Suite struct WALRequestCheckTests {
    /// Opens an empty and a full store of the library (with the index or not), runs `body` on each.
    func onEmptyAndFull(_ body: (WALDataStore, WALHome, String) throws -> Void) throws {
        for indexed in [false, true] {
            for full in [false, true] {
                let home = WALHome(LibraryModel.schema(indexed: indexed))
                defer { home.temporary.remove() }
                let store = try home.open()
                if full { try LibraryModel.fill(store) }
                try body(store, home, "\(full ? "full" : "empty") store, \(indexed ? "indexed" : "no index")")
                try store.close()
            }
        }
    }

    /// The error `body` throws, when it is a DataStoreError.
    func refusal(_ body: () throws -> Any) -> DataStoreError? {
        do {
            _ = try body()
            return nil
        } catch let error as DataStoreError {
            return error
        } catch {
            return nil
        }
    }

    /// Every call that takes `descriptor` refuses it with `code`, naming `entity` and
    /// `property`, reading no record and writing nothing.
    func expectRefusedEverywhere(
        _ descriptor: FetchDescriptor, _ code: DataStoreError.Code, entity: String, property: String?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try onEmptyAndFull { store, home, label in
            let files = try home.files()
            let read = store.recordsRead
            var calls: [(String, () throws -> Any)] = [
                ("fetch", { try store.fetch(DataStoreFetchRequest(descriptor: descriptor)) }),
                ("fetchCount", { try store.fetchCount(DataStoreFetchRequest(descriptor: descriptor)) }),
                ("fetchIdentifiers", { try store.fetchIdentifiers(DataStoreFetchRequest(descriptor: descriptor)) }),
                ("in memory", { try PredicateEvaluator(schema: store.schema) { _ in nil }.run(descriptor, over: []) }),
            ]
            if descriptor.sortBy.isEmpty && descriptor.relationshipKeyPathsForPrefetching.isEmpty {
                calls.append(
                    (
                        "batch delete",
                        { try store.delete(DataStoreBatchDeleteRequest(entityName: descriptor.entityName, predicate: descriptor.predicate)) }
                    ))
            }
            for (name, call) in calls {
                let error = refusal(call)
                #expect(error?.code == code, "\(name), \(label): \(error.map { "\($0)" } ?? "not refused")", sourceLocation: sourceLocation)
                #expect(
                    error?.entityName == entity && error?.propertyName == property, "\(name), \(label): \(error.map { "\($0)" } ?? "")",
                    sourceLocation: sourceLocation)
            }
            #expect(store.recordsRead == read, "\(label): refused before a record was read", sourceLocation: sourceLocation)
            #expect(try home.files() == files, "\(label): refused calls wrote nothing", sourceLocation: sourceLocation)
        }
    }

    // MARK: Sorts

    @Test func aSortByAToManyRelationshipIsRefusedInEveryCallThatTakesASort() throws {
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Album", sortBy: [.init("items")]), .invalidPredicate, entity: "Album", property: "items")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Album", sortBy: [.init("title"), .init("items.name", order: .reverse)]), .invalidPredicate, entity: "Album",
            property: "items")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", sortBy: [.init("album.items")], fetchLimit: 2), .invalidPredicate, entity: "Album", property: "items")
    }

    @Test func aSortByAnUnknownOrMalformedPathIsRefusedOnAnEmptyStoreToo() throws {
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", sortBy: [.init("width")]), .unknownProperty, entity: "Item", property: "width")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", sortBy: [.init("name.count")]), .invalidPredicate, entity: "Item", property: "name")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", sortBy: [.init("album.name")]), .unknownProperty, entity: "Album", property: "name")
    }

    @Test func aSortByAToOneRelationshipOrThroughOneIsAnswered() throws {
        try onEmptyAndFull { store, _, label in
            let byAlbum = try store.fetchIdentifiers(
                DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Item", sortBy: [.init("album.title"), .init("name")])))
            #expect(byAlbum.count == (label.hasPrefix("full") ? 9 : 0), "\(label)")
        }
    }

    // MARK: Predicates

    @Test func aComparisonWithAValueOfAnotherKindIsRefusedWhateverTheDataAndIndexes() throws {
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", predicate: .attribute("level") >= "a"), .typeMismatch, entity: "Item", property: "level")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", predicate: .attribute("level") == 3 && .attribute("name") < 5), .typeMismatch, entity: "Item",
            property: "name")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", predicate: .attribute("level").isIn(["1", "2"])), .typeMismatch, entity: "Item", property: "level")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", predicate: .attribute("level").contains("1")), .typeMismatch, entity: "Item", property: "level")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", predicate: .attribute("album") == "trip"), .typeMismatch, entity: "Item", property: "album")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Album", predicate: .relationship("items").any(.attribute("level") > Date())), .typeMismatch, entity: "Item",
            property: "level")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", predicate: .attribute("album.title") == 1.5), .typeMismatch, entity: "Album", property: "title")
    }

    @Test func numbersOfAnyWidthAndNullsCompareWithANumericAttribute() throws {
        try onEmptyAndFull { store, _, label in
            for predicate: FetchPredicate in [
                .attribute("level") >= Int8(2), .attribute("level") < 6.5, .compare(path: "level", .equal, value: .uint64(3)),
                .attribute("level").isNil, .compare(path: "level", .notEqual, value: .null),
            ] {
                let count = try store.fetchCount(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Item", predicate: predicate)))
                #expect(label.hasPrefix("full") ? count > 0 : count == 0, "\(label): \(predicate)")
            }
        }
    }

    @Test func pathsTheSchemaCannotFollowAreRefusedOnAnEmptyStoreToo() throws {
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", predicate: .attribute("colour") == "red"), .unknownProperty, entity: "Item", property: "colour")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", predicate: .attribute("name.first") == "a"), .invalidPredicate, entity: "Item", property: "name")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Album", predicate: .attribute("items.name") == "a"), .invalidPredicate, entity: "Album", property: "items")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Album", predicate: .attribute("items").isNil), .invalidPredicate, entity: "Album", property: "items")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Album", predicate: .attribute("title").any(.always)), .invalidPredicate, entity: "Album", property: "title")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Album", predicate: .relationship("items").all(.attribute("title") == "x")), .unknownProperty, entity: "Item",
            property: "title")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", predicate: .attribute("album..title") == "x"), .invalidPredicate, entity: "Item",
            property: "album..title")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", relationshipKeyPathsForPrefetching: ["album.colour"]), .unknownProperty, entity: "Album",
            property: "colour")
    }

    @Test func theEvaluatorsOwnRefusalsWithoutASchemaNameTheEntityPropertyAndObject() throws {
        let item = LibraryModel.make("Item", ["name": "a", "level": 3, "album": .toOne(.temporary(entityName: "Album"))])
        let evaluator = PredicateEvaluator { _ in nil }
        let cases: [(FetchPredicate, DataStoreError.Code, String)] = [
            (.attribute("level") >= "a", .typeMismatch, "level"),
            (.attribute("level").isIn(["x"]), .typeMismatch, "level"),
            (.attribute("level").contains("3"), .typeMismatch, "level"),
            (.attribute("album..title") == "x", .invalidPredicate, "album..title"),
            (.attribute("album.title") == "x", .danglingReference, "album.title"),
        ]
        for (predicate, code, property) in cases {
            let error = refusal { try evaluator.evaluate(predicate, on: item) }
            #expect(
                error?.code == code && error?.entityName == "Item" && error?.propertyName == property, "\(predicate): \(error.map { "\($0)" } ?? "")")
        }
        #expect(refusal { try evaluator.evaluate(.attribute("album.title") == "x", on: item) }?.identifier?.entityName == "Album")
    }

    @Test func aSubEntityPropertyIsReadOnlyAfterATestOfThatEntity() throws {
        // Without the test, `width` is not a property of every Item: refused, data or not.
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", predicate: .attribute("width") > 1000), .unknownProperty, entity: "Item", property: "width")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", predicate: .attribute("width") > 1000 && .isKind(of: "Photo")), .unknownProperty, entity: "Item",
            property: "width")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", predicate: .isKind(of: "Photo") && .attribute("seconds") > 1), .unknownProperty, entity: "Photo",
            property: "seconds")
        try expectRefusedEverywhere(
            FetchDescriptor(entityName: "Item", predicate: .isKind(of: "Picture")), .unknownEntity, entity: "Picture", property: nil)
    }
}

/// Entity tests: by the stored concrete entity, exactly or with sub-entities, the same in the
/// store and in memory.
@Suite struct WALEntityPredicateTests {
    static func names(_ store: WALDataStore, _ predicate: FetchPredicate, entity: String = "Item") throws -> [String] {
        try store.fetch(FetchDescriptor(entityName: entity, predicate: predicate, sortBy: [.init(entity == "Album" ? "title" : "name")]))
            .fetchedSnapshots.map { snapshot in
                if case .string(let name)? = snapshot["name"] ?? snapshot["title"] { return name }
                return "?"
            }
    }

    @Test func isKindSelectsAnEntityAndItsSubEntitiesAndIsEntityOnlyTheEntity() throws {
        for indexed in [false, true] {
            let home = WALHome(LibraryModel.schema(indexed: indexed))
            defer { home.temporary.remove() }
            let store = try home.open()
            try LibraryModel.fill(store)
            #expect(try Self.names(store, .isKind(of: "Photo")) == ["item 1", "item 2", "item 5", "item 6"])
            #expect(try Self.names(store, .isEntity("Photo")) == ["item 1", "item 5"])
            #expect(try Self.names(store, .isKind(of: "RawPhoto")) == ["item 2", "item 6"])
            #expect(try Self.names(store, .isEntity("Item")) == ["item 0", "item 4", "item 8"])
            #expect(try Self.names(store, .isKind(of: "Item")).count == 9)
            #expect(try Self.names(store, !.isKind(of: "Photo")) == ["item 0", "item 3", "item 4", "item 7", "item 8"])
            // With an index range on level too, and a sub-entity's property after the test.
            #expect(try Self.names(store, .attribute("level") >= 2 && .isKind(of: "Photo")) == ["item 2", "item 5", "item 6"])
            #expect(try Self.names(store, .isKind(of: "Photo") && .attribute("width") > 1000) == ["item 5", "item 6"])
            // `(x as? Photo)?.width ?? 0 <= 1000`: not a photo, or a photo of width at most 1000.
            #expect(try Self.names(store, .or([.not(.isKind(of: "Photo")), .attribute("width") <= 1000])).count == 7)
            // The fetch of a sub-entity: the test is about the concrete entity.
            #expect(try Self.names(store, .isEntity("Photo"), entity: "Photo") == ["item 1", "item 5"])
            #expect(
                try store.fetchCount(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Item", predicate: .isKind(of: "Video")))) == 2)
            #expect(
                try store.fetchIdentifiers(
                    DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Item", predicate: .isKind(of: "Video"), fetchLimit: 1))
                ).count == 1)
            // Inside any: the album holds a raw photo.
            #expect(try Self.names(store, .relationship("items").any(.isKind(of: "RawPhoto")), entity: "Album").count == 1)
            try store.close()
        }
    }

    @Test func theStoreAndTheInMemoryEvaluatorAgreeOnEntityTests() throws {
        let home = WALHome(LibraryModel.schema(indexed: false))
        defer { home.temporary.remove() }
        let store = try home.open()
        try LibraryModel.fill(store)
        let all = try store.all("Item") + store.all("Album")
        let byID = Dictionary(uniqueKeysWithValues: all.map { ($0.persistentIdentifier, $0) })
        let evaluator = PredicateEvaluator(schema: store.schema) { byID[$0] }
        for predicate: FetchPredicate in [
            .isKind(of: "Photo"), .isEntity("Photo"), .not(.isKind(of: "Item")), .isKind(of: "Photo") && .attribute("width") > 1000,
            .or([.not(.isEntity("Video")), .attribute("seconds") > 5]), .isKind(of: "Album"),
        ] {
            let descriptor = FetchDescriptor(entityName: "Item", predicate: predicate, sortBy: [.init("name")])
            #expect(try store.fetch(descriptor).fetchedSnapshots == evaluator.run(descriptor, over: all), "\(predicate)")
        }
        // Without a schema the evaluator knows no sub-entities: only the name itself matches.
        let photo = all.first { $0.persistentIdentifier.entityName == "RawPhoto" }!
        #expect(try PredicateEvaluator { _ in nil }.evaluate(.isKind(of: "Photo"), on: photo) == false)
        #expect(try PredicateEvaluator { _ in nil }.evaluate(.isEntity("RawPhoto"), on: photo))
    }

    @Test func anEntityTestRoundTripsThroughCodable() throws {
        let predicate: FetchPredicate = .isKind(of: "Photo") && .attribute("width") > 1000 && !.isEntity("RawPhoto")
        let decoded = try JSONDecoder().decode(FetchPredicate.self, from: JSONEncoder().encode(predicate))
        #expect(decoded == predicate)
        #expect(decoded != (.isEntity("Photo") && .attribute("width") > 1000 && !.isEntity("RawPhoto")))
    }
}
