import EngineTestSupport
import Testing

// README:begin
import Foundation
import Models
import Snapshot

final class Memo: ModelObject, PersistentModel {
    var text = ""
    var created = Date.now
    static let properties: [ModelProperty<Memo>] = [.attribute(\.text), .attribute(\.created)]
}

@StoreActor
func keepMemo(_ text: String, in directory: URL) throws -> [String] {
    let container = try StoreContainer(
        schema: Schema(models: Memo.self),
        configurations: [.init(name: "Memos", entityNames: nil, directory: directory)])  // one store: every entity
    defer { try? container.close() }
    let context = ModelContext(container)
    let memo = Memo()
    memo.text = text
    try context.insert(memo)
    try context.save()  // durable when it returns
    let memos = try context.fetch(
        FetchDescriptor<Memo>(predicate: #Predicate { $0.text.contains("milk") }, sortBy: [SortDescriptor(\.created)]))
    return memos.map(\.text)
}
// README:end

/// The README's first app (one store), compiled and run; a test keeps the README's copy identical.
@Suite struct ReadmeFirstAppTests {
    @Test func theFirstAppKeepsItsMemosAcrossOpens() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("first-app-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try await keepMemo("Buy oat milk", in: directory) == ["Buy oat milk"])
        #expect(try await keepMemo("Call Ann", in: directory) == ["Buy oat milk"], "a memo without milk is kept, not matched")
        #expect(try await keepMemo("More milk", in: directory) == ["Buy oat milk", "More milk"], "the store kept every memo")
    }

    @Test func theReadmeShowsTheFirstAppAsCompiled() throws {
        let (compiled, shown) = try ReadmeSnippet.compiledAndShown(sourcePath: #filePath, marker: "first-app")
        #expect(!compiled.isEmpty)
        #expect(shown == compiled, "README.md's first app differs from Tests/ModelsTests/ReadmeFirstAppTests.swift")
    }
}
