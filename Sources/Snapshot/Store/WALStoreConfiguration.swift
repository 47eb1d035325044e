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
    /// What an open does in a directory that shows a store was there but holds no
    /// `WALDataStore` header (``MissingHeader``): refuse it (the default), or start a new store.
    public var missingHeader: MissingHeader = .refuse

    /// What an open does in a directory that holds no `WALDataStore` header but shows that a
    /// store was there: a `quarantine/` folder (salvage set damaged bytes aside in it), or keys
    /// of an engine store. An empty or missing directory always gets a new store, whatever this
    /// says.
    public enum MissingHeader: Sendable, Hashable {
        /// Refuse the open, writing nothing: ``DataStoreError/Code/headerLost`` when the
        /// directory holds a `quarantine/` folder, ``DataStoreError/Code/notAStore`` for an engine
        /// store with keys and no `quarantine/`. The default: a store whose header was lost
        /// (salvage dropped the commit that held it, say) must not reopen as a new, empty one.
        case refuse
        /// Start a new store there: write a new header (a new identifier, the configured schema)
        /// beside what the directory holds. Nothing already there is erased: record keys of
        /// generation 0 (FORMAT.md, "Generations") are read as the new store's records (check
        /// them with `walstore verify`), those of other generations are swept in the background,
        /// any other key is left alone, and `quarantine/` stays as it is.
        case createStore
    }

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

    /// Two configurations are equal when they name the same store: name, schema, path, options,
    /// history setting and missing-header choice.
    public static func == (lhs: WALStoreConfiguration, rhs: WALStoreConfiguration) -> Bool {
        lhs.name == rhs.name && lhs.schema == rhs.schema && lhs.path == rhs.path && lhs.options == rhs.options && lhs.history == rhs.history
            && lhs.missingHeader == rhs.missingHeader
    }

    /// Hashes the name, schema and path.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(schema)
        hasher.combine(path)
    }
}
