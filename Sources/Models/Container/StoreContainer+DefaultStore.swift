import Foundation
import Snapshot

extension StoreContainer {
    /// Where a configuration made without a location keeps its store, as SwiftData keeps its
    /// `default.store` in the app's Application Support directory:
    ///
    /// - **Apple platforms**: the user's Application Support directory (inside the app's
    ///   container for a sandboxed app), in a folder named after the app's bundle identifier (the
    ///   process name when it has none).
    /// - **Linux and other platforms**: `$XDG_DATA_HOME` (by default `~/.local/share`), in a
    ///   folder named after the process.
    ///
    /// The directory is made, with its parents, when a store is first opened there.
    public static var defaultDirectory: URL {
        #if canImport(Darwin)
            let base =
                FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent("Library/Application Support")
            return base.appendingPathComponent(Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName, isDirectory: true)
        #else
            return defaultDirectory(environment: ProcessInfo.processInfo.environment, processName: ProcessInfo.processInfo.processName)
        #endif
    }

    /// ``defaultDirectory`` off Apple platforms, from the process's environment and name:
    /// `$XDG_DATA_HOME/<process>` when that variable holds an absolute path (the XDG base
    /// directory rule: a relative one is ignored), else `$HOME/.local/share/<process>`.
    package static func defaultDirectory(environment: [String: String], processName: String) -> URL {
        let base: URL
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            base = URL(fileURLWithPath: data, isDirectory: true)
        } else {
            base = URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory(), isDirectory: true)
                .appendingPathComponent(".local/share", isDirectory: true)
        }
        return base.appendingPathComponent(processName, isDirectory: true)
    }

    /// A container of one store, named `default`, that holds every entity `models` declare, at
    /// ``defaultDirectory``/`default.store`: SwiftData's `ModelContainer(for:)`.
    ///
    /// ```swift
    /// let container = try StoreContainer(for: Post.self, Tag.self)
    /// ```
    ///
    /// - Throws: `DataStoreError` `.invalidSchema` when the models' declarations are refused
    ///   (nothing is touched on disk then); otherwise as
    ///   ``init(schema:configurations:migrationPlan:history:)``.
    public convenience init(for models: any EntityModel.Type..., migrationPlan: (any ModelMigrationPlan.Type)? = nil) throws {
        try self.init(models: models, directory: Self.defaultDirectory, migrationPlan: migrationPlan)
    }

    /// ``init(for:migrationPlan:)`` with `directory` standing for ``defaultDirectory``.
    package convenience init(
        models: [any EntityModel.Type], directory: URL, migrationPlan: (any ModelMigrationPlan.Type)? = nil
    ) throws {
        try self.init(
            schema: Schema(models: models), configurations: [Configuration(name: "default", entityNames: nil, in: directory)],
            migrationPlan: migrationPlan)
    }
}

extension StoreContainer.Configuration {
    /// A configuration of the store `name` holding `entityNames` (`nil`: every entity no other
    /// configuration names) at the default location, ``StoreContainer/defaultDirectory``/
    /// `<name>.store`: SwiftData's `ModelConfiguration()`.
    public init(name: String = "default", entityNames: [String]? = nil, allowsSave: Bool = true) {
        self.init(name: name, entityNames: entityNames, in: StoreContainer.defaultDirectory, allowsSave: allowsSave)
    }

    /// The store `name` at `<directory>/<name>.store`.
    init(name: String, entityNames: [String]?, in directory: URL, allowsSave: Bool = true) {
        self.init(
            name: name, entityNames: entityNames, directory: directory.appendingPathComponent(name + ".store", isDirectory: true),
            allowsSave: allowsSave)
    }
}
