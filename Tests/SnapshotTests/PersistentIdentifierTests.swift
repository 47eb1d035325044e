import Foundation
import Snapshot
import Testing

@Suite struct PersistentIdentifierTests {
    static func roundTrip<T: Codable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
    }

    /// UUID primary keys order as their strings do (the documented order), however they are
    /// compared inside.
    @Test func uuidPrimaryKeysOrderAsTheirStrings() throws {
        for _ in 0..<2_000 {
            let (a, b) = (UUID(), UUID())
            let ka = PersistentIdentifier.PrimaryKey.uuid(a), kb = PersistentIdentifier.PrimaryKey.uuid(b)
            #expect((ka < kb) == (a.uuidString < b.uuidString))
            #expect((kb < ka) == (b.uuidString < a.uuidString))
            #expect((PropertyValue.uuid(a) < PropertyValue.uuid(b)) == (a.uuidString < b.uuidString))
        }
        let a = UUID()
        #expect(!(PersistentIdentifier.PrimaryKey.uuid(a) < .uuid(a)))
    }

    @Test func permanentIdentifiersRoundTripThroughCodable() throws {
        let keys: [PersistentIdentifier.PrimaryKey] = [.uuid(UUID()), .string("post-1"), .integer(-42), .integer(.max)]
        for key in keys {
            let id = try PersistentIdentifier.identifier(for: "store.json", entityName: "Post", primaryKey: key)
            let decoded = try Self.roundTrip(id)
            #expect(decoded == id)
            #expect(decoded.hashValue == id.hashValue)
            #expect(!decoded.isTemporary)
            #expect(decoded.storeIdentifier == "store.json" && decoded.entityName == "Post" && decoded.primaryKey == key)
        }
    }

    @Test func temporaryIdentifiersRoundTripAndStayTemporary() throws {
        let id = PersistentIdentifier.temporary(entityName: "Tag")
        #expect(id.isTemporary && id.storeIdentifier == nil)
        let decoded = try Self.roundTrip(id)
        #expect(decoded == id)
        #expect(decoded.isTemporary)
        #expect(PersistentIdentifier.temporary(entityName: "Tag") != id, "each temporary identifier is new")
        let permanent = try PersistentIdentifier.identifier(for: "s", entityName: "Tag", primaryKey: .uuid(UUID()))
        #expect(!permanent.isTemporary && permanent != id)
    }

    @Test func identifiersAreRefusedWithoutAStoreOrEntity() {
        #expect(throws: DataStoreError.self) { try PersistentIdentifier.identifier(for: "", entityName: "Post", primaryKey: UUID()) }
        do {
            _ = try PersistentIdentifier.identifier(for: "s", entityName: "", primaryKey: "k")
            Issue.record("an empty entity name must be refused")
        } catch let error as DataStoreError {
            #expect(error.code == .invalidRequest)
        } catch {
            Issue.record("unexpected \(error)")
        }
        let bad = Data(#"{"entityName":"","primaryKey":{"string":{"_0":"k"}}}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PersistentIdentifier.self, from: bad) }
        let emptyStore = Data(#"{"storeIdentifier":"","entityName":"Post","primaryKey":{"string":{"_0":"k"}}}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PersistentIdentifier.self, from: emptyStore) }
    }

    @Test func orderPutsTemporaryIdentifiersFirst() throws {
        let temporary = PersistentIdentifier.temporary(entityName: "Post")
        let a = try PersistentIdentifier.identifier(for: "a", entityName: "Post", primaryKey: "2")
        let b = try PersistentIdentifier.identifier(for: "a", entityName: "Post", primaryKey: "10")
        let c = try PersistentIdentifier.identifier(for: "b", entityName: "A", primaryKey: "1")
        #expect([c, b, a, temporary].sorted() == [temporary, b, a, c])
    }
}

@Suite struct RandomUUIDTests {
    @Test func randomUUIDsAreVersionFourOfTheRFCVariantAndDistinct() {
        let uuids = (0..<1_000).map { _ in UUID.makeRandom() }
        #expect(Set(uuids).count == uuids.count)
        for uuid in uuids {
            #expect(uuid.uuid.6 >> 4 == 4, "version 4")
            #expect(uuid.uuid.8 >> 6 == 0b10, "the RFC's variant")
            #expect(UUID(uuidString: uuid.uuidString) == uuid)
        }
    }
}
