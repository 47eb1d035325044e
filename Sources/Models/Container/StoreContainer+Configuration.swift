import Engine
import Foundation
import Snapshot

extension StoreContainer {
    /// One store of a container, as SwiftData's `ModelConfiguration`: its name (`Local`,
    /// `Cloud`, `Shared`), the entities it holds, its directory and its engine's options.
    ///
    /// An entity goes where its inheritance root goes: naming a root names its whole tree, and
    /// naming a sub-entity names its root's tree too.
    public struct Configuration: Hashable, Sendable {
        /// The configuration's name, unique in the container.
        public var name: String
        /// The entities it holds; `nil` for every entity no other configuration names (at most
        /// one configuration of a container may say `nil`).
        public var entityNames: [String]?
        /// The directory of its engine store, made at first open with any missing parent
        /// directories. Ignored when ``isStoredInMemoryOnly``.
        public var path: String
        /// Whether the store lives only as long as the container, as SwiftData's
        /// `isStoredInMemoryOnly` (for tests and previews): it starts empty at every open, and
        /// nothing of it is kept once the container is closed or released. Its saves are not
        /// synced (there is nothing to keep across a crash). It is a store in a private
        /// directory of the system's temporary directory, removed at close.
        public var isStoredInMemoryOnly: Bool
        /// Whether saves may write to the store, as SwiftData's `allowsSave`. When false, a
        /// save through the container that touches the store throws
        /// ``ContainerError/Code/saveNotAllowed`` before writing anything to any store; fetches
        /// work as usual.
        public var allowsSave: Bool
        /// Its engine's options. A save that touches only this store is as durable as the
        /// sync mode says; a save across several stores is durable when it returns, whatever
        /// the mode (see ``StoreContainer/save(_:)``).
        public var options: LogStore.Options
        /// What opening does in a directory without a `WALDataStore` header that shows a store
        /// was there (a salvage's `quarantine/` folder, engine keys): refuse it (the default), or
        /// start a new store there (``WALStoreConfiguration/MissingHeader``).
        public var missingHeader: WALStoreConfiguration.MissingHeader = .refuse

        /// A configuration holding `entityNames` in the directory at `path`.
        public init(name: String, entityNames: [String]?, path: String, allowsSave: Bool = true, options: LogStore.Options = LogStore.Options()) {
            self.name = name
            self.entityNames = entityNames
            self.path = path
            self.isStoredInMemoryOnly = false
            self.allowsSave = allowsSave
            self.options = options
        }

        /// A configuration holding `entityNames` in the directory at the file URL `directory`.
        public init(name: String, entityNames: [String]?, directory: URL, allowsSave: Bool = true, options: LogStore.Options = LogStore.Options()) {
            self.init(name: name, entityNames: entityNames, path: directory.path, allowsSave: allowsSave, options: options)
        }

        /// A configuration holding `entityNames` in a store that lives only as long as the
        /// container (``isStoredInMemoryOnly``), as SwiftData's
        /// `ModelConfiguration(isStoredInMemoryOnly: true)`.
        public init(
            name: String, entityNames: [String]?, isStoredInMemoryOnly: Bool, allowsSave: Bool = true, options: LogStore.Options = LogStore.Options()
        ) {
            self.init(name: name, entityNames: entityNames, path: "", allowsSave: allowsSave, options: options)
            self.isStoredInMemoryOnly = isStoredInMemoryOnly
        }

        /// Equal when name, entities, path, storage, `allowsSave`, options and `missingHeader` are.
        public static func == (lhs: Configuration, rhs: Configuration) -> Bool {
            lhs.name == rhs.name && lhs.entityNames == rhs.entityNames && lhs.path == rhs.path && lhs.options == rhs.options
                && lhs.isStoredInMemoryOnly == rhs.isStoredInMemoryOnly && lhs.allowsSave == rhs.allowsSave
                && lhs.missingHeader == rhs.missingHeader
        }

        /// Hashes the name, entities and path.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(name)
            hasher.combine(entityNames)
            hasher.combine(path)
        }
    }
}
