import Engine
import Foundation
import Snapshot

extension StoreContainer {
    /// What opening a container's stores made.
    struct OpenedStores {
        /// One store per configuration, in order.
        var stores: [WALDataStore]
        /// The private directory of the in-memory configurations' stores, when there are any.
        var memoryDirectory: String?
    }

    /// Opens one store per configuration, all or none.
    ///
    /// Stores whose directories already hold files are opened first, then the new ones are
    /// made, each after its missing parent directories. When any store is refused, the stores
    /// opened so far are closed, and every directory this call made is removed (on the POSIX
    /// file system: another one cannot remove directories): nothing is left created behind.
    static func openStores(
        _ configurations: [Configuration], layout: Layout, schema: Schema, migrationPlan: (any ModelMigrationPlan.Type)?,
        history: WALStoreConfiguration.History, fileSystem: any FileSystem
    ) throws -> OpenedStores {
        let removesDirectories = fileSystem is PosixFileSystem
        let memoryDirectory =
            configurations.contains(where: \.isStoredInMemoryOnly)
            ? (NSTemporaryDirectory() as NSString).appendingPathComponent("walstore-in-memory-\(UUID().uuidString)") : nil
        let storeConfigurations = configurations.enumerated().map { i, c in
            var options = c.options
            var path = c.path
            if c.isStoredInMemoryOnly, let memoryDirectory {
                path = memoryDirectory + "/" + "\(i)"
                options.syncMode = .none
                options.creation = .ifMissing
            }
            var configuration = WALStoreConfiguration(name: c.name, schema: layout.schemas[i], path: path, options: options)
            configuration.history = history
            configuration.missingHeader = c.missingHeader
            return configuration
        }
        if let migrationPlan {
            // A model of the plan that would lose data is refused before anything is made.
            do {
                for version in migrationPlan.schemas { try version.checkModels() }
            } catch {
                let refusal = error as? DataStoreError
                throw ContainerError(
                    .invalidSchema,
                    "A model of the migration plan would lose data: \(refusal?.message ?? "\(error)") No store of the container was opened.",
                    entityName: refusal?.entityName, configurationNames: configurations.map(\.name), underlying: refusal)
            }
        }
        var created: [String] = []
        var opened: [Int: WALDataStore] = [:]
        do {
            let exists = try storeConfigurations.map { try holdsFiles($0.path, fileSystem) }
            let order = storeConfigurations.indices.filter { exists[$0] } + storeConfigurations.indices.filter { !exists[$0] }
            for i in order {
                let configuration = storeConfigurations[i]
                if !exists[i], configuration.options.creation != .never {
                    created += try makeParents(of: configuration.path, configurationName: configuration.name, fileSystem: fileSystem)
                    if try !directoryExists(configuration.path, fileSystem) { created.append(configuration.path) }
                }
                opened[i] = try open(configuration, fileSystem: fileSystem) {
                    try openStore(
                        configuration, index: i, plan: migrationPlan, configurations: configurations, schema: schema, layout: layout,
                        fileSystem: fileSystem)
                }
            }
        } catch {
            for store in opened.values { try? store.close() }
            if removesDirectories {
                for directory in created + (memoryDirectory.map { [$0] } ?? []) { try? FileManager.default.removeItem(atPath: directory) }
            }
            throw error
        }
        return OpenedStores(stores: storeConfigurations.indices.map { opened[$0]! }, memoryDirectory: memoryDirectory)
    }

    /// Opens one store with `body` (migrating it), a refusal that names the configuration as a
    /// ``ContainerError``.
    private static func open(
        _ configuration: WALStoreConfiguration, fileSystem: any FileSystem, _ body: () throws -> WALDataStore
    ) throws -> WALDataStore {
        do {
            return try body()
        } catch {
            throw openingRefusal(error, configurationName: configuration.name, path: configuration.path)
        }
    }

    /// `error`, met while opening the store of the configuration `configurationName` at `path`,
    /// as the ``ContainerError`` that names the configuration and the cause (the store's error
    /// kept as ``ContainerError/underlying``). A ``ContainerError`` is returned as it is.
    static func openingRefusal(_ error: any Error, configurationName: String, path: String) -> ContainerError {
        if let error = error as? ContainerError { return error }
        let storeError = wrapped(error, "Opening the store")
        guard let store = storeError as? DataStoreError else {
            return ContainerError(
                .storeFailed,
                "The store of the configuration \(configurationName) (\(path)) could not be opened. No store of the container was opened.",
                configurationNames: [configurationName], underlying: storeError)
        }
        let place = "The store of the configuration \(configurationName) (\(path))"
        let (code, message): (ContainerError.Code, String)
        switch store.code {
        case _ where (store.underlying as? EngineError)?.errno == ENOTDIR:
            (code, message) = (
                .notADirectory,
                "\(place) cannot be opened: the path is a file, or lies under a file, where a directory is needed; nothing was written. Choose a directory path."
            )
        case .locked:
            (code, message) = (
                .locked,
                "\(place) is open elsewhere (another container or store, in this process or another, holds its lock); close that one first."
            )
        case .notAStore:
            (code, message) = (
                .notAStore,
                "\(place) holds other files, or an engine store no WALDataStore wrote; nothing was written there. Choose an empty or new directory."
            )
        case .permissionDenied:
            (code, message) = (
                .permissionDenied,
                "\(place) cannot be opened: the operating system refused access; fix the permissions or choose another directory."
            )
        case .corrupted:
            (code, message) = (.corrupted, "\(place) is damaged; salvage it (LogStore.salvage(at:)) or restore it from a copy.")
        case .headerLost:
            (code, message) = (
                .headerLost,
                "\(place) holds a quarantine/ folder, where salvage set damaged bytes aside, but no WALDataStore header: the store lost it, and opening would start a new, empty store there; nothing was written. Run `walstore verify` on the directory, restore the store from a copy, or set the configuration's missingHeader to .createStore to start a new store there on purpose."
            )
        case .schemaMismatch:
            (code, message) = (.schemaMismatch, "\(place) cannot be opened in the configured schema: \(store.message)")
        case .migrationFailed, .uniqueness, .missingValue, .valueTooLongForKey:
            (code, message) = (.migrationFailed, "\(place) could not be migrated to the configured schema: \(store.message)")
        default:
            (code, message) = (.storeFailed, "\(place) could not be opened: \(store.message)")
        }
        return ContainerError(
            code, message + " No store of the container was opened.", entityName: store.entityName, configurationNames: [configurationName],
            underlying: store)
    }

    /// Makes the missing parent directories of `path` (not `path` itself: the engine makes
    /// that), outermost first, each one's entry made durable; returns those it made.
    private static func makeParents(of path: String, configurationName: String, fileSystem: any FileSystem) throws -> [String] {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).dropLast()
        let absolute = path.hasPrefix("/")
        var made: [String] = []
        var current = ""
        for (n, part) in parts.enumerated() {
            let parent = n > 0 ? current : absolute ? "/" : "."
            current = n > 0 ? current + "/" + part : (absolute ? "/" : "") + part
            do {
                if try !directoryExists(current, fileSystem), try fileSystem.createDirectory(current) {
                    made.append(current)
                    try fileSystem.syncDirectory(parent)
                }
            } catch let error as EngineError {
                let wrapped = wrapped(error, "Making the directory \(current)")
                if let store = wrapped as? DataStoreError, store.code == .permissionDenied {
                    throw ContainerError(
                        .permissionDenied,
                        "The parent directory \(current) of the configuration \(configurationName)'s store cannot be made: the operating system refused; fix the permissions or choose another directory. No store of the container was opened.",
                        configurationNames: [configurationName], underlying: wrapped)
                }
                throw openingRefusal(error, configurationName: configurationName, path: path)
            }
        }
        return made
    }

    /// Whether `path` is a directory that holds anything (a missing one does not).
    private static func holdsFiles(_ path: String, _ fileSystem: any FileSystem) throws -> Bool {
        do throws(EngineError) {
            return try !fileSystem.listDirectory(path).isEmpty
        } catch  where error.errno == ENOENT {
            return false
        } catch {
            // Not a directory, or not readable: the engine's open says so.
            return true
        }
    }

    /// Whether `path` exists (as a directory, or something the engine will refuse).
    private static func directoryExists(_ path: String, _ fileSystem: any FileSystem) throws -> Bool {
        do throws(EngineError) {
            _ = try fileSystem.listDirectory(path)
            return true
        } catch  where error.errno == ENOENT {
            return false
        } catch {
            return true
        }
    }
}
