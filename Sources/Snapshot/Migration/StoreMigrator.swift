import Engine
import Foundation

/// What opening a ``WALDataStore`` does with its header (FORMAT.md, "Migrations"): make it in
/// a new store, and, when the configured schema is not the stored one, migrate — all of it or
/// none of it (first sweeping the generations an interrupted migration left, so that the new
/// ones start empty).
///
/// A migration never changes the live generation: each step that rewrites records writes a new
/// generation; custom closures work on a copy; only the final commit of the header (one key)
/// makes the new generation live. The old generations are deleted after that, in the
/// background, once the store is open (``BackgroundSweep``). A crash or an error before that
/// commit leaves the store as it was (what the migration wrote is swept at the next open);
/// after it, the migration is complete.
///
/// Nothing is written (not even the sweep of generations an earlier, interrupted migration
/// left, nor of their blobs) until the open is known to go ahead: every refusal the stored data
/// can be checked for without writing — an unknown version, a change no stage can make, an
/// entity removed without a plan, the collisions of a new uniqueness rule, the nulls of an
/// attribute made required — is found first, so a refused open leaves the files
/// byte-identical. (A refusal that only a step after one that rewrites, or after a custom
/// stage's closure, can find comes after those writes; the store is still as it was.)
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
        if header.formatVersion < StoreHeader.currentVersion {
            // The upgrades commit before any migration runs (a header the migration writes is of
            // the current version, so an upgrade could not be found unfinished after it). So
            // that a migration the checks refuse still finds the files as they were, those checks
            // (and the dry runs) run first, on the records as they are (format 1); they read,
            // and write nothing.
            if let stored = header.schema, stored != target {
                let steps = try MigrationStep.path(from: stored, storedVersion: header.version, to: target, plan: plan)
                _ = try dryRuns(steps, try check(steps, live: space(header.generation), format: .format1), header, format: .format1)
            }
            if header.formatVersion < 3 { header = try upgradeStringKeys(header) }
            header = try upgradeRecords(header)
        }
        guard let stored = header.schema else {
            guard header.fingerprint == (try StoreHeader.fingerprint(of: target)) else {
                throw DataStoreError(
                    .schemaMismatch,
                    "The store was written with a schema it did not record (a version-1 header), and the configured schema's fingerprint differs; open it once with the schema it was written with, then migrate."
                )
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
        upgraded.formatVersion = 3
        guard let schema = upgraded.schema else { return header }
        try StringKeyUpgrade(
            schema: schema, space: RecordSpace(engine: engine, generation: header.generation), storeIdentifier: header.identifier,
            assetThreshold: assetThreshold
        ).run(header: try upgraded.encoded(version: 3))
        return upgraded
    }

    /// A header of version 3 (records format 1), with its live generation rewritten in records
    /// format 2 and the header in version 4: the rewrite path of a lightweight migration from
    /// the stored schema to itself (a new generation written in format 2, then the header's
    /// switch to it; the old one is swept once the store is open), so a crash at any point leaves either the
    /// old store whole (what the rewrite wrote is swept at the next open, which upgrades again)
    /// or the upgraded one. A header without a schema is returned as it is (refused below).
    private func upgradeRecords(_ header: StoreHeader) throws -> StoreHeader {
        guard let schema = header.schema else { return header }
        let live = header.generation
        guard live < UInt32.max - 1 else {
            throw DataStoreError(.invalidRequest, "The store has run out of generation numbers for its upgrade; copy its objects into a new store.")
        }
        try GenerationSweeper.discardAll(except: live, in: engine)
        let destination = live + 1
        do {
            try GenerationRewriter(
                mapping: SchemaMapping(from: schema, to: schema), source: space(live), destination: space(destination),
                storeIdentifier: header.identifier, assetThreshold: assetThreshold, sourceFormat: .format1
            ).run()
        } catch {
            // Best effort: what is left is swept at the next open, before anything reads it.
            try? GenerationSweeper.discard(destination, in: engine)
            throw error
        }
        var upgraded = header
        upgraded.generation = destination
        upgraded.formatVersion = StoreHeader.currentVersion
        try write(upgraded)
        return upgraded
    }

    private func write(_ header: StoreHeader) throws {
        let bytes = try header.encoded()
        _ = try engine.write { $0.put(RecordKeys.meta, bytes) }
    }

    /// Refuses any step whose changes it cannot make, before anything is written: changes no
    /// stage can make, and an entity removed by a step the plan has no stage for while the
    /// store holds objects of it (a schema opened by mistake would otherwise delete them).
    private func check(_ steps: [MigrationStep], live: RecordSpace, format: RecordsFormat = .format2) throws -> [SchemaMapping] {
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
                    guard let stored, try Self.holdsObjects(of: stored, in: steps[0].from, live, format: format) else { continue }
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
    static func holdsObjects(of entity: String, in schema: Schema, _ space: RecordSpace, format: RecordsFormat) throws -> Bool {
        guard let root = schema.rootEntity(of: entity)?.name else { return false }
        let prefix = RecordKeys.recordPrefix(root: root)
        if root == entity && schema.subentities(of: root).isEmpty {
            var first = try space.scan(.prefix(prefix), limit: 1)
            return try first.next() != nil
        }
        var cursor = try space.scan(prefix: prefix)
        while let entry = try cursor.next() {
            let bytes = try entry.value()
            let name = try format == .format1 ? Format1Record.entityName(in: bytes, key: entry.key) : RecordReader(bytes, key: entry.key).entityName
            guard name == entity else { continue }
            return true
        }
        return false
    }

    /// Dry runs of the steps that read the live generation as it is (up to the first step that
    /// writes), before a byte is written, so a refusal leaves the files as they were. Returns the
    /// indexes of the steps checked.
    private func dryRuns(
        _ steps: [MigrationStep], _ mappings: [SchemaMapping], _ header: StoreHeader, format: RecordsFormat = .format2
    ) throws -> Set<Int> {
        var checked: Set<Int> = []
        for (i, (step, mapping)) in zip(steps, mappings).enumerated() {
            guard step.willMigrate == nil else { break }
            if mapping.needsCheck {
                try GenerationRewriter(
                    mapping: mapping, source: space(header.generation), destination: nil, storeIdentifier: header.identifier,
                    assetThreshold: assetThreshold,
                    sourceFormat: format
                ).run()
                checked.insert(i)
            }
            if mapping.effect >= .rewrite || step.didMigrate != nil { break }
        }
        return checked
    }

    private func migrate(_ header: StoreHeader, through steps: [MigrationStep], version: Schema.Version?) throws -> StoreHeader {
        let live = header.generation
        let mappings = try check(steps, live: RecordSpace(engine: engine, generation: live))
        guard live < UInt32.max - UInt32(2 * steps.count + 2) else {
            throw DataStoreError(.invalidRequest, "The store has run out of generation numbers for migrations; copy its objects into a new store.")
        }
        let checked = try dryRuns(steps, mappings, header)
        // The open goes ahead: now the leftovers of an interrupted migration may go.
        try GenerationSweeper.discardAll(except: live, in: engine)
        var current = live
        var next = live + 1
        var written: [UInt32] = []
        func fresh() -> UInt32 {
            defer { next += 1 }
            written.append(next)
            return next
        }
        func context(_ g: UInt32, _ schema: Schema) -> WALDataStore {
            WALDataStore(migrationContext: configuration, schema: schema, engine: engine, identifier: header.identifier, space: space(g))
        }
        do {
            for (i, (step, mapping)) in zip(steps, mappings).enumerated() {
                if let willMigrate = step.willMigrate {
                    if current == live {
                        let copy = fresh()
                        try GenerationCopier.copy(from: space(current), to: space(copy))
                        current = copy
                    }
                    try run(willMigrate, on: context(current, step.from), step)
                }
                if mapping.effect < .rewrite && mapping.needsCheck && !checked.contains(i) {
                    // A step that rewrites nothing checks the data it keeps (the rewrite checks its own).
                    try GenerationRewriter(
                        mapping: mapping, source: space(current), destination: nil, storeIdentifier: header.identifier, assetThreshold: assetThreshold
                    ).run()
                }
                if mapping.effect >= .rewrite {
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
        return switched
    }

    private func space(_ g: UInt32) -> RecordSpace { RecordSpace(engine: engine, generation: g) }

    private func run(_ handler: MigrationStage.Handler, on store: WALDataStore, _ step: MigrationStep) throws {
        do { try handler(store) } catch let error as DataStoreError where [.engine, .corrupted, .closed, .permissionDenied].contains(error.code) {
            throw error
        } catch {
            throw DataStoreError(
                .migrationFailed, "The \(step.label)'s closure threw \(error); the migration is abandoned and the store is unchanged.",
                underlying: error)
        }
    }
}
