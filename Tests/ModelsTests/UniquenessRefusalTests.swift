import EngineTestSupport
import Foundation
import Models
import Snapshot
import Testing

final class Account: ModelObject, PersistentModel {
    var email = ""
    var handle = ""
    static let properties: [ModelProperty<Account>] = [.attribute(\.email, options: .unique), .attribute(\.handle, options: .unique)]
}

/// A uniqueness refusal names every rule the object collides on and every object it collides
/// with.
@StoreActor @Suite struct UniquenessRefusalTests {
    let temporary = TemporaryDirectory("walstore-uniqueness")
    let context: ModelContext

    init() throws {
        let container = try StoreContainer(
            schema: Schema(models: Account.self), configurations: [.init(name: "Accounts", entityNames: nil, path: temporary.path + "/accounts")])
        context = ModelContext(container)
    }

    func account(_ email: String, _ handle: String) -> Account {
        let account = Account()
        account.email = email
        account.handle = handle
        return account
    }

    func snapshot(_ email: String, _ handle: String) -> DefaultSnapshot {
        DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Account"), values: ["email": .string(email), "handle": .string(handle)])
    }

    @Test func anInsertCollidingWithTwoStoredObjectsOnTwoRulesNamesBoth() throws {
        let ann = account("a@x", "ann")
        let bob = account("b@x", "bob")
        try context.insert(ann)
        try context.insert(bob)
        try context.save()
        let mixed = account("a@x", "bob")
        try context.insert(mixed)
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .uniqueness)
        #expect(error.identifier == mixed.persistentModelID)
        #expect(Set(error.constraints) == [["email"], ["handle"]])
        #expect(Set(error.relatedIdentifiers) == [ann.persistentModelID, bob.persistentModelID])
        #expect(error.message.contains("email") && error.message.contains("handle"))
        let fresh = ModelContext(context.container)
        #expect(Set(try fresh.fetch(FetchDescriptor<Account>()).map(\.handle)) == ["ann", "bob"], "nothing was saved")
    }

    @Test func anInsertSharingTwoRulesWithTwoEarlierInsertsNamesBoth() throws {
        let first = account("a@x", "ann")
        let second = account("b@x", "bob")
        let third = account("a@x", "bob")
        for a in [first, second, third] { try context.insert(a) }
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .uniqueness)
        #expect(error.identifier == third.persistentModelID)
        #expect(Set(error.constraints) == [["email"], ["handle"]])
        #expect(Set(error.relatedIdentifiers) == [first.persistentModelID, second.persistentModelID])
    }

    @Test func aStoreRequestSharingTwoRulesWithTwoEarlierInsertsNamesBoth() throws {
        let request = DataStoreSaveChangesRequest(inserted: [snapshot("a@x", "ann"), snapshot("b@x", "bob"), snapshot("a@x", "bob")])
        let error = try #require(throws: DataStoreError.self) { try context.container.save(request) }
        #expect(error.code == .uniqueness)
        #expect(error.identifier == request.inserted[2].persistentIdentifier)
        #expect(Set(error.constraints) == [["email"], ["handle"]])
        #expect(Set(error.relatedIdentifiers) == [request.inserted[0].persistentIdentifier, request.inserted[1].persistentIdentifier])
    }

    @Test func anUpdateTakingTwoStoredValuesNamesBothObjects() throws {
        let ann = account("a@x", "ann")
        let bob = account("b@x", "bob")
        let cat = account("c@x", "cat")
        for a in [ann, bob, cat] { try context.insert(a) }
        try context.save()
        cat.email = "a@x"
        cat.handle = "bob"
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .uniqueness)
        #expect(error.identifier == cat.persistentModelID)
        #expect(Set(error.constraints) == [["email"], ["handle"]])
        #expect(Set(error.relatedIdentifiers) == [ann.persistentModelID, bob.persistentModelID])
    }
}
