import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Random saves with history on (count retention), reopens and compactions, against a
/// reference log the test keeps: each save's expected transaction is derived from the objects
/// before and after it and from the request, by the documented order.
@Suite struct WALHistoryModelBasedTests {
    struct Expected: Equatable, CustomStringConvertible {
        var token: UInt64
        var author: String?
        var changes: [ChangeSummary]
        var description: String { "\(token) \(author ?? "-") \(changes)" }
    }

    static func state(_ store: WALDataStore) throws -> [PersistentIdentifier: DefaultSnapshot] {
        var result: [PersistentIdentifier: DefaultSnapshot] = [:]
        for entity in ["Post", "Tag", "Attachment"] { for s in try store.all(entity) { result[s.persistentIdentifier] = s } }
        return result
    }

    static func changedNames(_ old: DefaultSnapshot, _ new: DefaultSnapshot) -> [String] {
        BlogModel.schema.allProperties(of: new.persistentIdentifier.entityName).compactMap { property in
            let a = old.values[property.name] ?? .null, b = new.values[property.name] ?? .null
            if case .relationship = property { return Set(a.referencedIdentifiers) == Set(b.referencedIdentifiers) ? nil : property.name }
            return a == b ? nil : property.name
        }.sorted()
    }

    /// The transaction a save should have recorded.
    static func expected(
        _ before: [PersistentIdentifier: DefaultSnapshot], _ after: [PersistentIdentifier: DefaultSnapshot], requestOrder: [PersistentIdentifier]
    ) -> [ChangeSummary] {
        var seen: Set<PersistentIdentifier> = []
        var result: [ChangeSummary] = []
        func consider(_ id: PersistentIdentifier) {
            guard seen.insert(id).inserted else { return }
            switch (before[id], after[id]) {
            case (nil, .some): result.append(.insert(id))
            case (.some, nil): result.append(.delete(id, [:]))
            case (let old?, let new?):
                let names = changedNames(old, new)
                if !names.isEmpty { result.append(.update(id, names)) }
            default: break
            }
        }
        requestOrder.forEach(consider)
        before.keys.filter { after[$0] == nil }.sorted().forEach(consider)
        Set(before.keys).union(after.keys).sorted().forEach(consider)
        return result
    }

    @Test(arguments: [UInt64(11), 12, 13]) func randomSavesRecordTheTransactionsOfTheReferenceLog(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let home = WALHome()
        defer { home.temporary.remove() }
        let keep = 20
        let configuration = home.historyConfiguration(.enabled(maximumCount: keep))
        var store = try WALDataStore(configuration)
        var log: [Expected] = []
        var token: UInt64 = 0
        let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)
        func pick<T>(_ values: [T]) -> T? { values.isEmpty ? nil : values[Int.random(in: 0..<values.count, using: &random)] }

        for step in 0..<70 {
            let before = try Self.state(store)
            let posts = before.keys.filter { $0.entityName == "Post" }.sorted(), tags = before.keys.filter { $0.entityName == "Tag" }.sorted()
            let author = pick(["a", "b", nil])!
            var request = DataStoreSaveChangesRequest<DefaultSnapshot>(editingState: EditingState(author: author))
            switch Int.random(in: 0..<10, using: &random) {
            case 0...2:  // a post, maybe linked to a stored tag and a new one, maybe with an attachment
                var post = BlogModel.post(title: "p\(step)", date: epoch.addingTimeInterval(Double(step)))
                var links = pick(tags).map { [$0] } ?? []
                if Bool.random(using: &random) {
                    let tag = BlogModel.tag(name: "t\(step)", posts: [post.persistentIdentifier])
                    links.append(tag.persistentIdentifier)
                    request.inserted.append(tag)
                }
                post["tags"] = .toMany(links)
                request.inserted.insert(post, at: 0)
                if Bool.random(using: &random) {
                    request.inserted.append(BlogModel.attachment(imageData: Data([UInt8(step)]), post: post.persistentIdentifier))
                }
            case 3, 4:  // a post's title and tags
                guard let id = pick(posts) else { continue }
                var s = before[id]!
                if Bool.random(using: &random) { s["title"] = .string("u\(step)") }
                s["tags"] = .toMany(tags.filter { _ in Bool.random(using: &random) })
                request.updated = [s]
            case 5:  // a tag's colour (sometimes to what it is: no change, nothing recorded)
                guard let id = pick(tags) else { continue }
                var s = before[id]!
                s["colour"] = pick([.null, "red", "blue"])!
                request.updated = [s]
            case 6:  // delete a post (attachments cascade, tags lose it)
                guard let id = pick(posts) else { continue }
                request.deleted = [before[id]!]
            case 7:  // delete a tag (its posts lose it)
                guard let id = pick(tags) else { continue }
                request.deleted = [before[id]!]
            case 8:
                if Bool.random(using: &random) {
                    try store.close()
                    store = try WALDataStore(configuration)
                } else {
                    _ = try store.engine.compact()
                }
                continue
            default:
                continue
            }
            let result = try store.save(request)
            let after = try Self.state(store)
            let order =
                request.inserted.compactMap { result.remappedIdentifiers[$0.persistentIdentifier] }
                + request.updated.map(\.persistentIdentifier) + request.deleted.map(\.persistentIdentifier)
            let changes = Self.expected(before, after, requestOrder: order)
            if !changes.isEmpty {
                token += 1
                log.append(Expected(token: token, author: author, changes: changes))
            }

            // The whole kept history, and a fetch after a random token, against the log.
            let kept = Array(log.suffix(keep))
            let got = try store.allHistory().map { Expected(token: $0.token.value, author: $0.author, changes: $0.summaries) }
            #expect(got == kept, "seed \(seed) step \(step)")
            let since = UInt64.random(in: 0...token, using: &random)
            let limit = Bool.random(using: &random) ? Int.random(in: 1...5, using: &random) : nil
            let newest = Bool.random(using: &random)
            let descriptor = HistoryDescriptor<DefaultHistoryTransaction>(
                after: DefaultHistoryToken(storeIdentifier: store.identifier, value: since), fetchLimit: limit,
                sortOrder: newest ? .newestFirst : .oldestFirst)
            if since < (kept.first?.token ?? token + 1) {
                #expect(throws: DataStoreError.self, "seed \(seed) step \(step): token \(since) expired") { try store.fetchHistory(descriptor) }
            } else {
                var want = kept.filter { $0.token > since }
                if newest { want.reverse() }
                if let limit { want = Array(want.prefix(limit)) }
                #expect(try store.fetchHistory(descriptor).map(\.token.value) == want.map { $0.token }, "seed \(seed) step \(step)")
            }
        }
        #expect(token > UInt64(keep), "the run outgrew the retention")
    }
}
