import Engine
import Foundation

/// One save, worked out before anything is written: the checks, the permanent identifiers,
/// the final state of every object the save touches, and the engine batch that stores it.
///
/// Each object's state is an ``ObjectState``: one slot per property of its entity, in the
/// entity's slot order (record fields first), filled from the request's values or decoded
/// from the stored record's fields by index. No object's state is a dictionary by name: the
/// only snapshots by name the planner builds are its outputs (``whole(_:)``,
/// ``snapshotsToReregister()``), counted by ``snapshotsBuilt``.
///
/// Used only under the store's lock, on one thread.
final class SavePlanner {
    let mapper: RecordMapper
    var schema: Schema { mapper.schema }
    var layout: RecordLayout { mapper.layout }

    /// Stored objects without their to-many arrays, read on demand (`nil`: not stored).
    private var storedCache: [PersistentIdentifier: ObjectState?] = [:]
    /// The stored record bytes of the objects in ``storedCache``.
    private var storedRecords: [PersistentIdentifier: [UInt8]] = [:]
    /// Stored to-many targets, per object and relationship, read on demand.
    private var storedTargetsCache: [PersistentIdentifier: [String: [PersistentIdentifier]]] = [:]
    /// The final state of every object whose record the save writes (deleted ones excepted).
    /// To-many arrays are present only for the relationships the save read in full
    /// (*materialized*: stated by the request, or needed whole); the others are unchanged or
    /// changed through ``linkChanges``. A new object's state holds the properties the request
    /// stated (and those the save changed); the others read their defaults in place
    /// (``value(_:of:)``, ``whole(_:)``).
    var state: [PersistentIdentifier: ObjectState] = [:]
    /// Links added to and removed from to-many relationships that are not materialized: the
    /// other end of a link the request states (a tag gaining a post) changes without its other
    /// links being read.
    var linkChanges: [PersistentIdentifier: [String: LinkChange]] = [:]
    /// Objects the save deletes, cascades included.
    var deleted: Set<PersistentIdentifier> = []
    /// Objects the save inserts as new (upserts excluded).
    var inserted: Set<PersistentIdentifier> = []
    /// Objects an insert was merged into (upserts), with the properties of the uniqueness rules
    /// the inserts matched them by.
    var upserted: Set<PersistentIdentifier> = []
    var upsertConstraints: [PersistentIdentifier: Set<String>] = [:]
    /// Upsert targets another statement moves away from the value the insert matched (a to-many
    /// stated from the other side changes their to-one of the rule): no match, planned again.
    var movedAway: Set<PersistentIdentifier> = []
    /// Inserts whose unique value a stored object of another entity holds: refused unless the
    /// save deletes that object (a cascade may, known only once the statements are applied).
    var entityMismatches: [(insert: PersistentIdentifier, holder: PersistentIdentifier, constraint: [String])] = []
    /// Temporary identifier → permanent.
    var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
    /// Permanent identifier of a new object → the temporary one the request inserted it under
    /// (the name errors give it: the caller knows no other).
    var temporaries: [PersistentIdentifier: PersistentIdentifier] = [:]
    /// What the request said of each object it inserts or updates, and which properties it
    /// stated; in request order. The request's own snapshots (no copy per object), whose
    /// references to new objects are read through ``remapped``; an upsert's is a remapped copy
    /// without the to-ones it leaves nil.
    var statements: [(id: PersistentIdentifier, snapshot: DefaultSnapshot)] = []
    var stated: [PersistentIdentifier: Set<String>] = [:]
    /// The to-many relationships the request stated: the object, the relationship, its targets,
    /// and whether the statement only adds links (an upserting insert's: it never removes one).
    var intents: [(id: PersistentIdentifier, relationship: Schema.Relationship, targets: [PersistentIdentifier], addsOnly: Bool)] = []

    /// Per entity: its relationships, and the values a new object starts with (worked out once
    /// per save, not once per object).
    var relationshipsByEntity: [String: [Schema.Relationship]] = [:]
    var emptyValuesByEntity: [String: ObjectState.Values] = [:]

    /// The links one to-many relationship of one object gains and loses in the save.
    struct LinkChange {
        var added: Set<PersistentIdentifier> = []
        var removed: Set<PersistentIdentifier> = []
        var isEmpty: Bool { added.isEmpty && removed.isEmpty }

        /// The link to `target` is gained (or a loss of it undone).
        mutating func add(_ target: PersistentIdentifier) {
            if removed.remove(target) == nil { added.insert(target) }
        }

        /// The link to `target` is lost (or a gain of it undone).
        mutating func remove(_ target: PersistentIdentifier) {
            if added.remove(target) == nil { removed.insert(target) }
        }
    }

    /// How many updated objects' records the batch found byte-identical to the stored ones
    /// (their record, index and uniqueness entries not derived again).
    private(set) var unchangedRecords = 0
    /// How many snapshots by name (dictionaries) the planner built from its states: outputs
    /// only (``whole(_:)``, ``snapshotsToReregister()``), none while planning and encoding.
    private(set) var snapshotsBuilt = 0

    init(mapper: RecordMapper) { self.mapper = mapper }

    /// The stored object, without its to-many arrays: decoded from its record into slots.
    func stored(_ id: PersistentIdentifier) throws -> ObjectState? {
        if let cached = storedCache[id] { return cached }
        let loaded = try mapper.loadState(id)
        storedCache[id] = .some(loaded?.state)
        storedRecords[id] = loaded?.bytes
        return loaded?.state
    }

    /// `state` as a snapshot by name: an output of the save (counted by ``snapshotsBuilt``).
    func snapshot(of state: ObjectState) -> DefaultSnapshot {
        snapshotsBuilt += 1
        return state.snapshot
    }

    /// Records that the store holds no object `id` (a new object's fresh primary key), so that
    /// no read looks for it.
    func noteNotStored(_ id: PersistentIdentifier) {
        storedCache[id] = .some(nil)
    }

    /// The stored targets of the to-many `relationship` of `id` (none when it is not stored).
    func storedTargets(_ id: PersistentIdentifier, _ relationship: Schema.Relationship) throws -> [PersistentIdentifier] {
        // A new object has no stored links: nothing to read or remember.
        if inserted.contains(id) { return [] }
        if let cached = storedTargetsCache[id]?[relationship.name] { return cached }
        let targets = try stored(id) == nil ? [] : try mapper.targets(of: id, through: relationship)
        storedTargetsCache[id, default: [:]][relationship.name] = targets
        return targets
    }

    /// The stored object with every to-many array.
    func storedWhole(_ id: PersistentIdentifier) throws -> ObjectState? {
        guard var snapshot = try stored(id) else { return nil }
        for r in relationships(of: id.entityName) where r.isToMany { snapshot.values[r.name] = .toMany(try storedTargets(id, r)) }
        return snapshot
    }

    /// Whether `id` exists once the save is applied (stored or inserted, and not deleted).
    func exists(_ id: PersistentIdentifier) throws -> Bool {
        if deleted.contains(id) { return false }
        if state[id] != nil || inserted.contains(id) { return true }
        return try stored(id) != nil
    }

    /// The object's state as the save has it so far (to-many arrays as in ``state``).
    func current(_ id: PersistentIdentifier) throws -> ObjectState? {
        if deleted.contains(id) { return nil }
        return try state[id] ?? stored(id)
    }

    /// Changes the state of `id` (read from the store first when the save has not touched it);
    /// nothing for an object that is deleted or does not exist. A to-many array `body` reads
    /// must be materialized first (``materialize(_:_:)``).
    func modify(_ id: PersistentIdentifier, _ body: (inout ObjectState) -> Void) throws {
        guard var snapshot = try current(id) else { return }
        body(&snapshot)
        state[id] = snapshot
    }

    /// The targets the to-many `relationship` of `id` has so far in the save.
    func targets(_ id: PersistentIdentifier, _ relationship: Schema.Relationship) throws -> [PersistentIdentifier] {
        if let value = state[id]?.values[relationship.name] { return value.referencedIdentifiers }
        let stored = try storedTargets(id, relationship)
        guard let change = linkChanges[id]?[relationship.name] else { return stored }
        return stored.filter { !change.removed.contains($0) } + change.added.subtracting(stored).sorted()
    }

    /// Puts the whole to-many array of `relationship` into the state of `id` (with the link
    /// changes made so far), so that later changes edit the array.
    func materialize(_ id: PersistentIdentifier, _ relationship: Schema.Relationship) throws {
        guard !deleted.contains(id), state[id]?.values[relationship.name] == nil else { return }
        let all = try targets(id, relationship)
        linkChanges[id]?[relationship.name] = nil
        try modify(id) { $0.values[relationship.name] = .toMany(all) }
    }

    /// `id` gains the link to `target` in its to-many `relationship`.
    func addLink(_ id: PersistentIdentifier, _ relationship: Schema.Relationship, _ target: PersistentIdentifier) {
        guard !deleted.contains(id) else { return }
        if let value = state[id]?.values[relationship.name] {
            let ids = value.referencedIdentifiers
            if !ids.contains(target) { state[id]?.values[relationship.name] = .toMany(ids + [target]) }
            return
        }
        editLinks(of: id, relationship) { $0.add(target) }
    }

    /// `id` loses the link to `target` in its to-many `relationship`.
    func removeLink(_ id: PersistentIdentifier, _ relationship: Schema.Relationship, _ target: PersistentIdentifier) {
        guard !deleted.contains(id) else { return }
        if let value = state[id]?.values[relationship.name] {
            state[id]?.values[relationship.name] = .toMany(value.referencedIdentifiers.filter { $0 != target })
            return
        }
        editLinks(of: id, relationship) { $0.remove(target) }
    }

    /// Edits the link change of `relationship` of `id` in place: a much-linked object's change
    /// is not copied for each link.
    private func editLinks(of id: PersistentIdentifier, _ relationship: Schema.Relationship, _ body: (inout LinkChange) -> Void) {
        var changes = linkChanges.removeValue(forKey: id) ?? [:]
        body(&changes[relationship.name, default: LinkChange()])
        linkChanges[id] = changes
    }

    // MARK: The pipeline

    /// Plans the request by the rules of ``WALDataStore/save(_:)`` ("One request, one statement
    /// per object"): the updates and deletes describe the state the request leaves, inserts are
    /// matched for upserts against the stored objects as the request leaves them, and delete
    /// rules apply to relationships as the request leaves them.
    func plan(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> WriteBatch {
        try checkIdentifiers(request)
        // An insert never merges into an object the save deletes, nor into one another
        // statement moves away from the value it matched. A cascade can reach an upsert's
        // target, and a to-many stated from the other side move it, only once the statements
        // are applied, so such a target is excluded and the request planned again (at most
        // once per insert).
        var excluded: Set<PersistentIdentifier> = []
        while true {
            try assignIdentifiers(request, excluding: excluded)
            try applyStatements(request)
            try applyRelationshipChanges()
            try applyDeletes(request.deleted.map(\.persistentIdentifier), updated: Set(request.updated.map(\.persistentIdentifier)))
            let lost = upserted.intersection(deleted).union(movedAway)
            if lost.isEmpty { break }
            excluded.formUnion(lost)
            resetPlan()
        }
        if let m = entityMismatches.first(where: { !deleted.contains($0.holder) }) {
            throw uniquenessError(
                m.insert, m.holder, m.constraint,
                "shares its unique \(m.constraint.joined(separator: ", ")) with \(m.holder), a \(m.holder.entityName); an upsert needs the same entity, so change the values or update that object")
        }
        try checkReferencesToDeleted()
        try sweepReferencesToDeleted()
        try checkFinalState()
        return try batch()
    }

    /// Forgets everything planned, keeping what was read from the store.
    private func resetPlan() {
        state = [:]
        linkChanges = [:]
        deleted = []
        inserted = []
        upserted = []
        upsertConstraints = [:]
        movedAway = []
        entityMismatches = []
        remapped = [:]
        temporaries = [:]
        statements = []
        stated = [:]
        intents = []
    }

    /// The identifier the caller knows `id` by: a new object's temporary identifier, else `id`.
    func reported(_ id: PersistentIdentifier) -> PersistentIdentifier { temporaries[id] ?? id }

    /// The objects the save changed that the request did not hold as they now are, whole.
    /// Objects whose only change is a link gained or lost at the other end of a to-many
    /// relationship (a tag a saved post now lists) are not among them.
    func snapshotsToReregister() throws -> [PersistentIdentifier: DefaultSnapshot] {
        var said: [PersistentIdentifier: DefaultSnapshot] = [:]
        for statement in statements { said[statement.id] = statement.snapshot }
        var result: [PersistentIdentifier: DefaultSnapshot] = [:]
        for (id, partial) in state where !deleted.contains(id) {
            var snapshot = partial
            if inserted.contains(id) {
                // A new object's defaults, read in place so far, are part of what it now is.
                snapshot = try wholeState(id) ?? partial
            } else {
                for r in relationships(of: id.entityName) where r.isToMany && snapshot.values[r.name] == nil {
                    snapshot.values[r.name] = .toMany(try targets(id, r).sorted(by: RecordMapper.canonicalOrder))
                }
            }
            // A new object's statement is the request's snapshot: its references to other new
            // objects are read remapped.
            if upserted.contains(id) || said[id].map({ !Self.holdSameValues($0, snapshot.values, remapping: remapped) }) ?? true {
                result[id] = self.snapshot(of: snapshot)
            }
        }
        return result
    }

    /// Whether `a` (its references read through `remapping`) and `b` hold the same properties
    /// with the same values, to-many arrays in any order (compared without copying either).
    static func holdSameValues(
        _ a: DefaultSnapshot, _ b: ObjectState.Values, remapping: [PersistentIdentifier: PersistentIdentifier] = [:]
    ) -> Bool {
        guard a.values.count == b.count else { return false }
        for (name, stated) in a.values {
            guard let other = b[name] else { return false }
            let value = remapping.isEmpty ? stated : stated.remapping(remapping)
            if case .toMany(let x) = value, case .toMany(let y) = other {
                if x.count != y.count || (x != y && x.sorted(by: RecordMapper.canonicalOrder) != y.sorted(by: RecordMapper.canonicalOrder)) { return false }
            } else if value != other {
                return false
            }
        }
        return true
    }

    // MARK: Engine batch

    /// Every entry that changes: old entries of touched objects not kept are deleted, new or
    /// changed ones put. An object's old entries are derived with the same to-many arrays its
    /// state holds (the rest are unchanged, or changed through ``linkChanges``, whose join
    /// records are put and deleted one by one).
    private func batch() throws -> WriteBatch {
        var before: [EntryKey: StoredEntry] = [:]
        var after: [EntryKey: StoredEntry] = [:]
        func add(_ entries: [(key: [UInt8], entry: StoredEntry)], to side: inout [EntryKey: StoredEntry]) {
            for (key, entry) in entries where side[EntryKey(key)] == nil { side[EntryKey(key)] = entry }
        }
        for id in deleted.sorted() {
            if let old = try storedWhole(id) { add(mapper.entries(of: old), to: &before) }
        }
        for (id, new) in state where !deleted.contains(id) {
            guard var old = try stored(id), let pk = RecordMapper.primaryKey(of: id) else {
                add(mapper.entries(of: new), to: &after)
                continue
            }
            for r in relationships(of: id.entityName) where r.isToMany && new.values[r.name] != nil {
                old.values[r.name] = .toMany(try storedTargets(id, r))
            }
            let encoder = layout.encoder(of: id.entityName)
            let encoded = encoder.encode(new, primaryKey: pk, assetThreshold: mapper.assetThreshold, layout: layout)
            // The new record's bytes against the stored ones: when equal (and no field is held
            // in an asset, whose bytes the record does not hold), every field, and so every
            // back reference, index and uniqueness entry, is unchanged: only links are compared.
            if encoder.rulesReadFieldsOnly && !encoded.holdsAsset && encoded.record == storedRecords[id] {
                unchangedRecords += 1
                var links: [(key: [UInt8], entry: StoredEntry)] = []
                encoder.linkEntries(of: old, mapper: mapper, into: &links)
                add(links, to: &before)
                links.removeAll(keepingCapacity: true)
                encoder.linkEntries(of: new, mapper: mapper, into: &links)
                add(links, to: &after)
                continue
            }
            add(mapper.entries(of: old), to: &before)
            add(encoder.entries(of: new, encoded, primaryKey: pk, mapper: mapper), to: &after)
        }
        for (id, changes) in linkChanges.sorted(by: { $0.key < $1.key }) where !deleted.contains(id) {
            for (name, change) in changes.sorted(by: { $0.key < $1.key }) where state[id]?.values[name] == nil {
                guard case .relationship(let r)? = schema.property(named: name, in: id.entityName) else { continue }
                for target in change.added.sorted() where !deleted.contains(target) {
                    add(mapper.joinEntries(of: id, through: r, to: target), to: &after)
                }
                for target in change.removed.sorted() {
                    // A placeholder: what matters is that the key is not kept.
                    add(mapper.joinEntries(of: id, through: r, to: target).map { ($0.key, .inline([])) }, to: &before)
                }
            }
        }
        // In any order: the keys are distinct, and the engine needs no order within a commit.
        var batch = WriteBatch()
        for key in before.keys where after[key] == nil { batch.delete(key.bytes) }
        for (key, entry) in after where before[key] != entry {
            switch entry {
            case .inline(let bytes): batch.put(key.bytes, bytes)
            case .external(let bytes): batch.putExternal(key.bytes, bytes)
            }
        }
        return batch
    }

    /// An engine key as a dictionary key: hashed in one pass over its bytes (an array of bytes
    /// hashes byte by byte), ordered byte-wise.
    private struct EntryKey: Hashable, Comparable {
        let bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
        static func < (a: EntryKey, b: EntryKey) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }
    }
}
