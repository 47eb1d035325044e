import Foundation
import Snapshot
import SnapshotTestSupport

extension WALDataStore {
    /// Inserts a post titled `title`; its permanent identifier.
    @discardableResult
    func insertPost(_ title: String, content: String? = nil) throws -> PersistentIdentifier {
        let post = BlogModel.post(title: title, content: content, date: Date(timeIntervalSinceReferenceDate: 0))
        return try save(DataStoreSaveChangesRequest(inserted: [post])).remappedIdentifiers[post.persistentIdentifier]!
    }

    /// Sets `values` on the stored object `id`.
    func update(_ id: PersistentIdentifier, _ values: [String: PropertyValue]) throws {
        var s = try fetch(FetchDescriptor(entityName: id.entityName, predicate: .identifierIn([id]))).fetchedSnapshots[0]
        for (name, value) in values { s[name] = value }
        _ = try save(DataStoreSaveChangesRequest(updated: [s]))
    }

    /// Deletes the stored object `id`.
    func deleteObject(_ id: PersistentIdentifier) throws {
        _ = try save(DataStoreSaveChangesRequest(deleted: [DefaultSnapshot(persistentIdentifier: id)]))
    }
}

extension ObservedResults {
    /// The answer's `title` values, in order.
    var titles: [String] { snapshots.map { if case .string(let t) = $0["title"] { t } else { "?" } } }
}

/// The posts whose title begins with "a", by title.
let postsBeginningWithA = FetchDescriptor(
    entityName: "Post", predicate: .attribute("title").beginsWith("a"), sortBy: [FetchSortDescriptor("title")])
