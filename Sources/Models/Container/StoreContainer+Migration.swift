import Engine
import Snapshot

/// One version of a model schema, as SwiftData's `VersionedSchema`: a version identifier and
/// the **model types** of that version (SwiftData's `static var models`).
///
/// Old versions keep their model types (nested in the version's type, say, `V1.Post`), so a
/// custom stage can read and change the data as that version's models:
///
/// ```swift
/// enum V1: VersionedModelSchema {
///     static let versionIdentifier = Schema.Version(1, 0, 0)
///     static var models: [any PersistentModel.Type] { [Post.self] }
///     final class Post: ModelObject, PersistentModel {
///         var title = ""
///         static let properties: [ModelProperty<Post>] = [.attribute(\.title)]
///     }
/// }
/// ```
///
/// It refines the Snapshot module's ``Snapshot/VersionedSchema`` (whose ``Snapshot/VersionedSchema/entities``
/// it derives from the models), under a name of its own because both modules are imported
/// together.
public protocol VersionedModelSchema: Snapshot.VersionedSchema {
    /// The model types of this version.
    static var models: [any PersistentModel.Type] { get }
}

extension VersionedModelSchema {
    /// The entities the models declare, in the order of ``models``.
    public static var entities: [Schema.Entity] { models.map { $0.entity } }
}

/// One step of a ``ModelMigrationPlan``, as SwiftData's `MigrationStage`.
public enum ModelMigrationStage: Sendable {
    /// A custom stage's closure: it reads and saves through a context over the migration's
    /// in-progress data (not the live data, which stays untouched until the migration ends), in
    /// the models of the version it is given. Changes left pending when it returns are saved.
    /// Throwing abandons the migration: the store is as it was.
    public typealias Handler = @Sendable (ModelContext) throws -> Void

    /// A migration inferred from the two versions' schemas (``Snapshot/SchemaChange`` lists what
    /// it can do), as SwiftData's `.lightweight`. Listing it allows what only a plan allows:
    /// removing an entity that holds objects.
    case lightweight(fromVersion: any VersionedModelSchema.Type, toVersion: any VersionedModelSchema.Type)
    /// An inferred migration with a closure before it, given a context in `fromVersion`'s
    /// models, and one after it, given a context in `toVersion`'s models, as SwiftData's
    /// `.custom(fromVersion:toVersion:willMigrate:didMigrate:)`.
    case custom(
        fromVersion: any VersionedModelSchema.Type, toVersion: any VersionedModelSchema.Type, willMigrate: Handler?, didMigrate: Handler?)
}

/// How a container's stores move through the versions of its models, as SwiftData's
/// `SchemaMigrationPlan`: the versions in order, oldest first, and a stage for each step that
/// needs one. Pass it to ``StoreContainer/init(schema:configurations:migrationPlan:history:)``.
///
/// Opening the container migrates each store whose stored schema differs from the configured
/// one, one stage per step between the two versions (a step without a stage is lightweight),
/// all of it or none of it per store. With several configurations each store migrates the part
/// of each version that it holds (an entity goes to the configuration that holds it, or whose
/// entity names it as `originalName`; any other to the configuration without an entity list,
/// else the first), and a custom stage's closures run once for each store whose part changes,
/// with a context over that store's part.
public protocol ModelMigrationPlan: SendableMetatype {
    /// Every version, oldest first.
    static var schemas: [any VersionedModelSchema.Type] { get }
    /// The stages between consecutive versions of ``schemas``.
    static var stages: [ModelMigrationStage] { get }
}

extension StoreContainer {
    /// What a store's part of a model migration plan needs to know while its store opens:
    /// which of a version's entities the store holds, and the plan.
    struct StoreMigration: Sendable {
        let plan: any ModelMigrationPlan.Type
        let configurationIndex: Int
        let configurations: [Configuration]
        let schema: Schema
        let layout: Layout

        @TaskLocal static var current: StoreMigration?

        /// Whether the store being opened holds the entity `name` of an old version.
        func holds(_ name: String) -> Bool {
            guard configurations.count > 1 else { return true }
            if let i = layout.configurationIndex(of: name, in: schema) { return i == configurationIndex }
            if let successor = schema.entities.first(where: { $0.originalName == name }),
                let i = layout.configurationIndex(of: successor.name, in: schema)
            {
                return i == configurationIndex
            }
            let fallback = configurations.firstIndex { $0.entityNames == nil } ?? 0
            return fallback == configurationIndex
        }
    }

    /// Opens the store of `configuration` (the configuration at `index`), migrating it through
    /// its part of `plan` when one is given; a refusal's advice is rewritten to name what a
    /// container accepts.
    static func openStore(
        _ configuration: WALStoreConfiguration, index: Int, plan: (any ModelMigrationPlan.Type)?, configurations: [Configuration],
        schema: Schema, layout: Layout, fileSystem: any FileSystem
    ) throws -> WALDataStore {
        do {
            guard let plan else { return try WALDataStore(configuration, migrationPlan: nil, fileSystem: fileSystem) }
            let migration = StoreMigration(plan: plan, configurationIndex: index, configurations: configurations, schema: schema, layout: layout)
            return try StoreMigration.$current.withValue(migration) {
                try WALDataStore(configuration, migrationPlan: StorePlan.self, fileSystem: fileSystem)
            }
        } catch var error as DataStoreError where error.code == .schemaMismatch {
            if let difference = error.underlying as? SchemaDifference, let removed = Self.removedEntity(in: difference) {
                error.message =
                    "The configured schema has no entity \(removed), and the store of the configuration \(configuration.name) holds objects of it: opening it would delete them (\(difference)). If that is meant, pass StoreContainer(schema:configurations:migrationPlan:) a ModelMigrationPlan whose schemas list the stored version and this one (VersionedModelSchema types), with a stage between them (.lightweight will do); otherwise keep the model, or name the removed entity in its successor's originalName. The store is unchanged."
            }
            throw error
        }
    }

    private static func removedEntity(in difference: SchemaDifference) -> String? {
        for change in difference.incompatible { if case .entityRemoved(let name) = change { return name } }
        return nil
    }
}

extension VersionedModelSchema {
    /// Refuses models that would lose data (``Snapshot/Schema/init(models:)-([any EntityModel.Type])``'s checks).
    static func checkModels() throws { _ = try Schema(models: models) }
}

/// The Snapshot layer's plan for the store being opened: the model plan's versions and stages,
/// each version cut to the entities that store holds (``StoreContainer/StoreMigration``, bound
/// while the store opens).
enum StorePlan: SchemaMigrationPlan {
    static var schemas: [any Snapshot.VersionedSchema.Type] {
        (StoreContainer.StoreMigration.current?.plan.schemas ?? []).map { storeVersion(of: $0) }
    }

    static var stages: [MigrationStage] {
        guard let plan = StoreContainer.StoreMigration.current?.plan else { return [] }
        return plan.stages.map { stage in
            switch stage {
            case let .lightweight(from, to):
                return .lightweight(fromVersion: storeVersion(of: from), toVersion: storeVersion(of: to))
            case let .custom(from, to, willMigrate, didMigrate):
                return .custom(
                    fromVersion: storeVersion(of: from), toVersion: storeVersion(of: to), willMigrate: willMigrate.map(handler),
                    didMigrate: didMigrate.map(handler))
            }
        }
    }

    private static func storeVersion<Version: VersionedModelSchema>(of version: Version.Type) -> any Snapshot.VersionedSchema.Type {
        StoreVersion<Version>.self
    }

    /// The Snapshot stage's closure: the model stage's, given a context over the migration's
    /// store; changes it leaves pending are saved.
    private static func handler(_ body: @escaping ModelMigrationStage.Handler) -> MigrationStage.Handler {
        { store in
            let context = ModelContext(StoreContainer(migrationStore: store))
            try body(context)
            if context.hasChanges { try context.save() }
        }
    }
}

/// A version of a model plan, cut to the entities of the store being opened.
enum StoreVersion<Version: VersionedModelSchema>: Snapshot.VersionedSchema {
    static var versionIdentifier: Schema.Version { Version.versionIdentifier }
    static var entities: [Schema.Entity] {
        guard let migration = StoreContainer.StoreMigration.current else { return Version.entities }
        return Version.entities.filter { migration.holds($0.name) }
    }
}
