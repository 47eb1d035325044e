/// One step of a ``SchemaMigrationPlan``, as SwiftData's `MigrationStage`.
public enum MigrationStage: Sendable {
    /// A closure of a custom stage: it reads and saves through the store it is given, a
    /// ``WALDataStore`` over the migration's in-progress data (not the live data: until the
    /// migration ends, the store as it was is untouched). Throwing abandons the migration.
    public typealias Handler = @Sendable (WALDataStore) throws -> Void

    /// A migration the store infers from the two schemas (see ``SchemaChange`` for which
    /// changes it can make).
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
    /// An inferred migration with a closure before it, given the data in `fromVersion`'s
    /// schema, and one after it, given the data in `toVersion`'s schema. A custom stage may
    /// make an optional attribute required: `willMigrate` fills the nulls, and an object still
    /// holding one stops the migration (`missingValue`).
    case custom(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type, willMigrate: Handler?, didMigrate: Handler?)

    /// The version the stage starts from.
    public var fromVersion: any VersionedSchema.Type {
        switch self {
        case .lightweight(let from, _), .custom(let from, _, _, _): from
        }
    }

    /// The version the stage ends at.
    public var toVersion: any VersionedSchema.Type {
        switch self {
        case .lightweight(_, let to), .custom(_, let to, _, _): to
        }
    }
}
