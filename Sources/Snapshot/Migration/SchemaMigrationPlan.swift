/// How a store moves through the versions of its schema, as SwiftData's
/// `SchemaMigrationPlan`: the versions in order, oldest first, and a stage for each step
/// that needs more than an inferred (lightweight) migration.
///
/// Opening a ``WALDataStore`` with a plan (``WALDataStore/init(_:migrationPlan:)``) finds the
/// stored schema among ``schemas`` and the configured schema among them, then runs one stage per
/// step between the two, in order: the stage whose `fromVersion` and `toVersion` are that step,
/// or a lightweight stage when the plan has none for it. The whole path is one migration: all
/// of it is applied or none of it.
public protocol SchemaMigrationPlan {
    /// Every version, oldest first.
    static var schemas: [any VersionedSchema.Type] { get }
    /// The stages between consecutive versions of ``schemas``; a step without a stage is
    /// lightweight.
    static var stages: [MigrationStage] { get }
}
