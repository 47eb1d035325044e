import Engine
import Foundation

/// What opening a ``WALDataStore`` does with its header (FORMAT.md, "Migrations"): make it in
/// a new store, sweep generations an interrupted migration left, and, when the configured
/// schema is not the stored one, migrate — all of it or none of it.
///
/// A migration never changes the live generation: each step that rewrites records writes a new
/// generation; custom closures work on a copy; only the final commit of the header (one key)
/// makes the new generation live. Then the old generations are deleted. A crash or an error
/// before that commit leaves the store as it was (what the migration wrote is swept at the next
/// open); after it, the migration is complete.
struct StoreMigrator {
    let engine: LogStore
    let configuration: WALStoreConfiguration
    let target: Schema
    let plan: (any SchemaMigrationPlan.Type)?

    var assetThreshold: Int { engine.options.blobThreshold }

    /// The header the store is to be opened with, durable when this returns.
    func open() throws -> StoreHeader {
        let targetVersion = try plan?.schemas.last { try $0.schema() == target }?.versionIdentifier
        guard var header = try StoreHeader.read(from: engine) else {
            let header = try StoreHeader(identifier: UUID().uuidString, generation: 0, version: targetVersion, schema: target)
            try write(header)
            return header
        }
        try GenerationSweeper.discardAll(except: header.generation, in: engine)
        if header.formatVersion < StoreHeader.currentVersion {
            if let stored = header.schema, stored != target { try refuseBeforeUpgrade(header, stored) }
            header = try upgradeStringKeys(header)
        }
        guard let stored = header.schema else {
            guard header.fingerprint == (try StoreHeader.fingerprint(of: target)) else {
                throw DataStoreError(
                    .schemaMismatch,
                    "The store was written with a schema it did not record (a version-1 header), and the configured schema's fingerprint differs; open it once with the schema it was written with, then migrate.")
            }
            header = try StoreHeader(identifier: header.identifier, generation: header.generation, version: targetVersion, schema: target)
            try write(header)
            return header
        }
        if stored == target {
            if let targetVersion, header.version != targetVersion {
                header.version = targetVersion
                try write(header)
            }
            return header
        }
        let steps = try MigrationStep.path(from: stored, storedVersion: header.version, to: target, plan: plan)
        return try migrate(header, through: steps, version: targetVersion)
    }

    /// The refusals ``migrate(_:through:version:)`` makes before it writes (its checks, and the
    /// dry run of an added uniqueness rule on the live generation), made before the string-key
    /// upgrade commits: an open they refuse leaves a store of an older version unchanged.
    private func refuseBeforeUpgrade(_ header: StoreHeader, _ stored: Schema) throws {
        let steps = try MigrationStep.path(from: stored, storedVersion: header.version, to: target, plan: plan)
        let live = RecordSpace(engine: engine, generation: header.generation)
        for (step, mapping) in zip(steps, try check(steps, live: live)) {
            if step.willMigrate != nil { return }  // a closure may change the data first
            if mapping.effect >= .rewrite {
                if mapping.changes.contains(where: { if case .uniquenessAdded = $0 { true } else { false } }) {
                    try GenerationRewriter(mapping: mapping, source: live, destination: nil, storeIdentifier: header.identifier, assetThreshold: assetThreshold).run()
                }
                return
            }
            if step.didMigrate != nil { return }
        }
    }

    /// A header of an older version, with its live generation's index and uniqueness keys
    /// brought to the current string normalization (``StringKeyUpgrade``) and the header
    /// rewritten in the current version, in one step before anything else. A version-1 header
    /// whose fingerprint is not the configured schema's is returned as it is (refused below).
    private func upgradeStringKeys(_ header: StoreHeader) throws -> StoreHeader {
        var upgraded = header
        if header.schema == nil {
            guard header.fingerprint == (try StoreHeader.fingerprint(of: target)) else { return header }
            upgraded = try StoreHeader(identifier: header.identifier, generation: header.generation, version: nil, schema: target)
        }
        upgraded.formatVersion = StoreHeader.currentVersion
        guard let schema = upgraded.schema else { return header }
        try StringKeyUpgrade(
            schema: schema, space: RecordSpace(engine: engine, generation: header.generation), storeIdentifier: header.identifier,
            assetThreshold: assetThreshold
        ).run(header: try upgraded.encoded())
        return upgraded
    }

    private func write(_ header: StoreHeader) throws {
        let bytes = try header.encoded()
        _ = try engine.write { $0.put(RecordKeys.meta, bytes) }
    }

    /// Refuses any step whose changes it cannot make, before anything is written: changes no
    /// stage can make, and an entity removed by a step the plan has no stage for while the
    /// store holds objects of it (a schema opened by mistake would otherwise delete them).
    private func check(_ steps: [MigrationStep], live: RecordSpace) throws -> [SchemaMapping] {
        var mappings: [SchemaMapping] = []
        for step in steps {
            let mapping = SchemaMapping(from: step.from, to: step.to)
            let refused = mapping.changes.filter { $0.effect == .refused || ($0.effect == .refusedUnlessCustom && !step.isCustom) }
            if !refused.isEmpty {
                let difference = SchemaDifference(changes: mapping.changes, incompatible: refused)
                throw DataStoreError(
                    .schemaMismatch,
                    "The store's schema differs from the configured one in ways a \(step.label) cannot migrate: \(difference). Give a migration plan whose custom stage makes the data fit, or keep the schema compatible. The store is unchanged.",
                    entityName: refused[0].entityName, propertyName: refused[0].propertyName, underlying: difference)
            }
            if !step.isPlanned {
                for change in mapping.changes {
                    guard case .entityRemoved(let entity) = change else { continue }
                    // The entity as the stored schema names it (earlier steps may have renamed it).
                    var stored: String? = entity
                    for earlier in mappings.reversed() { stored = stored.flatMap { earlier.oldEntity[$0] } }
                    guard let stored, try Self.holdsObjects(of: stored, in: steps[0].from, live) else { continue }
                    let difference = SchemaDifference(changes: mapping.changes, incompatible: [change])
                    throw DataStoreError(
                        .schemaMismatch,
                        "The configured schema has no entity \(entity), and the store holds objects of it: opening it without a plan would delete them (\(difference)). If that is meant, give a migration plan with a stage (.lightweight will do) from the stored version to this one; otherwise keep the entity, or name it in the new entity's originalName if it was renamed. The store is unchanged.",
                        entityName: entity, underlying: difference)
                }
            }
            mappings.append(mapping)
        }
        return mappings
    }

    /// Whether the generation holds an object of exactly `entity` (of `schema`).
    static func holdsObjects(of entity: String, in schema: Schema, _ space: RecordSpace) throws -> Bool {
        guard let root = schema.rootEntity(of: entity)?.name else { return false }
        let prefix = RecordKeys.recordPrefix(root: root)
        if root == entity && schema.subentities(of: root).isEmpty {
            var first = try space.scan(.prefix(prefix), limit: 1).makeIterator()
            return first.next() != nil
        }
        for entry in try space.scan(prefix: prefix) where try RecordValue.entityName(in: try entry.value(), key: entry.key) == entity {
            return true
        }
        return false
    }

    private func migrate(_ header: StoreHeader, through steps: [MigrationStep], version: Schema.Version?) throws -> StoreHeader {
        let live = header.generation
        let mappings = try check(steps, live: RecordSpace(engine: engine, generation: live))
        guard live < UInt32.max - UInt32(2 * steps.count + 2) else {
            throw DataStoreError(.invalidRequest, "The store has run out of generation numbers for migrations; copy its objects into a new store.")
        }
        var current = live
        var next = live + 1
        var written: [UInt32] = []
        func fresh() -> UInt32 {
            defer { next += 1 }
            written.append(next)
            return next
        }
        func space(_ g: UInt32) -> RecordSpace { RecordSpace(engine: engine, generation: g) }
        func context(_ g: UInt32, _ schema: Schema) -> WALDataStore {
            WALDataStore(migrationContext: configuration, schema: schema, engine: engine, identifier: header.identifier, space: space(g))
        }
        do {
            for (step, mapping) in zip(steps, mappings) {
                if let willMigrate = step.willMigrate {
                    if current == live {
                        let copy = fresh()
                        try GenerationCopier.copy(from: space(current), to: space(copy))
                        current = copy
                    }
                    try run(willMigrate, on: context(current, step.from), step)
                }
                if mapping.effect >= .rewrite {
                    if current == live && mapping.changes.contains(where: { if case .uniquenessAdded = $0 { true } else { false } }) {
                        // Checked before a byte is written, so a refusal leaves the files as they were.
                        try GenerationRewriter(mapping: mapping, source: space(current), destination: nil, storeIdentifier: header.identifier, assetThreshold: assetThreshold).run()
                    }
                    let destination = fresh()
                    try GenerationRewriter(
                        mapping: mapping, source: space(current), destination: space(destination), storeIdentifier: header.identifier,
                        assetThreshold: assetThreshold
                    ).run()
                    if current != live {
                        try GenerationSweeper.discard(current, in: engine)
                        written.removeAll { $0 == current }
                    }
                    current = destination
                }
                if let didMigrate = step.didMigrate {
                    if current == live {
                        let copy = fresh()
                        try GenerationCopier.copy(from: space(current), to: space(copy))
                        current = copy
                    }
                    try run(didMigrate, on: context(current, step.to), step)
                }
            }
        } catch {
            // Best effort: what is left is swept at the next open, before anything reads it.
            for g in written { try? GenerationSweeper.discard(g, in: engine) }
            throw error
        }
        // The switch: one key, one commit.
        let switched = try StoreHeader(identifier: header.identifier, generation: current, version: version, schema: target)
        try write(switched)
        try GenerationSweeper.discardAll(except: current, in: engine)
        return switched
    }

    private func run(_ handler: MigrationStage.Handler, on store: WALDataStore, _ step: MigrationStep) throws {
        do { try handler(store) } catch let error as DataStoreError where error.code == .engine {
            throw error
        } catch {
            throw DataStoreError(
                .migrationFailed, "The \(step.label)'s closure threw \(error); the migration is abandoned and the store is unchanged.",
                underlying: error)
        }
    }
}
