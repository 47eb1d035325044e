import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport
import Testing

/// A rewrite carries each asset to the new generation by reference to its blob file: no blob
/// is written again, and the asset stays readable through the sweep, blob collection and
/// compaction.
@Suite struct MigrationCarriedAssetTests {
    typealias F = MigrationFixture

    static func renamed() throws -> Schema {
        try F.blog { e in
            e[named: "Post"].name = "Article"
            e[named: "Article"].originalName = "Post"
            e[named: "Attachment"].relationships[0].destination = "Article"
            e[named: "Tag"].relationships[0].destination = "Article"
        }
    }

    /// Opens the store with a blob threshold above the header's size, so that only the
    /// externalStorage images are blob files.
    static func open(_ home: MigrationHome, _ schema: Schema) throws -> WALDataStore {
        var configuration = F.configuration(schema, path: home.path)
        configuration.options.blobThreshold = 1 << 20
        return try WALDataStore(configuration)
    }

    static func blobFiles(_ home: MigrationHome) throws -> Set<String> {
        Set(try home.files().keys.filter { $0.hasPrefix("blobs/") })
    }

    @Test func aRenameMigrationCarriesAssetsByReferenceAndTheyStayReadable() throws {
        let home = MigrationHome()
        do {
            let store = try Self.open(home, BlogModel.schema)
            try F.fill(store)
            try store.close()
        }
        let before = try Self.blobFiles(home)
        #expect(before.count == 3, "each attachment's image is a blob file")
        let migrated = try Self.open(home, try Self.renamed())
        let expected = try F.dump(migrated)
        try migrated.close()
        // The open above migrated and swept: the new generation points at the same files.
        #expect(try Self.blobFiles(home) == before, "the rewrite wrote no blob file")
        #expect(expected.filter { $0.hasPrefix("Attachment_") }.count == 3)

        // Reopen (which finds unreferenced blobs), collect, compact, collect again: the assets remain.
        let store = try Self.open(home, try Self.renamed())
        store.engine.collectBlobsFoundAtOpen()
        _ = try store.engine.compact()
        _ = store.engine.collectUnreferencedBlobs()
        #expect(try F.dump(store) == expected)
        let images = try store.all("Attachment").compactMap { s -> Int? in
            if case .data(let d) = s["imageData"] { return d.count } else { return nil }
        }
        #expect(images.sorted() == [1, 3, 3000])
        try store.close()
        #expect(try Self.blobFiles(home) == before)
        let reopened = try Self.open(home, try Self.renamed())
        #expect(try F.dump(reopened) == expected)
        try reopened.close()
    }
}
