import Engine
import Foundation
import Snapshot
import Synchronization

/// One schema over several stores, as SwiftData's `ModelContainer` over its
/// `ModelConfiguration`s: each ``Configuration`` names its entities, its directory and its
/// engine options, and is backed by a ``WALDataStore`` of its own.
///
/// **Routing.** Every entity belongs to exactly one configuration (a sub-entity to its root's);
/// saves and fetches go to the store of their entity, and identifiers carry their store
/// (``PersistentIdentifier/storeIdentifier``), so resolving one goes to the store that made it.
/// A relationship between entities of different configurations is refused when the container
/// is made (``ContainerError/Code/crossStoreRelationship``).
///
/// **Saves across stores are atomic** (``save(_:)``): all of a save's stores show it after a
/// crash, or none does.
///
/// **Threads.** The container is `Sendable`: its stores serialise their own calls, and a save
/// across stores holds the locks of all its stores (taken in configuration order) from its
/// first check to its last write.
public final class StoreContainer: Sendable {
    /// The whole schema.
    public let schema: Schema
    /// The configurations, in the order given.
    public let configurations: [Configuration]
    /// Each configuration's store, in the order of ``configurations``.
    public let stores: [WALDataStore]
    let layout: Layout
    private let storeIndexByIdentifierMap: [String: Int]
    /// Set when a save across stores failed after its commit point: every later call throws.
    private let interruption = Mutex<ContainerError?>(nil)
    /// Where ``mainContext`` is kept.
    let mainContextStorage = MainContextStorage()
    /// Set by ``close()``: every later call throws ``ContainerError/Code/closed``.
    private let isClosed = Mutex(false)
    /// The private directory of the in-memory configurations' stores, removed at close.
    private let memoryDirectory: String?

    /// Opens (creating if needed) one store per configuration, after checking that every entity
    /// of `schema` belongs to exactly one configuration and no relationship crosses stores, and
    /// finishes or undoes any save across stores that a crash interrupted.
    ///
    /// When it returns, every store is open, and every save across stores that had reached its
    /// commit point is complete in all its stores (and durable); any other is gone from all.
    ///
    /// A store whose stored schema differs from its part of `schema` is migrated as it opens:
    /// through `migrationPlan` when one is given (``ModelMigrationPlan``, as SwiftData's
    /// `ModelContainer(for:migrationPlan:)`), else by a lightweight migration, all of it or none
    /// of it per store. `history` says whether every store records the history of its saves
    /// (off by default; ``fetchHistory(_:)``).
    ///
    /// **All or nothing.** When one store is refused, none is left open: the stores opened so
    /// far are closed (as they were, unless opening one migrated it: a migration is not undone),
    /// and the directories this call made (a new store's, missing parents) are removed again.
    /// Missing parent directories of a configuration's path are made (unless its engine options
    /// say ``LogStore/Creation/never``). A directory that holds other files, an engine store
    /// that no `WALDataStore` wrote, or a store that lost its header (a salvage's `quarantine/`
    /// folder and no header) is refused and left untouched, unless the configuration's
    /// ``Configuration/missingHeader`` asks for a new store there.
    ///
    /// - Throws: only ``ContainerError``, naming the configuration concerned, with the error it
    ///   wraps (a store's ``DataStoreError``, and the engine's error under that) as its
    ///   ``ContainerError/underlying``: `noConfigurations`, `duplicateConfiguration`,
    ///   `entityInNoConfiguration`, `entityInSeveralConfigurations`, `unknownEntity`,
    ///   `crossStoreRelationship` before any store opens; `invalidSchema` for a plan's model that
    ///   would lose data; `notADirectory`, `permissionDenied`, `locked`, `notAStore`,
    ///   `headerLost`, `corrupted` for a store's directory or files; `schemaMismatch` for a store
    ///   no migration can take to the configured schema, `migrationFailed` for a migration that
    ///   could not be made (``WALDataStore/init(_:migrationPlan:)``); `unresolvedTransaction`;
    ///   `storeFailed` for any other failure of a store's files.
    public convenience init(
        schema: Schema, configurations: [Configuration], migrationPlan: (any ModelMigrationPlan.Type)? = nil,
        history: WALStoreConfiguration.History = .disabled
    ) throws {
        try self.init(schema: schema, configurations: configurations, migrationPlan: migrationPlan, history: history, fileSystem: PosixFileSystem())
    }

    /// Opens the container's stores on `fileSystem` (tests inject faults through it).
    package init(
        schema: Schema, configurations: [Configuration], migrationPlan: (any ModelMigrationPlan.Type)? = nil,
        history: WALStoreConfiguration.History = .disabled, fileSystem: any FileSystem
    ) throws {
        let layout = try Self.layout(schema: schema, configurations: configurations)
        let opened = try Self.openStores(
            configurations, layout: layout, schema: schema, migrationPlan: migrationPlan, history: history, fileSystem: fileSystem)
        let stores = opened.stores
        var byIdentifier: [String: Int] = [:]
        for (i, store) in stores.enumerated() { byIdentifier[store.identifier] = i }
        self.schema = schema
        self.configurations = configurations
        self.stores = stores
        self.layout = layout
        self.storeIndexByIdentifierMap = byIdentifier
        self.memoryDirectory = opened.memoryDirectory
        do {
            try resolveInterruptedSaves()
        } catch {
            try? close()
            throw error
        }
    }

    deinit {
        // An in-memory store is the container's alone: nothing of it outlives the container.
        if memoryDirectory != nil { try? close() }
    }

    /// A container over the one store a custom migration stage is given
    /// (``ModelMigrationStage/custom(fromVersion:toVersion:willMigrate:didMigrate:)``): its
    /// schema, no routing checks, nothing to recover.
    init(migrationStore store: WALDataStore) {
        schema = store.schema
        configurations = [
            Configuration(name: store.configuration.name, entityNames: nil, path: store.configuration.path, options: store.configuration.options)
        ]
        stores = [store]
        var roots: [String: Int] = [:]
        for entity in store.schema.entities where entity.superentityName == nil { roots[entity.name] = 0 }
        layout = Layout(configurationOfRoot: roots, schemas: [store.schema])
        storeIndexByIdentifierMap = [store.identifier: 0]
        memoryDirectory = nil
    }

    /// The store of the configuration named `name`, or `nil`.
    public func store(named name: String) -> WALDataStore? {
        configurations.firstIndex { $0.name == name }.map { stores[$0] }
    }

    /// The store that holds the objects of `entityName`.
    ///
    /// - Throws: ``ContainerError/Code/unknownEntity`` for an entity the schema does not declare.
    public func store(forEntity entityName: String) throws -> WALDataStore {
        stores[try storeIndex(forEntity: entityName)]
    }

    /// The store that made `identifier`.
    ///
    /// - Throws: ``ContainerError/Code/foreignIdentifier`` for a temporary identifier or one
    ///   of a store that is not in the container.
    public func store(for identifier: PersistentIdentifier) throws -> WALDataStore {
        stores[try storeIndex(for: identifier)]
    }

    /// Closes every store (each one's saves are already durable as its sync mode says) and
    /// removes the in-memory configurations' stores. Every later fetch and save of the container
    /// throws ``ContainerError/Code/closed``; closing again does nothing.
    ///
    /// - Throws: the first store's error; the others are closed all the same.
    public func close() throws {
        guard
            isClosed.withLock({ closed in
                defer { closed = true }; return !closed
            })
        else { return }
        var first: (any Error)?
        for store in stores {
            do { try store.close() } catch { if first == nil { first = error } }
        }
        if let memoryDirectory { try? FileManager.default.removeItem(atPath: memoryDirectory) }
        if let first { throw first }
    }

    // MARK: Routing

    func storeIndex(forEntity entityName: String) throws -> Int {
        guard let i = layout.configurationIndex(of: entityName, in: schema) else {
            throw ContainerError(
                .unknownEntity, "The schema declares no entity \(entityName); use a declared name.", entityName: entityName)
        }
        return i
    }

    func storeIndex(for identifier: PersistentIdentifier) throws -> Int {
        guard let store = identifier.storeIdentifier else {
            throw ContainerError(
                .foreignIdentifier, "\(identifier) is temporary: it names no store yet; save the object first.", entityName: identifier.entityName)
        }
        guard let i = storeIndexByIdentifier(store) else {
            throw ContainerError(
                .foreignIdentifier,
                "\(identifier) was made by the store \(store), which is not one of this container's; resolve it through its own container.",
                entityName: identifier.entityName)
        }
        return i
    }

    /// The index of the store whose identifier is `identifier`, or `nil`.
    func storeIndexByIdentifier(_ identifier: String) -> Int? { storeIndexByIdentifierMap[identifier] }

    /// Throws the interruption of an earlier save across stores, if there was one.
    func checkUsable() throws {
        if isClosed.withLock({ $0 }) {
            throw ContainerError(.closed, "The container is closed; open a new one to read or save.", configurationNames: configurations.map(\.name))
        }
        if let error = interruption.withLock({ $0 }) { throw error }
    }

    func markInterrupted(_ error: ContainerError) {
        interruption.withLock { $0 = $0 ?? error }
    }
}
