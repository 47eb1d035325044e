import Foundation
import Snapshot

/// What a ``JSONStore`` is made from: a name, its schema and the one file it keeps.
package struct JSONStoreConfiguration: DataStoreConfiguration {
    package typealias Store = JSONStore

    package var name: String
    package var schema: Schema?
    /// The JSON file holding every object.
    package var fileURL: URL

    package init(name: String, schema: Schema? = nil, fileURL: URL) {
        self.name = name
        self.schema = schema
        self.fileURL = fileURL
    }
}
