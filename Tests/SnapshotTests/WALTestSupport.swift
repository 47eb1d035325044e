import Engine
import EngineTestSupport
import Foundation
import Snapshot
import SnapshotTestSupport

/// A fresh WALDataStore in a temporary directory, and helpers the WAL tests share.
struct WALHome {
    let temporary: TemporaryDirectory
    let schema: Schema
    var path: String { temporary.path + "/store" }

    init(_ schema: Schema = BlogModel.schema, _ label: String = "walstore-snapshot") {
        temporary = TemporaryDirectory(label)
        self.schema = schema
    }

    var configuration: WALStoreConfiguration {
        var options = LogStore.Options()
        options.blobThreshold = 4096
        return WALStoreConfiguration(name: "Blog", schema: schema, path: path, options: options)
    }

    func open() throws -> WALDataStore { try WALDataStore(configuration) }

    /// Every file under the store's directory and its bytes.
    func files() throws -> [String: Data] { try directoryFiles(path) }
}

extension WALDataStore {
    func all(_ entity: String) throws -> [DefaultSnapshot] {
        try fetch(DataStoreFetchRequest(descriptor: FetchDescriptor(entityName: entity))).fetchedSnapshots
    }

    func fetch(_ descriptor: FetchDescriptor) throws -> DataStoreFetchResult<DefaultSnapshot> {
        try fetch(DataStoreFetchRequest(descriptor: descriptor))
    }

    func snapshot(_ id: PersistentIdentifier) throws -> DefaultSnapshot? {
        try fetch(FetchDescriptor(entityName: id.entityName, predicate: .identifier(in: [id]), includesSubentities: false)).fetchedSnapshots.first
    }
}
