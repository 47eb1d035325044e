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
        /// The directory of its engine store (made at first open).
        public var path: String
        /// Its engine's options. A save that touches only this store is as durable as the
        /// sync mode says; a save across several stores is durable when it returns, whatever
        /// the mode (see ``StoreContainer/save(_:)``).
        public var options: LogStore.Options

        /// A configuration holding `entityNames` in the directory at `path`.
        public init(name: String, entityNames: [String]?, path: String, options: LogStore.Options = LogStore.Options()) {
            self.name = name
            self.entityNames = entityNames
            self.path = path
            self.options = options
        }

        /// A configuration holding `entityNames` in the directory at the file URL `directory`.
        public init(name: String, entityNames: [String]?, directory: URL, options: LogStore.Options = LogStore.Options()) {
            self.init(name: name, entityNames: entityNames, path: directory.path, options: options)
        }

        /// Equal when name, entities, path and options are.
        public static func == (lhs: Configuration, rhs: Configuration) -> Bool {
            lhs.name == rhs.name && lhs.entityNames == rhs.entityNames && lhs.path == rhs.path && lhs.options == rhs.options
        }

        /// Hashes the name, entities and path.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(name)
            hasher.combine(entityNames)
            hasher.combine(path)
        }
    }
}
