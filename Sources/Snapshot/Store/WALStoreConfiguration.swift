import Engine
import Foundation

/// What a ``WALDataStore`` is made from: a name, its schema, the directory of its engine store
/// and the engine's options.
public struct WALStoreConfiguration: DataStoreConfiguration {
    /// The store this configuration opens.
    public typealias Store = WALDataStore

    /// The configuration's name (`Local`, `Cloud`, …).
    public var name: String
    /// The entities the store holds; a ``WALDataStore`` needs one.
    public var schema: Schema?
    /// The directory of the engine store (made at first open).
    public var path: String
    /// The engine's options (sync mode, blob threshold, …). In the default
    /// ``LogStore/SyncMode/durable`` mode a save that returns survives power loss.
    public var options: LogStore.Options
    /// Whether saves are recorded in the store's history, and what is kept (off by default).
    public var history: History = .disabled

    /// A configuration for a store in the directory at `path`.
    public init(name: String, schema: Schema, path: String, options: LogStore.Options = LogStore.Options()) {
        self.name = name
        self.schema = schema
        self.path = path
        self.options = options
    }

    /// A configuration for a store in the directory at the file URL `directory`.
    public init(name: String, schema: Schema, directory: URL, options: LogStore.Options = LogStore.Options()) {
        self.init(name: name, schema: schema, path: directory.path, options: options)
    }

    /// Two configurations are equal when they name the same store: name, schema, path, options
    /// and history setting.
    public static func == (lhs: WALStoreConfiguration, rhs: WALStoreConfiguration) -> Bool {
        lhs.name == rhs.name && lhs.schema == rhs.schema && lhs.path == rhs.path && lhs.options == rhs.options && lhs.history == rhs.history
    }

    /// Hashes the name, schema and path.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(schema)
        hasher.combine(path)
    }
}
