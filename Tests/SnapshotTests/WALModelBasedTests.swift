import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Random saves (inserts, updates, deletes, relationship changes) and fetches (random
/// predicates, sorts, limits) against an in-memory reference, with reopens and compactions
/// interleaved.
@Suite struct WALModelBasedTests {
    /// The reference: posts, tags and attachments by identifier, and the post–tag links.
    struct Reference {
        var posts: [PersistentIdentifier: (title: String, content: String?, date: Date)] = [:]
        var tags: [PersistentIdentifier: String] = [:]
        var attachments: [PersistentIdentifier: (data: Data, post: PersistentIdentifier?)] = [:]
        var links: Set<[PersistentIdentifier]> = []

        func snapshots() -> [PersistentIdentifier: DefaultSnapshot] {
            var result: [PersistentIdentifier: DefaultSnapshot] = [:]
            for (id, p) in posts {
                result[id] = DefaultSnapshot(
                    persistentIdentifier: id,
                    values: [
                        "title": .string(p.title), "content": p.content.map(PropertyValue.string) ?? .null, "date": .date(p.date),
                        "attachments": .toMany(attachments.filter { $0.value.post == id }.map(\.key).sorted()),
                        "tags": .toMany(links.filter { $0[0] == id }.map { $0[1] }.sorted()),
                    ])
            }
            for (id, name) in tags {
                result[id] = DefaultSnapshot(
                    persistentIdentifier: id,
                    values: [
                        "name": .string(name), "colour": .null, "posts": .toMany(links.filter { $0[1] == id }.map { $0[0] }.sorted()),
                    ])
            }
            for (id, a) in attachments {
                result[id] = DefaultSnapshot(persistentIdentifier: id, values: ["imageData": .data(a.data), "post": .toOne(a.post)])
            }
            return result
        }
    }

    @Test(arguments: [UInt64(1), 2, 3]) func randomSavesAndFetchesAgreeWithTheReference(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let home = WALHome()
        defer { home.temporary.remove() }
        var store = try home.open()
        var ref = Reference()
        let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)
        func pick<T>(_ values: [T]) -> T? { values.isEmpty ? nil : values[Int.random(in: 0..<values.count, using: &random)] }

        for step in 0..<60 {
            let current = ref.snapshots()
            let postIDs = ref.posts.keys.sorted(), tagIDs = ref.tags.keys.sorted()
            switch Int.random(in: 0..<10, using: &random) {
            case 0...3:  // insert a post, maybe a tag and an attachment, linked
                let post = BlogModel.post(
                    title: "t\(Int.random(in: 0..<5, using: &random)) \(step)", content: Bool.random(using: &random) ? "c\(step % 3)" : nil,
                    date: epoch.addingTimeInterval(Double(Int.random(in: 0..<20, using: &random)) * 3600))
                var inserted = [post]
                var links: [PersistentIdentifier] = []
                if let tag = pick(tagIDs) { links.append(tag) }
                var newTag: DefaultSnapshot?
                if Bool.random(using: &random) {
                    newTag = BlogModel.tag(name: "tag\(step)", posts: [post.persistentIdentifier])
                    inserted.append(newTag!)
                }
                var p = post
                p["tags"] = .toMany(links)
                inserted[0] = p
                let attachment =
                    Bool.random(using: &random)
                    ? BlogModel.attachment(imageData: Data(random.bytes(Int.random(in: 0..<64, using: &random))), post: post.persistentIdentifier)
                    : nil
                if let attachment { inserted.append(attachment) }
                let result = try store.save(DataStoreSaveChangesRequest(inserted: inserted))
                let m = result.remappedIdentifiers
                let pid = m[post.persistentIdentifier]!
                if case .string(let title) = post["title"]!, case .date(let date) = post["date"]! {
                    ref.posts[pid] = (title, post["content"].flatMap { if case .string(let s) = $0 { s } else { nil } }, date)
                }
                for tag in links { ref.links.insert([pid, tag]) }
                if let newTag { let tid = m[newTag.persistentIdentifier]!; ref.tags[tid] = "tag\(step)"; ref.links.insert([pid, tid]) }
                if let attachment, case .data(let d) = attachment["imageData"]! { ref.attachments[m[attachment.persistentIdentifier]!] = (d, pid) }
            case 4, 5:  // update a post: title, date, tags
                guard let id = pick(postIDs) else { continue }
                var s = current[id]!
                let title = "u\(step)"
                let date = epoch.addingTimeInterval(Double(Int.random(in: 0..<20, using: &random)) * 3600)
                s["title"] = .string(title)
                s["date"] = .date(date)
                let tags = tagIDs.filter { _ in Bool.random(using: &random) }
                s["tags"] = .toMany(tags)
                _ = try store.save(DataStoreSaveChangesRequest(updated: [s]))
                ref.posts[id]!.title = title
                ref.posts[id]!.date = date
                ref.links = ref.links.filter { $0[0] != id }.union(tags.map { [id, $0] })
            case 6:  // delete a post (its attachments cascade)
                guard let id = pick(postIDs) else { continue }
                _ = try store.save(DataStoreSaveChangesRequest(deleted: [current[id]!]))
                ref.posts[id] = nil
                ref.links = ref.links.filter { $0[0] != id }
                ref.attachments = ref.attachments.filter { $0.value.post != id }
            case 7:  // delete a tag (links nullified)
                guard let id = pick(tagIDs) else { continue }
                _ = try store.save(DataStoreSaveChangesRequest(deleted: [current[id]!]))
                ref.tags[id] = nil
                ref.links = ref.links.filter { $0[1] != id }
            case 8:  // reopen, or compact
                if Bool.random(using: &random) {
                    try store.close()
                    store = try home.open()
                } else {
                    _ = try store.engine.compact()
                }
            default:
                break
            }

            // A random fetch, against the evaluator over the reference.
            let snapshots = ref.snapshots()
            let day = epoch.addingTimeInterval(Double(Int.random(in: 0..<20, using: &random)) * 3600)
            let predicates: [FetchPredicate?] = [
                nil, .attribute("date") == day, .attribute("date") < day,
                .attribute("date") >= day && .attribute("date") <= day.addingTimeInterval(7200),
                .attribute("title").beginsWith("t\(Int.random(in: 0..<5, using: &random))"), .attribute("content").isNil,
                .relationship("tags").any(.attribute("name").beginsWith("tag")), .attribute("date") > day || .attribute("title").contains("u"),
                .attribute("date") > day && .attribute("date") < day.addingTimeInterval(-3600),
            ]
            let sorts: [[FetchSortDescriptor]] = [
                [], [.init("date")], [.init("date", order: .reverse), .init("title")], [.init("title", order: .reverse)],
            ]
            let descriptor = FetchDescriptor(
                entityName: "Post", predicate: pick(predicates)!, sortBy: pick(sorts)!,
                fetchLimit: Bool.random(using: &random) ? Int.random(in: 0...4, using: &random) : nil,
                fetchOffset: Bool.random(using: &random) ? Int.random(in: 0...2, using: &random) : nil)
            let evaluator = PredicateEvaluator(schema: BlogModel.schema) { snapshots[$0] }
            let expected = try evaluator.run(
                descriptor,
                over: snapshots.values.sorted { $0.persistentIdentifier < $1.persistentIdentifier }.sorted {
                    RawRecord.uuidBytes(uuid($0)).lexicographicallyPrecedes(RawRecord.uuidBytes(uuid($1)))
                })
            let got = try store.fetch(descriptor).fetchedSnapshots
            #expect(got == expected, "seed \(seed) step \(step): \(descriptor)")
            #expect(try store.fetchIdentifiers(DataStoreFetchRequest(descriptor: descriptor)) == expected.map(\.persistentIdentifier))
            for entity in ["Tag", "Attachment"] {
                let all = try store.all(entity)
                #expect(
                    Set(all) == Set(snapshots.values.filter { $0.persistentIdentifier.entityName == entity }), "seed \(seed) step \(step): \(entity)")
            }
        }
    }

    func uuid(_ s: DefaultSnapshot) -> UUID {
        if case .uuid(let u) = s.persistentIdentifier.primaryKey { return u }
        return UUID()
    }
}
