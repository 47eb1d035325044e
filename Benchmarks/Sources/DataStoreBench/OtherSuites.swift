import BenchSupport
import Foundation
import Snapshot

/// The parts run in processes of their own besides ``BlogSuite``: the cold open, the million
/// saved objects (with the process's peak memory), and the comparison with the JSON store at
/// the scale it finishes.
enum OtherSuites {
    /// Opens the store the blog suite left (its files dropped from the page cache first), then
    /// runs the first `fetch-predicate`; the resident memory the open and fetch added, per post.
    static func open(_ kind: ContenderKind, options: HarnessOptions, directory: String, recorder: SuiteRecorder) async throws {
        let path = directory + "/store"
        try StoreFiles.dropPageCache(path)
        let before = ProcessMemory.resident
        var store: (any BenchDataStore)?
        let openTime = try await seconds { store = try kind.open(path, schema: BlogData.schema) }
        guard let store else { throw BenchError("no store") }
        let word = FetchDescriptor(
            entityName: "Post", predicate: .attribute("title").contains("swift"), sortBy: [FetchSortDescriptor("date")], fetchLimit: 50)
        let fetchTime = try await seconds { _ = try store.fetchSync(DataStoreFetchRequest(descriptor: word)) }
        let growth = ProcessMemory.resident - before
        try store.shut()
        recorder.milliseconds("open (fresh process, page cache dropped), ms", openTime)
        recorder.milliseconds("open + first fetch-predicate (same), ms", openTime + fetchTime)
        recorder.add("resident memory per post (growth over open + first fetch), B", Double(growth) / Double(options.posts), "B", higherIsBetter: false)
    }

    /// `users` User objects in saves of 10,000: objects/s and the process's peak resident set.
    static func saveMillion(_ kind: ContenderKind, options: HarnessOptions, directory: String, recorder: SuiteRecorder) async throws {
        let count = options.users
        var total = 0.0
        try await kind.withStore(directory + "/users", schema: BlogData.userSchema) { store in
            var start = 0
            while start < count {
                let batch = (start..<min(start + 10_000, count)).map(BlogData.user)
                total += try await seconds { _ = try store.saveSync(DataStoreSaveChangesRequest(inserted: batch)) }
                start += batch.count
            }
        }
        recorder.rate("save-million (\(count) users, 10,000 per save), objects/s", count, total, "objects/s")
        recorder.add("save-million: peak resident memory of the process (VmHWM), MB", Double(ProcessMemory.peakResident) / 1e6, "MB", higherIsBetter: false)
    }

    /// At the JSON store's scale: save-batch, save-single into the store, fetch-predicate,
    /// resolve and count.
    static func jsonScale(_ kind: ContenderKind, options: HarnessOptions, directory: String, recorder: SuiteRecorder) async throws {
        let n = min(options.posts, options.jsonPosts)
        try await kind.withStore(directory + "/capped", schema: BlogData.schema) { store in
            let filled = try await BlogSuite.fill(store, posts: n, tags: options.tags)
            recorder.rate("save-batch into a store of up to \(n) posts, posts/s", n, filled.seconds, "posts/s")
            // The JSON store rewrites its whole file per save: a few saves are enough.
            let saves = kind == .json ? 5 : options.singleSaves
            var stream = BlogData.PostStream(tagCount: options.tags)
            let single = try await seconds {
                for _ in 0..<saves { _ = try store.saveSync(DataStoreSaveChangesRequest(inserted: [stream.next(tags: filled.tags)])) }
            }
            recorder.add("save-single into a store of \(n) posts, µs/save", single / Double(saves) * 1e6, "µs", higherIsBetter: false, "\(saves) saves")
            let word = FetchDescriptor(
                entityName: "Post", predicate: .attribute("title").contains("swift"), sortBy: [FetchSortDescriptor("date")], fetchLimit: 50)
            let wordTime = try await medianSeconds(3) { _ = try store.fetchSync(DataStoreFetchRequest(descriptor: word)) }
            recorder.milliseconds("fetch-predicate over \(n) posts, ms", wordTime)
            var pick = SplitMix64(seed: 9)
            let wanted = Set((0..<100).map { _ in filled.posts[pick.below(n)] })
            let resolveTime = try await medianSeconds(3) {
                _ = try store.fetchSync(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: "Post", predicate: .identifier(in: wanted))))
            }
            recorder.milliseconds("resolve 100 identifiers among \(n) posts, ms", resolveTime)
        }
    }
}
