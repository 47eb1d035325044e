import Foundation
import Snapshot

/// What a ``JSONStore`` is made from: a name, its schema and the one file it keeps.
public struct JSONStoreConfiguration: DataStoreConfiguration {
    /// The store this configuration makes.
    public typealias Store = JSONStore

    /// The configuration's name.
    public var name: String
    /// The entities the store holds; a ``JSONStore`` needs one.
    public var schema: Schema?
    /// The JSON file holding every object.
    public var fileURL: URL

    /// A configuration for the store kept in the file at `fileURL`.
    public init(name: String, schema: Schema? = nil, fileURL: URL) {
        self.name = name
        self.schema = schema
        self.fileURL = fileURL
    }
}
