/// One step of a migration: from one schema to the next, with a custom stage's closures.
struct MigrationStep {
    var from: Schema
    var to: Schema
    var fromVersion: Schema.Version?
    var toVersion: Schema.Version?
    var willMigrate: MigrationStage.Handler?
    var didMigrate: MigrationStage.Handler?
    var isCustom: Bool
    /// Whether the plan lists a stage for this step (lightweight or custom): only such a step
    /// may remove an entity that holds objects.
    var isPlanned = false

    var label: String {
        let from = fromVersion.map(\.description) ?? "the stored schema"
        let to = toVersion.map(\.description) ?? "the configured schema"
        return "\(isCustom ? "custom" : "lightweight") stage \(from) → \(to)"
    }

    /// The steps from `stored` to `target`: one lightweight step without a plan; with one, the
    /// stages between the plan's versions equal to the two schemas (a step the plan has no
    /// stage for is lightweight). A stored schema the plan does not list is refused
    /// (`schemaMismatch`), as SwiftData refuses an unknown model version: migrating it as
    /// without a plan would skip the plan's stages.
    static func path(
        from stored: Schema, storedVersion: Schema.Version?, to target: Schema, plan: (any SchemaMigrationPlan.Type)?
    ) throws -> [MigrationStep] {
        let direct = [MigrationStep(from: stored, to: target, fromVersion: storedVersion, toVersion: nil, isCustom: false)]
        guard let plan else { return direct }
        let versions = try plan.schemas.map { (id: $0.versionIdentifier, schema: try $0.schema()) }
        guard let j = versions.lastIndex(where: { $0.schema == target }) else {
            throw DataStoreError(
                .invalidRequest,
                "The configured schema is none of the migration plan's versions (\(versions.map(\.id.description).joined(separator: ", "))); configure the schema of one of them."
            )
        }
        guard let i = versions.firstIndex(where: { $0.schema == stored }) else {
            let listed = versions.map(\.id.description).joined(separator: ", ")
            let named = storedVersion.map { "version \($0)" } ?? "no version"
            let hint =
                storedVersion.map { v in
                    versions.contains { $0.id == v }
                        ? " (the plan's \(v) declares another schema than the one the store was written with: a version's schema was changed without a new version)"
                        : ""
                } ?? ""
            throw DataStoreError(
                .schemaMismatch,
                "The store's schema (\(named)) is none of the migration plan's versions (\(listed))\(hint); add the schema it was written with to the plan's schemas, or open it with a plan that has it. The store is unchanged."
            )
        }
        guard i <= j else {
            throw DataStoreError(
                .schemaMismatch,
                "The store is in version \(versions[i].id) of the plan, newer than the configured \(versions[j].id); open it with a build that knows that version."
            )
        }
        var steps: [MigrationStep] = []
        for k in i..<j {
            let (from, to) = (versions[k], versions[k + 1])
            var step = MigrationStep(from: from.schema, to: to.schema, fromVersion: from.id, toVersion: to.id, isCustom: false)
            let stage = plan.stages.first { $0.fromVersion.versionIdentifier == from.id && $0.toVersion.versionIdentifier == to.id }
            step.isPlanned = stage != nil
            if case let .custom(_, _, willMigrate, didMigrate)? = stage {
                step.willMigrate = willMigrate
                step.didMigrate = didMigrate
                step.isCustom = true
            }
            steps.append(step)
        }
        return steps
    }
}
