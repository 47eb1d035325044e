import Engine
import Foundation

/// Writes the objects of one generation, in the old schema, into another generation in the
/// new schema (FORMAT.md, "Migrations"): object by object in one scan of each root's records,
/// in commits of bounded size, so the data is never all in memory. The to-many targets an
/// object writes join records for are read from one streaming scan per join side
/// (``JoinCursor``), walked in step with the records, not one scan per object. Identities stay
/// (same primary keys; a renamed entity's objects get identifiers of the new name); values follow the ``SchemaMapping``; every entry of the
/// new generation — records, assets, back references, join records, index and uniqueness
/// entries — is derived anew, as a save would write it (each group of mapped objects encoded and
/// committed on another thread while the next is mapped: ``GenerationWriter``,
/// ``PipelinedCommits``), and its last commit puts the count key
/// of every entity it holds objects of (FORMAT.md, "Per-entity counts"), so the open that
/// follows reads the counts rather than counting the records.
///
/// A dry run writes nothing and only checks what the new schema's uniqueness rules and
/// required attributes demand of the data (so a refused migration leaves the store
/// byte-identical); it keeps each uniqueness entry in memory (a few bytes per object under a
/// rule), nothing else. Either run reads every object before it refuses, so that the refusal
/// names every object that holds a null a required attribute refuses, or every object that
/// shares its values of a new uniqueness rule with another (by its identifier in the stored
/// schema, in ``DataStoreError/identifier`` and ``DataStoreError/relatedIdentifiers``).
struct GenerationRewriter {
    let mapping: SchemaMapping
    let source: RecordSpace
    /// `nil` for a dry run.
    let destination: RecordSpace?
    let storeIdentifier: String
    let assetThreshold: Int
    /// The records format of `source` (the destination is written in format 2).
    var sourceFormat: RecordsFormat = .format2
    /// The operations a commit holds at most (``chunkOperations``; tests make it small).
    var operationsPerCommit = Self.chunkOperations
    /// Objects a group handed to the committing thread holds at most (tests make it small).
    var objectsPerGroup = 4096

    /// Commits of at most this many operations… (each commit is synced: fewer, larger ones
    /// save syncs, while a commit's batch stays a few MiB)
    static let chunkOperations = 65536
    /// …or about this many bytes.
    static let chunkBytes = 16 << 20

    var oldMapper: RecordMapper {
        RecordMapper(
            layout: RecordLayout(schema: mapping.old), records: source, storeIdentifier: storeIdentifier, assetThreshold: assetThreshold,
            countRecordRead: {},
            format: sourceFormat)
    }

    var newMapper: RecordMapper {
        RecordMapper(
            layout: RecordLayout(schema: mapping.new), records: destination ?? source, storeIdentifier: storeIdentifier,
            assetThreshold: assetThreshold, countRecordRead: {})
    }

    /// What the data lacks for the new schema, gathered over the whole run.
    struct Findings {
        /// Each uniqueness entry two or more objects claim: the rule, and the objects (old
        /// identifiers, the first claimant first), in the order the collisions were found.
        var collisions: [(key: [UInt8], entity: String, rule: [String], objects: [PersistentIdentifier])] = []
        var collisionIndex: [[UInt8]: Int] = [:]
        /// Each required attribute of the new schema some objects hold no value for.
        var missing: [(entity: String, attribute: String, objects: [PersistentIdentifier])] = []

        var isEmpty: Bool { collisions.isEmpty && missing.isEmpty }

        mutating func missingValue(_ entity: String, _ attribute: String, _ id: PersistentIdentifier) {
            if let i = missing.firstIndex(where: { $0.entity == entity && $0.attribute == attribute }) {
                missing[i].objects.append(id)
            } else {
                missing.append((entity, attribute, [id]))
            }
        }

        mutating func collision(_ key: [UInt8], entity: String, rule: [String], first: PersistentIdentifier, other: PersistentIdentifier) {
            if let i = collisionIndex[key] {
                if !collisions[i].objects.contains(other) { collisions[i].objects.append(other) }
            } else {
                collisionIndex[key] = collisions.count
                collisions.append((key, entity, rule, [first, other]))
            }
        }

        /// The refusal naming every object found, or `nil` when the data fits.
        func refusal() -> DataStoreError? {
            func list(_ ids: [PersistentIdentifier]) -> String {
                let shown = ids.prefix(20).map { "\($0)" }.joined(separator: ", ")
                return ids.count > 20 ? shown + " and \(ids.count - 20) more" : shown
            }
            if let first = missing.first {
                let all = missing.flatMap(\.objects)
                let groups = missing.map { "\($0.entity).\($0.attribute) in \($0.objects.count) (\(list($0.objects)))" }.joined(separator: "; ")
                return DataStoreError(
                    .missingValue,
                    "The new schema requires values that \(all.count) stored object\(all.count == 1 ? "" : "s") do not hold: \(groups). Give them values (in a custom stage's willMigrate, say), or a default in the new schema. The store is unchanged.",
                    entityName: first.entity, propertyName: first.attribute, identifier: all[0], relatedIdentifiers: Array(all.dropFirst()))
            }
            if let first = collisions.first {
                // The fields name the first rule's objects; the message lists every rule's.
                let ofRule = collisions.filter { $0.entity == first.entity && $0.rule == first.rule }.flatMap(\.objects)
                let groups = collisions.map { "\(list($0.objects)) share their (\($0.rule.joined(separator: ", "))) of \($0.entity)" }.joined(
                    separator: "; ")
                return DataStoreError(
                    .uniqueness,
                    "The migration to the new schema gives objects the same values of the uniqueness rule (\(first.rule.joined(separator: ", "))) of \(first.entity): \(groups). Make them differ (in a custom stage's willMigrate, say) or drop the rule. The store is unchanged.",
                    entityName: first.entity, propertyName: first.rule.count == 1 ? first.rule[0] : nil, identifier: ofRule[0],
                    constraint: first.rule, relatedIdentifiers: Array(ofRule.dropFirst()))
            }
            return nil
        }
    }

    func run() throws {
        let oldMapper = self.oldMapper, newMapper = self.newMapper
        var findings = Findings()
        /// Uniqueness entries of the group being built (all of them in a dry run), and of the
        /// group being written, with the old identifier of the object that claimed each.
        var claimed: [[UInt8]: PersistentIdentifier] = [:]
        var claimedInFlight: [[UInt8]: PersistentIdentifier] = [:]
        /// Objects written per new entity.
        var counts: [String: UInt64] = [:]
        /// The objects mapped and not yet handed over, each with its new asset keys → the old
        /// ones their bytes are read from.
        var group: [GenerationWriter.Object] = []
        var carried: [[UInt8]: [UInt8]] = [:]
        // Each group is encoded and committed on another thread while the next one is mapped.
        // The writer has a layout of its own: sharing this one's would have both threads retain
        // and release the same objects per entry, which measured slower.
        let writer = destination.map {
            GenerationWriter(
                layout: RecordLayout(schema: mapping.new), source: source, destination: $0, storeIdentifier: storeIdentifier,
                assetThreshold: assetThreshold,
                operationsPerCommit: operationsPerCommit)
        }
        let commits = destination.map { _ in PipelinedCommits() }
        defer { try? commits?.finish() }
        func flush(counts: [(String, UInt64)] = []) throws {
            // Once the run is to be refused, nothing more is written (it reads on, to name every object).
            guard let writer, let commits, findings.isEmpty else { return }
            let objects = group
            group.removeAll(keepingCapacity: true)
            try commits.submit { try writer.write(objects, counts: counts) }
            // The group before is committed now: its claims are found in the destination.
            swap(&claimed, &claimedInFlight)
            claimed.removeAll(keepingCapacity: true)
        }
        /// Old entity → how its objects are rewritten (`nil`: removed).
        var rewrites: [String: EntityRewrite?] = [:]
        for root in mapping.old.entities where root.superentityName == nil {
            // One streaming scan per join side and entity, walked in step with the records.
            var cursors: [String: [JoinCursor]] = [:]
            let prefix = RecordKeys.recordPrefix(root: root.name)
            var cursor = try source.scan(prefix: prefix)
            while let entry = try cursor.next() {
                guard entry.key.count == prefix.count + 16 else { throw RecordDecodingError("a record key of the wrong length", key: entry.key) }
                let pk = RecordKeys.uuid(from: Array(entry.key.suffix(16)))
                let old = try OldObject(try entry.value(), key: entry.key, primaryKey: pk, root: root.name, mapper: oldMapper)
                let oldEntity = old.id.entityName
                if rewrites[oldEntity] == nil {
                    rewrites[oldEntity] = EntityRewrite(
                        oldEntity: oldEntity, mapping: mapping, oldLayout: oldMapper.layout, newLayout: newMapper.layout)
                }
                guard let rewrite = rewrites[oldEntity] ?? nil else { continue }
                if cursors[oldEntity] == nil {
                    cursors[oldEntity] = try rewrite.joinPrefixes.map { try JoinCursor(oldMapper, relationshipPrefix: $0, entity: oldEntity) }
                }
                let state = try transform(
                    old, primaryKey: pk, rewrite: rewrite, cursors: &cursors[oldEntity, default: []], oldMapper: oldMapper, newMapper: newMapper,
                    findings: &findings, carried: &carried)
                counts[rewrite.entity, default: 0] += 1
                for (key, rule) in newMapper.uniqueKeys(of: state) {
                    try claim(
                        key, rule: rule, for: state, old: old, claimed: &claimed, inFlight: claimedInFlight, findings: &findings, oldMapper: oldMapper
                    )
                }
                if writer != nil && findings.isEmpty { group.append(GenerationWriter.Object(state: state, carried: carried)) }
                carried.removeAll(keepingCapacity: true)
                if group.count >= objectsPerGroup { try flush() }
            }
        }
        if let refusal = findings.refusal() { throw refusal }
        try flush(counts: counts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        try commits?.finish()
    }

    /// Notes a uniqueness entry (of the rule `rule`) another object of the new generation
    /// already holds: in the group being built (`claimed`), in the one being written
    /// (`inFlight`), or committed.
    private func claim(
        _ key: [UInt8], rule: [String], for state: ObjectState, old: OldObject, claimed: inout [[UInt8]: PersistentIdentifier],
        inFlight: [[UInt8]: PersistentIdentifier], findings: inout Findings, oldMapper: RecordMapper
    ) throws {
        let oldID = old.id
        var other = claimed[key] ?? inFlight[key]
        if other == nil, let destination, let bytes = try destination.value(forKey: key), bytes.count > 16,
            let entity = String(validating: bytes[16...], as: UTF8.self)
        {
            // The holder as the stored schema names it.
            other = try oldMapper.identifier(entity: mapping.oldEntity[entity] ?? entity, primaryKey: RecordKeys.uuid(from: Array(bytes[..<16])))
        }
        if let other, other != oldID {
            findings.collision(key, entity: state.persistentIdentifier.entityName, rule: rule, first: other, other: oldID)
            return
        }
        claimed[key] = oldID
    }

    /// `old` (of primary key `primaryKey`) in the new schema, following `rewrite`, as the
    /// state a save encodes (each value put in its slot: no dictionary by name); its join
    /// targets come from `cursors`, which must be asked in ascending primary-key order. Each
    /// attribute value read from an asset of `old` adds the new asset key it would be written
    /// to → the old asset key to `carried` (the bytes are the same: values do not change type).
    func transform(
        _ old: OldObject, primaryKey pk: UUID, rewrite: EntityRewrite, cursors: inout [JoinCursor], oldMapper: RecordMapper, newMapper: RecordMapper,
        findings: inout Findings, carried: inout [[UInt8]: [UInt8]]
    ) throws -> ObjectState {
        let oldID = old.id
        let entity = rewrite.entity
        let id = try newMapper.identifier(entity: entity, primaryKey: pk)
        func renamed(_ entity: String, _ primaryKey: UUID) throws -> PersistentIdentifier? {
            guard let e = mapping.newEntity[entity] else { return nil }
            return try newMapper.identifier(entity: e, primaryKey: primaryKey)
        }
        func renamed(_ target: PersistentIdentifier) throws -> PersistentIdentifier? {
            guard let tpk = RecordMapper.primaryKey(of: target) else { return nil }
            return try renamed(target.entityName, tpk)
        }
        var slots = [PropertyValue?](repeating: nil, count: rewrite.table.names.count)
        for (source, slot) in zip(rewrite.sources, rewrite.slots) {
            guard let slot else { continue }
            switch source {
            case let .attribute(a, oldName, fallback):
                var value = try oldName.flatMap { try old.value($0) } ?? fallback ?? .null
                if value.isNull && !a.isOptional {
                    if let d = fallback, !d.isNull {
                        value = d
                    } else {
                        findings.missingValue(entity, a.name, oldID)
                    }
                }
                if !value.isNull, let oldName, let oldKey = old.assetKey(oldName, type: a.valueType) {
                    carried[RecordKeys.asset(root: newMapper.layout.root(of: entity), primaryKey: pk, attribute: a.name)] = oldKey
                }
                slots[slot] = value
            case let .toOne(_, oldName):
                let target = try oldName.flatMap { try old.value($0) }?.referencedIdentifiers.first
                slots[slot] = .toOne(try target.flatMap(renamed))
            case let .joinedToMany(_, indices):
                var targets: [PersistentIdentifier] = []
                for i in indices {
                    for (e, tpk) in try cursors[i].targets(of: pk) {
                        if let target = try renamed(e, tpk) { targets.append(target) }
                    }
                }
                slots[slot] = .toMany(targets.count > 1 ? targets.sorted(by: RecordMapper.canonicalOrder) : targets)
            case let .readToMany(_, relationship):
                slots[slot] = .toMany(try oldMapper.targets(of: oldID, through: relationship).compactMap(renamed))
            case .emptyToMany:
                slots[slot] = .toMany([])
            }
        }
        return ObjectState(id, table: rewrite.table, slots: slots)
    }
}

/// One object of the source generation as a rewrite reads it: its identifier, and its values
/// read on demand — each from its field of the record (records format 2: only the fields the
/// new schema takes are decoded, into no dictionary), or from the record's decoded snapshot
/// (format 1).
struct OldObject {
    let id: PersistentIdentifier
    private let record: RecordReader?
    private let fields: RecordFieldList?
    private let snapshot: DefaultSnapshot?
    private let mapper: RecordMapper
    private let root: String
    private let primaryKey: UUID

    init(_ bytes: [UInt8], key: [UInt8], primaryKey pk: UUID, root: String, mapper: RecordMapper) throws {
        self.mapper = mapper
        self.root = root
        self.primaryKey = pk
        if mapper.format == .format1 {
            let snapshot = try mapper.snapshot(ofRecord: bytes, key: key, primaryKey: pk, root: root, toMany: false)
            (self.snapshot, record, fields, id) = (snapshot, nil, nil, snapshot.persistentIdentifier)
        } else {
            let record = try RecordReader(bytes, key: key)
            let fields = try mapper.checkedFields(of: record, root: root)
            (snapshot, self.record, self.fields, id) = (nil, record, fields, try mapper.identifier(entity: record.entityName, primaryKey: pk))
        }
    }

    /// The value of the old property `name` (`nil` for a property without a field, as a
    /// snapshot read without to-many arrays has none).
    func value(_ name: String) throws -> PropertyValue? {
        if let snapshot { return snapshot.values[name] }
        guard let record, let field = fields?.field(named: name) else { return nil }
        if record.isAsset(field.index) {
            guard case .attribute(let attribute) = field.kind else {
                throw RecordDecodingError("the to-one \(field.name) marked as held in an asset", key: record.key)
            }
            return try mapper.readAsset(
                RecordKeys.asset(root: root, primaryKey: primaryKey, attribute: attribute.name), type: attribute.valueType, record: record.key)
        }
        return try record.value(of: field, storeIdentifier: mapper.storeIdentifier)
    }

    /// The key of the asset the old attribute `name` is held in, when its record says it is
    /// held in one and its type is `type` (records format 2; `nil` otherwise).
    func assetKey(_ name: String, type: Schema.Attribute.ValueType) -> [UInt8]? {
        guard let record, let field = fields?.field(named: name), record.isAsset(field.index),
            case .attribute(let attribute) = field.kind, attribute.valueType == type
        else { return nil }
        return RecordKeys.asset(root: root, primaryKey: primaryKey, attribute: attribute.name)
    }
}
