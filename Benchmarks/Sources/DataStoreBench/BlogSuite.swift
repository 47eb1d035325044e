import BenchSupport
import Foundation
import Snapshot
import SnapshotTestSupport

/// The workloads on the blog model, for one contender in its own process: saves, fetches,
/// updates, deletes and bytes on disk, on a store of `posts` posts.
struct BlogSuite {
    let kind: ContenderKind
    let options: HarnessOptions
    let directory: String
    let recorder: SuiteRecorder

    init(kind: ContenderKind, options: HarnessOptions, directory: String) {
        self.kind = kind
        self.options = options
        self.directory = directory
        recorder = SuiteRecorder(contender: kind)
    }

    var storePath: String { directory + "/store" }

    func request(_ descriptor: FetchDescriptor) -> DataStoreFetchRequest { DataStoreFetchRequest(descriptor: descriptor) }

    /// Saves the tags and `count` posts in saves of 1,000; returns the tags' and posts'
    /// identifiers and the posts' titles, and the seconds the post saves took.
    static func fill(_ store: any BenchDataStore, posts count: Int, tags tagCount: Int) async throws
        -> (tags: [PersistentIdentifier], posts: [PersistentIdentifier], titles: [String], seconds: Double)
    {
        let tagSnapshots = BlogData.tags(tagCount)
        let saved = try store.saveSync(DataStoreSaveChangesRequest(inserted: tagSnapshots))
        let tags = try tagSnapshots.map { snapshot in
            guard let id = saved.remappedIdentifiers[snapshot.persistentIdentifier] else { throw BenchError("a tag was not remapped") }
            return id
        }
        var stream = BlogData.PostStream(tagCount: tagCount)
        var ids: [PersistentIdentifier] = []
        var titles: [String] = []
        ids.reserveCapacity(count)
        var total = 0.0
        var index = 0
        while index < count {
            let batch = (index..<min(index + 1_000, count)).map { _ in stream.next(tags: tags) }
            var result: DataStoreSaveChangesResult<DefaultSnapshot>?
            total += try await seconds { result = try store.saveSync(DataStoreSaveChangesRequest(inserted: batch)) }
            for snapshot in batch {
                guard let id = result?.remappedIdentifiers[snapshot.persistentIdentifier] else { throw BenchError("a post was not remapped") }
                ids.append(id)
                if case .string(let title)? = snapshot["title"] { titles.append(title) }
            }
            index += batch.count
        }
        return (tags, ids, titles, total)
    }

    func run() async throws {
        let n = options.posts
        let schema = BlogData.schema
        // save-batch, then the bytes on disk of the closed store.
        var filled: (tags: [PersistentIdentifier], posts: [PersistentIdentifier], titles: [String], seconds: Double)?
        try await kind.withStore(storePath, schema: schema) { store in
            filled = try await Self.fill(store, posts: n, tags: options.tags)
        }
        guard let filled else { throw BenchError("no fill") }
        recorder.rate("save-batch (1,000 posts with 2 of \(options.tags) tags per save), posts/s", n, filled.seconds, "posts/s")
        let bytes = StoreFiles.bytesOnDisk(storePath)
        recorder.add("bytes on disk per post (closed store, tags included), B", Double(bytes) / Double(n), "B", higherIsBetter: false)

        try await kind.withStore(storePath, schema: schema) { store in
            try await fetches(store, filled.posts, filled.titles)
            try await update(store, filled.posts)
            try await saveSingle(store, tags: filled.tags)
            try await saveConcurrent(store)
            try await deleteCascade(store)
        }
        try await assets()
    }

    // MARK: Fetches

    private func fetches(_ store: any BenchDataStore, _ ids: [PersistentIdentifier], _ titles: [String]) async throws {
        let n = ids.count
        var count = 0
        let all = try await seconds {
            count = try store.fetchSync(request(FetchDescriptor(entityName: "Post", sortBy: [FetchSortDescriptor("date")]))).fetchedSnapshots.count
        }
        guard count >= n else { throw BenchError("fetch-all-sorted returned \(count) of \(n)") }
        recorder.milliseconds("fetch-all-sorted (every post by date), ms", all, String(format: "%.2f µs per post", all / Double(n) * 1e6))

        let word = FetchDescriptor(
            entityName: "Post", predicate: .attribute("title").contains("swift"), sortBy: [FetchSortDescriptor("date")], fetchLimit: 50)
        var returned = 0
        let wordTime = try await medianSeconds(5) { returned = try store.fetchSync(request(word)).fetchedSnapshots.count }
        recorder.milliseconds("fetch-predicate (title contains a word, by date, limit 50), ms", wordTime, "\(returned) returned, median of 5")

        let title = titles[n / 2]
        let equal = FetchDescriptor(entityName: "Post", predicate: .attribute("title") == title)
        let equalTime = try await medianSeconds(5) { returned = try store.fetchSync(request(equal)).fetchedSnapshots.count }
        recorder.milliseconds("fetch-indexed, equality (title == x, index title+date), ms", equalTime, "\(returned) returned, median of 5")

        let range = FetchDescriptor(
            entityName: "Post", predicate: .attribute("date") >= BlogData.date(minutes: n / 2), sortBy: [FetchSortDescriptor("date")], fetchLimit: 50)
        let rangeTime = try await medianSeconds(5) { returned = try store.fetchSync(request(range)).fetchedSnapshots.count }
        recorder.milliseconds("fetch-indexed, range (date >= x, by date, limit 50), ms", rangeTime, "\(returned) returned, median of 5")

        var pick = SplitMix64(seed: 9)
        let wanted = Set((0..<100).map { _ in ids[pick.below(n)] })
        let resolveTime = try await medianSeconds(5) {
            returned = try store.fetchSync(request(FetchDescriptor(entityName: "Post", predicate: .identifier(in: wanted)))).fetchedSnapshots.count
        }
        guard returned == wanted.count else { throw BenchError("resolve found \(returned) of \(wanted.count)") }
        recorder.milliseconds("resolve (100 identifiers, .identifier(in:)), ms", resolveTime, "median of 5")

        let prefetch = FetchDescriptor(
            entityName: "Post", predicate: .attribute("date") >= BlogData.date(minutes: n / 2), sortBy: [FetchSortDescriptor("date")], fetchLimit: 100,
            relationshipKeyPathsForPrefetching: ["tags"])
        var related = 0
        let prefetchTime = try await medianSeconds(3) { related = try store.fetchSync(request(prefetch)).relatedSnapshots.count }
        recorder.milliseconds("fetch-prefetch (100 posts with their tags prefetched), ms", prefetchTime, "\(related) tags related, median of 3")

        let countTime = try await medianSeconds(5) {
            returned = try store.countSync(request(FetchDescriptor(entityName: "Post", predicate: .attribute("title").contains("swift"))))
        }
        recorder.milliseconds("count (title contains a word), ms", countTime, "\(returned) counted, median of 5")
    }

    // MARK: Writes

    /// 10% of the posts, 100 per save: new titles, everything else as stored.
    private func update(_ store: any BenchDataStore, _ ids: [PersistentIdentifier]) async throws {
        var pick = SplitMix64(seed: 11)
        var chosen = ids
        pick.shuffle(&chosen)
        chosen = Array(chosen.prefix(max(100, ids.count / 10)))
        var total = 0.0
        var start = 0
        while start < chosen.count {
            let part = Set(chosen[start..<min(start + 100, chosen.count)])
            var snapshots = try store.fetchSync(request(FetchDescriptor(entityName: "Post", predicate: .identifier(in: part)))).fetchedSnapshots
            for i in snapshots.indices {
                if case .string(let title)? = snapshots[i]["title"] { snapshots[i]["title"] = .string(title + " (edited)") }
            }
            let changes = snapshots
            total += try await seconds { _ = try store.saveSync(DataStoreSaveChangesRequest(updated: changes)) }
            start += 100
        }
        recorder.rate("update (10% of posts, 100 per save; fetch untimed), posts/s", chosen.count, total, "posts/s")
    }

    private func saveSingle(_ store: any BenchDataStore, tags: [PersistentIdentifier]) async throws {
        var stream = BlogData.PostStream(tagCount: options.tags)
        let saves = options.singleSaves
        let time = try await seconds {
            for _ in 0..<saves { _ = try store.saveSync(DataStoreSaveChangesRequest(inserted: [stream.next(tags: tags)])) }
        }
        recorder.rate("save-single (one post with 2 tags per durable save), saves/s", saves, time, "saves/s", String(format: "%.0f µs per save", time / Double(saves) * 1e6))
    }

    /// 8 tasks, one post per save, through the async API.
    private func saveConcurrent(_ store: any BenchDataStore) async throws {
        let tasks = 8
        let each = options.singleSaves / tasks
        let time = try await seconds {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for t in 0..<tasks {
                    group.addTask {
                        var stream = BlogData.PostStream(tagCount: 2)
                        for _ in 0..<each {
                            var post = stream.next(tags: [])
                            post["title"] = .string("task \(t)")
                            _ = try await store.save(DataStoreSaveChangesRequest(inserted: [post]))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        recorder.rate("save-concurrent (8 tasks, one post per save, async API), saves/s", tasks * each, time, "saves/s")
    }

    /// Posts with one 4 KiB attachment each, inserted untimed, then deleted 100 per save (the
    /// attachments by the cascade rule, the tag links nullified).
    private func deleteCascade(_ store: any BenchDataStore) async throws {
        let count = options.quick ? 200 : 1_000
        var random = SplitMix64(seed: 13)
        var ids: [PersistentIdentifier] = []
        for start in stride(from: 0, to: count, by: 100) {
            var inserted: [DefaultSnapshot] = []
            for i in start..<min(start + 100, count) {
                var post = BlogModel.post(title: "doomed \(i)", date: BlogData.date(minutes: -i))
                let attachment = BlogModel.attachment(imageData: Data(random.bytes(4_096)), post: post.persistentIdentifier)
                post["attachments"] = .toMany([attachment.persistentIdentifier])
                inserted += [post, attachment]
            }
            let result = try store.saveSync(DataStoreSaveChangesRequest(inserted: inserted))
            ids += inserted.filter { $0.persistentIdentifier.entityName == "Post" }.compactMap { result.remappedIdentifiers[$0.persistentIdentifier] }
        }
        let before = try store.countSync(request(FetchDescriptor(entityName: "Attachment")))
        let time = try await seconds {
            for start in stride(from: 0, to: ids.count, by: 100) {
                let part = ids[start..<min(start + 100, ids.count)].map { DefaultSnapshot(persistentIdentifier: $0) }
                _ = try store.saveSync(DataStoreSaveChangesRequest(deleted: part))
            }
        }
        let after = try store.countSync(request(FetchDescriptor(entityName: "Attachment")))
        guard before - after == count else { throw BenchError("delete-cascade removed \(before - after) attachments of \(count)") }
        recorder.rate("delete-cascade (posts with their attachment, 100 per save), posts/s", count, time, "posts/s")
    }

    /// 1 MiB attachments, one per durable save, then read back by identifier.
    private func assets() async throws {
        let count = options.quick ? 5 : 20
        var random = SplitMix64(seed: 17)
        let blobs = (0..<count).map { _ in Data(random.bytes(1 << 20)) }
        var ids: [PersistentIdentifier] = []
        var write = 0.0
        var read = 0.0
        try await kind.withStore(directory + "/assets", schema: BlogData.schema) { store in
            for (i, blob) in blobs.enumerated() {
                var post = BlogModel.post(title: "asset \(i)", date: BlogData.date(minutes: i))
                let attachment = BlogModel.attachment(imageData: blob, post: post.persistentIdentifier)
                post["attachments"] = .toMany([attachment.persistentIdentifier])
                var result: DataStoreSaveChangesResult<DefaultSnapshot>?
                write += try await seconds { result = try store.saveSync(DataStoreSaveChangesRequest(inserted: [post, attachment])) }
                guard let id = result?.remappedIdentifiers[attachment.persistentIdentifier] else { throw BenchError("an attachment was not remapped") }
                ids.append(id)
            }
            for (id, blob) in zip(ids, blobs) {
                var got: DefaultSnapshot?
                read += try await seconds {
                    got = try store.fetchSync(request(FetchDescriptor(entityName: "Attachment", predicate: .identifier(in: [id])))).fetchedSnapshots.first
                }
                guard got?["imageData"] == .data(blob) else { throw BenchError("an attachment read back differs") }
            }
        }
        let megabytes = Double(count << 20) / 1e6
        recorder.add("assets write (1 MiB attachment per durable save), MB/s", megabytes / write, "MB/s", higherIsBetter: true)
        recorder.add("assets read (1 MiB attachment by identifier, warm), MB/s", megabytes / read, "MB/s", higherIsBetter: true)
    }
}
