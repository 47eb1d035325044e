/// One version of a schema, as SwiftData's `VersionedSchema`: a version identifier and the
/// entities of that version (SwiftData lists model types; this module lists
/// ``Schema/Entity`` declarations).
///
/// A store records the version identifier of the schema it was written in (beside the schema
/// itself); a ``SchemaMigrationPlan`` orders versions and says how to go from one to the next.
public protocol VersionedSchema: Sendable {
    /// The version's identifier, unique within a plan.
    static var versionIdentifier: Schema.Version { get }
    /// The entities of this version.
    static var entities: [Schema.Entity] { get }
}

extension VersionedSchema {
    /// The version's entities as a ``Schema``.
    ///
    /// - Throws: ``DataStoreError/Code/invalidSchema`` when they are inconsistent.
    public static func schema() throws -> Schema { try Schema(entities) }
}
