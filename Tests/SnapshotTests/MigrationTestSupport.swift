import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// Blog-model variants, stores of a few objects, and a dump of everything a store holds, for
/// the migration tests.
enum MigrationFixture {
    static let epoch = Date(timeIntervalSinceReferenceDate: 600_000_000)

    /// The blog model with `edit` applied to its entities.
    static func blog(_ edit: (inout [Schema.Entity]) -> Void) throws -> Schema {
        var entities = BlogModel.schema.entities
        edit(&entities)
        return try Schema(entities)
    }

    /// The blog model with Post renamed to Article (`originalName` Post, references following).
    static func renamedPost() throws -> Schema {
        try blog {
            $0[named: "Post"].name = "Article"
            $0[named: "Article"].originalName = "Post"
            $0[named: "Attachment"].relationships[0].destination = "Article"
            $0[named: "Tag"].relationships[0].destination = "Article"
        }
    }

    static func configuration(_ schema: Schema, path: String) -> WALStoreConfiguration {
        var options = LogStore.Options()
        options.blobThreshold = 1000
        return WALStoreConfiguration(name: "Blog", schema: schema, path: path, options: options)
    }

    /// Three posts (one without content), two tags, three attachments (one above the blob
    /// threshold), in the blog model.
    static func fill(_ store: WALDataStore) throws {
        let news = BlogModel.tag(name: "news"), misc = BlogModel.tag(name: "misc", colour: "red")
        var posts: [DefaultSnapshot] = []
        for (i, title) in ["alpha", "beta", "gamma"].enumerated() {
            posts.append(BlogModel.post(title: title, content: i == 1 ? nil : "text \(i)", date: epoch.addingTimeInterval(Double(i) * 60)))
        }
        posts[0]["tags"] = .toMany([news.persistentIdentifier, misc.persistentIdentifier])
        posts[1]["tags"] = .toMany([news.persistentIdentifier])
        let big = BlogModel.attachment(imageData: Data(repeating: 9, count: 3000), post: posts[0].persistentIdentifier)
        let small = BlogModel.attachment(imageData: Data([1, 2, 3]), post: posts[0].persistentIdentifier)
        let other = BlogModel.attachment(imageData: Data([4]), post: posts[2].persistentIdentifier)
        _ = try store.save(DataStoreSaveChangesRequest(inserted: posts + [news, misc, big, small, other]))
    }

    /// Every object of `schema` the store holds, one line each, sorted: entity, primary key,
    /// then every value (references as `Entity_pk`, to-many lists sorted).
    static func dump(_ store: WALDataStore) throws -> [String] {
        var lines: [String] = []
        func name(_ id: PersistentIdentifier) -> String { "\(id.entityName)_\(id.primaryKey)" }
        for entity in store.schema.entities where !entity.isAbstract {
            let result = try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: entity.name, includesSubentities: false)))
            for s in result.fetchedSnapshots {
                let values = s.values.sorted { $0.key < $1.key }.map { key, value -> String in
                    switch value {
                    case .toOne(let id): "\(key)=\(id.map(name) ?? "nil")"
                    case .toMany(let ids): "\(key)=[\(ids.map(name).sorted().joined(separator: ","))]"
                    default: "\(key)=\(value)"
                    }
                }
                lines.append("\(name(s.persistentIdentifier)) \(values.joined(separator: " "))")
            }
        }
        return lines.sorted()
    }

    /// How many engine keys of each first byte the store holds (the header included), once the
    /// sweep of the generations its header does not name has run.
    static func keyKinds(_ store: WALDataStore) throws -> [UInt8: Int] {
        store.sweepGenerations()
        return try storedKeyKinds(store)
    }

    /// How many engine keys of each first byte the store holds now (the header included).
    static func storedKeyKinds(_ store: WALDataStore) throws -> [UInt8: Int] {
        var kinds: [UInt8: Int] = [:]
        var cursor = try store.engine.scan(prefix: [])
        while let entry = try cursor.next() { kinds[entry.key[0], default: 0] += 1 }
        return kinds
    }
}

/// A store in a temporary directory that tests reopen under other schemas.
struct MigrationHome {
    let temporary = TemporaryDirectory("walstore-migration")
    var path: String { temporary.path + "/store" }

    func open(_ schema: Schema, plan: (any SchemaMigrationPlan.Type)? = nil, sweepsInBackground: Bool = true) throws -> WALDataStore {
        try WALDataStore(
            MigrationFixture.configuration(schema, path: path), migrationPlan: plan, fileSystem: PosixFileSystem(),
            sweepsInBackground: sweepsInBackground)
    }

    /// A store of the blog model holding ``MigrationFixture/fill(_:)``'s objects, closed; its dump.
    @discardableResult
    func filled() throws -> [String] {
        let store = try open(BlogModel.schema)
        try MigrationFixture.fill(store)
        let dump = try MigrationFixture.dump(store)
        try store.close()
        return dump
    }

    /// Every file under the store's directory and its bytes.
    func files() throws -> [String: Data] { try directoryFiles(path) }
}

extension [Schema.Entity] {
    /// The entity named `name`, to edit in place.
    subscript(named name: String) -> Schema.Entity {
        get { first { $0.name == name }! }
        set { self[firstIndex { $0.name == name }!] = newValue }
    }
}
