import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// The to-many arrays of the objects a fetch returns are read in one sorted pass per
/// relationship — one scan of the relationship's keys that seeks from each object's prefix to
/// the next — not one scan opened per object, and they hold exactly each object's targets.
@Suite struct ToManyPassTests {
    static let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)

    /// 5 tags; 40 posts, post i tagged with tags i % 5 and (i + 1) % 5; every fourth post with an
    /// attachment. Returns the store and, by title, the tag names of each post.
    static func store(_ home: WALHome) throws -> (WALDataStore, [String: Set<String>]) {
        let store = try home.open()
        var tags = (0..<5).map { BlogModel.tag(name: "tag \($0)") }
        var posts: [DefaultSnapshot] = []
        var attachments: [DefaultSnapshot] = []
        var expected: [String: Set<String>] = [:]
        for i in 0..<40 {
            var post = BlogModel.post(title: "post \(i)", date: epoch.addingTimeInterval(Double(i)))
            let chosen = [i % 5, (i + 1) % 5]
            post["tags"] = .toMany(chosen.map { tags[$0].persistentIdentifier })
            for t in chosen {
                guard case .toMany(let list)? = tags[t]["posts"] else { continue }
                tags[t]["posts"] = .toMany(list + [post.persistentIdentifier])
            }
            if i % 4 == 0 {
                let attachment = BlogModel.attachment(imageData: Data([UInt8(i)]), post: post.persistentIdentifier)
                post["attachments"] = .toMany([attachment.persistentIdentifier])
                attachments.append(attachment)
            }
            expected["post \(i)"] = Set(chosen.map { "tag \($0)" })
            posts.append(post)
        }
        _ = try store.save(DataStoreSaveChangesRequest(inserted: tags + posts + attachments))
        return (store, expected)
    }

    @Test func aFetchReadsItsObjectsToManyArraysInOnePassPerRelationship() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let (store, expected) = try Self.store(home)
        defer { try? store.close() }
        let before = store.engine.scanFigures
        let posts = try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Post"))).fetchedSnapshots
        let after = store.engine.scanFigures
        #expect(posts.count == 40)
        // The posts' scan, then one for the tags' links and one for the attachments' back
        // references: not two per post.
        #expect(after.opened - before.opened <= 4, "\(after.opened - before.opened) scans opened for 40 posts")
        // The posts are read in key order, so each post's keys follow the last one's: the
        // scan steps on to them rather than seeking (a seek only where keys lie between).
        #expect(after.seeks - before.seeks < 40, "\(after.seeks - before.seeks) seeks for 40 posts")
        let tagNames = Dictionary(
            uniqueKeysWithValues: try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Tag"))).fetchedSnapshots.map {
                ($0.persistentIdentifier, $0["name"])
            })
        for post in posts {
            guard case .string(let title)? = post["title"], case .toMany(let tags)? = post["tags"],
                case .toMany(let attachments)? = post["attachments"]
            else {
                Issue.record("a post without its title or arrays")
                continue
            }
            let names = Set(tags.compactMap { id -> String? in if case .string(let s)?? = tagNames[id] { s } else { nil } })
            #expect(names == expected[title], "\(title)")
            #expect(attachments.count == (Int(title.dropFirst(5))! % 4 == 0 ? 1 : 0), "\(title)")
        }
    }

    @Test func objectsResolvedByIdentifierGetTheirToManyArraysInOnePass() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let (store, _) = try Self.store(home)
        defer { try? store.close() }
        let tags = try store.fetchIdentifiers(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Tag")))
        let before = store.engine.scanFigures
        let resolved = try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Tag", predicate: .identifierIn(Set(tags)))))
            .fetchedSnapshots
        let after = store.engine.scanFigures
        #expect(resolved.count == 5)
        #expect(after.opened - before.opened <= 2, "\(after.opened - before.opened) scans opened for 5 tags")
        // Each tag is on 16 posts (two tags on each of 40 posts, five tags).
        for tag in resolved {
            guard case .toMany(let posts)? = tag["posts"] else {
                Issue.record("a tag without its posts")
                continue
            }
            #expect(posts.count == 16, "\(tag["name"] ?? .null)")
        }
    }

    /// Every other post: the keys of the posts left out lie between those of the posts read, so
    /// the scan must seek past them, and each post gets its own targets, none of its neighbour's.
    @Test func objectsWithOtherObjectsKeysBetweenThemGetExactlyTheirOwnTargets() throws {
        let home = WALHome()
        defer { home.temporary.remove() }
        let (store, expected) = try Self.store(home)
        defer { try? store.close() }
        let all = try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Post"))).fetchedSnapshots
        let chosen = Set(all.enumerated().filter { $0.offset % 2 == 0 }.map(\.element.persistentIdentifier))
        let posts = try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Post", predicate: .identifierIn(chosen))))
            .fetchedSnapshots
        #expect(posts.count == 20)
        let tagNames = Dictionary(
            uniqueKeysWithValues: try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Tag"))).fetchedSnapshots.map {
                ($0.persistentIdentifier, $0["name"])
            })
        for post in posts {
            guard case .string(let title)? = post["title"], case .toMany(let tags)? = post["tags"] else {
                Issue.record("a post without its title or tags")
                continue
            }
            let names = Set(tags.compactMap { id -> String? in if case .string(let s)?? = tagNames[id] { s } else { nil } })
            #expect(names == expected[title], "\(title)")
        }
    }
}
