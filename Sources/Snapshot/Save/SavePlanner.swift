import Engine
import Foundation

/// One save, worked out before anything is written: the checks, the permanent identifiers,
/// the final state of every object the save touches, and the engine writes that store it.
///
/// The steps, one file each: identifiers (``checkIdentifiers(_:)``,
/// ``assignIdentifiers(_:excluding:)``), statements (``applyStatements(_:)``), relationships
/// (``applyRelationshipChanges()``), deletes (``applyDeletes(_:updated:)``, the sweeps of
/// references to deleted objects), checks (``checkFinalState()``), and the batch
/// (``writes()``, then the outputs: ``snapshotsToReregister()``, ``countChanges()``).
///
/// Each object's state is an ``ObjectState``: one slot per property of its entity, in the
/// entity's slot order (record fields first), filled from the request's values or decoded
/// from the stored record's fields by index. An entity's properties are resolved once per
/// schema (its ``EntityEncoder``: the slot of each property, how it is checked and what it
/// reads when left out, the index and uniqueness rules that read it): a statement is read,
/// checked and placed in one pass over its entity's slots, one lookup of the snapshot's per
/// slot and none of the planner's own by property name (only the other end of a to-many a
/// statement changes keeps its link changes by relationship name). No object's state is a
/// dictionary by name:
/// the only snapshots by name the planner builds are its outputs (``whole(_:)``,
/// ``snapshotsToReregister()``), counted by ``snapshotsBuilt``.
///
/// Used only under the store's lock, on one thread.
final class SavePlanner {
    let mapper: RecordMapper
    var schema: Schema { mapper.schema }
    var layout: RecordLayout { mapper.layout }

    // MARK: What was read from the store (kept across attempts)

    /// Stored objects without their to-many arrays, read on demand (`nil`: not stored).
    private var storedCache: [PersistentIdentifier: ObjectState?] = [:]
    /// The stored record bytes of the objects in ``storedCache``.
    private(set) var storedRecords: [PersistentIdentifier: [UInt8]] = [:]
    /// Stored to-many targets, per object and relationship, read on demand.
    private var storedTargetsCache: [PersistentIdentifier: [String: [PersistentIdentifier]]] = [:]

    /// Per entity: its relationships, and the values a new object starts with (worked out once
    /// per save, not once per object).
    private var relationshipsByEntity: [String: [Schema.Relationship]] = [:]
    private var emptyValuesByEntity: [String: ObjectState.Values] = [:]

    // MARK: The plan

    /// What the current attempt at the request has worked out. ``plan(_:)`` starts a new
    /// attempt by assigning a fresh value when an upsert target turns out to be lost (nothing
    /// of a failed attempt is kept but what was read from the store).
    var attempt = Attempt()

    /// Everything one attempt at planning a request works out.
    struct Attempt {
        /// The final state of every object whose record the save writes (deleted ones excepted).
        /// To-many arrays are present only for the relationships the save read in full
        /// (*materialized*: stated by the request, or needed whole); the others are unchanged or
        /// changed through ``linkChanges``. A new object's state holds the properties the request
        /// stated (and those the save changed); the others read their defaults in place
        /// (``SavePlanner/wholeState(_:)``, the entity's encoder).
        var state: [PersistentIdentifier: ObjectState] = [:]
        /// Links added to and removed from to-many relationships that are not materialized: the
        /// other end of a link the request states (a tag gaining a post) changes without its
        /// other links being read.
        var linkChanges: [PersistentIdentifier: [String: LinkChange]] = [:]
        /// Objects the save deletes, cascades included.
        var deleted: Set<PersistentIdentifier> = []
        /// Objects the save inserts as new (upserts excluded).
        var inserted: Set<PersistentIdentifier> = []
        /// Objects an insert was merged into (upserts), with the properties of the uniqueness
        /// rules the inserts matched them by.
        var upserted: Set<PersistentIdentifier> = []
        var upsertConstraints: [PersistentIdentifier: Set<String>] = [:]
        /// Upsert targets another statement moves away from the value the insert matched (a
        /// to-many stated from the other side changes their to-one of the rule): no match,
        /// planned again.
        var movedAway: Set<PersistentIdentifier> = []
        /// Inserts whose unique value a stored object of another entity holds: refused unless
        /// the save deletes that object (a cascade may, known only once the statements are
        /// applied).
        var entityMismatches: [(insert: PersistentIdentifier, holder: PersistentIdentifier, constraint: [String])] = []
        /// Temporary identifier → permanent.
        var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
        /// Permanent identifier of a new object → the temporary one the request inserted it
        /// under (the name errors give it: the caller knows no other).
        var temporaries: [PersistentIdentifier: PersistentIdentifier] = [:]
        /// What the request said of each object it inserts or updates, in request order.
        var statements: [Statement] = []
        /// Per stated object: the slots its statements state, and its last statement (an index
        /// into ``statements``).
        var stated: [PersistentIdentifier: (slots: SlotMask, statement: Int)] = [:]
        /// The to-many relationships the request stated: the object, the relationship, its
        /// targets, and whether the statement only adds links (an upserting insert's: it never
        /// removes one).
        var intents: [Intent] = []
    }

    /// One insert or update of the request as the planner read it: its values in the slots of
    /// its entity, checked, their references read through ``Attempt/remapped``.
    struct Statement {
        /// The object (a new object's permanent identifier).
        let id: PersistentIdentifier
        /// Whether it is a new object's (an insert that is not an upsert).
        let isNew: Bool
        /// The stated values by slot (`nil`: not stated); an upsert's leaves out the to-ones it
        /// leaves nil. As the request said them: a null is still null, a to-many lists the
        /// stated targets.
        let said: [PropertyValue?]
        /// The slot rules of its entity (``EntityEncoder/slotRules``).
        let rules: [EntityEncoder.SlotRule]
    }

    /// A to-many relationship a statement states.
    struct Intent {
        let id: PersistentIdentifier
        let slot: Int
        let relationship: Schema.Relationship
        let inverse: Schema.Relationship?
        let targets: [PersistentIdentifier]
        let addsOnly: Bool
    }

    /// A set of slots: a bit per slot, the first 64 held inline (no allocation).
    struct SlotMask {
        private var low: UInt64 = 0
        private var high: [UInt64] = []

        mutating func insert(_ slot: Int) {
            if slot < 64 { low |= 1 << UInt64(slot); return }
            let word = slot / 64 - 1
            if high.count <= word { high += repeatElement(0, count: word + 1 - high.count) }
            high[word] |= 1 << UInt64(slot % 64)
        }

        func contains(_ slot: Int) -> Bool {
            if slot < 64 { return low & (1 << UInt64(slot)) != 0 }
            let word = slot / 64 - 1
            return word < high.count && high[word] & (1 << UInt64(slot % 64)) != 0
        }

        mutating func formUnion(_ other: SlotMask) {
            low |= other.low
            if high.count < other.high.count { high += repeatElement(0, count: other.high.count - high.count) }
            for (i, word) in other.high.enumerated() { high[i] |= word }
        }
    }

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

    // Read-only views of the plan, for the history and observation steps.
    var state: [PersistentIdentifier: ObjectState] { attempt.state }
    var linkChanges: [PersistentIdentifier: [String: LinkChange]] { attempt.linkChanges }
    var deleted: Set<PersistentIdentifier> { attempt.deleted }
    var inserted: Set<PersistentIdentifier> { attempt.inserted }
    var remapped: [PersistentIdentifier: PersistentIdentifier] { attempt.remapped }

    /// How many updated objects' records the batch found byte-identical to the stored ones
    /// (their record, index and uniqueness entries not derived again).
    var unchangedRecords = 0
    /// How many snapshots by name (dictionaries) the planner built from its states: outputs
    /// only (``whole(_:)``, ``snapshotsToReregister()``), none while planning and encoding.
    private(set) var snapshotsBuilt = 0

    init(mapper: RecordMapper) { self.mapper = mapper }

    // MARK: The pipeline

    /// Plans the request by the rules of ``WALDataStore/save(_:)`` ("One request, one statement
    /// per object"): the updates and deletes describe the state the request leaves, inserts are
    /// matched for upserts against the stored objects as the request leaves them, and delete
    /// rules apply to relationships as the request leaves them. Returns the writes in key order.
    func plan(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> Writes {
        try checkIdentifiers(request)
        // An insert never merges into an object the save deletes, nor into one another
        // statement moves away from the value it matched. A cascade can reach an upsert's
        // target, and a to-many stated from the other side move it, only once the statements
        // are applied, so such a target is excluded and the request planned again (at most
        // once per insert), from a fresh attempt.
        var excluded: Set<PersistentIdentifier> = []
        while true {
            try assignIdentifiers(request, excluding: excluded)
            try applyStatements(request)
            try applyRelationshipChanges()
            try applyDeletes(request.deleted.map(\.persistentIdentifier), updated: Set(request.updated.map(\.persistentIdentifier)))
            let lost = attempt.upserted.intersection(attempt.deleted).union(attempt.movedAway)
            if lost.isEmpty { break }
            excluded.formUnion(lost)
            attempt = Attempt()
        }
        if let m = attempt.entityMismatches.first(where: { !attempt.deleted.contains($0.holder) }) {
            throw uniquenessError(
                m.insert, m.holder, m.constraint,
                "shares its unique \(m.constraint.joined(separator: ", ")) with \(m.holder), a \(m.holder.entityName); an upsert needs the same entity, so change the values or update that object"
            )
        }
        try checkReferencesToDeleted()
        try sweepReferencesToDeleted()
        try checkFinalState()
        return try writes()
    }

    /// The identifier the caller knows `id` by: a new object's temporary identifier, else `id`.
    func reported(_ id: PersistentIdentifier) -> PersistentIdentifier { attempt.temporaries[id] ?? id }

    // MARK: Reading the store and the plan

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

    /// The relationships of `entity`, in property order.
    func relationships(of entity: String) -> [Schema.Relationship] {
        if let found = relationshipsByEntity[entity] { return found }
        let found = schema.allProperties(of: entity).compactMap { if case .relationship(let r) = $0 { r } else { nil } }
        relationshipsByEntity[entity] = found
        return found
    }

    /// A new object's values: its defaults, null attributes, no targets.
    func emptyState(_ id: PersistentIdentifier) -> ObjectState {
        if let values = emptyValuesByEntity[id.entityName] { return ObjectState(id, table: values.table, slots: values.slots) }
        let encoder = layout.encoder(of: id.entityName)
        var state = ObjectState(id, table: encoder.slots)
        for (i, rule) in encoder.slotRules.enumerated() { state.values.slots[i] = rule.whole ?? .toMany([]) }
        emptyValuesByEntity[id.entityName] = state.values
        return state
    }

    /// The stored targets of the to-many `relationship` of `id` (none when it is not stored).
    func storedTargets(_ id: PersistentIdentifier, _ relationship: Schema.Relationship) throws -> [PersistentIdentifier] {
        // A new object has no stored links: nothing to read or remember.
        if attempt.inserted.contains(id) { return [] }
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
        if attempt.deleted.contains(id) { return false }
        if attempt.state[id] != nil || attempt.inserted.contains(id) { return true }
        return try stored(id) != nil
    }

    /// The object's state as the save has it so far (to-many arrays as in ``Attempt/state``).
    func current(_ id: PersistentIdentifier) throws -> ObjectState? {
        if attempt.deleted.contains(id) { return nil }
        return try attempt.state[id] ?? stored(id)
    }

    /// Changes the state of `id` (read from the store first when the save has not touched it);
    /// nothing for an object that is deleted or does not exist. A to-many array `body` reads
    /// must be materialized first (``materialize(_:_:)``).
    func modify(_ id: PersistentIdentifier, _ body: (inout ObjectState) -> Void) throws {
        guard var snapshot = try current(id) else { return }
        body(&snapshot)
        attempt.state[id] = snapshot
    }

    /// The targets the to-many `relationship` of `id` has so far in the save.
    func targets(_ id: PersistentIdentifier, _ relationship: Schema.Relationship) throws -> [PersistentIdentifier] {
        if let value = attempt.state[id]?.values[relationship.name] { return value.referencedIdentifiers }
        let stored = try storedTargets(id, relationship)
        guard let change = attempt.linkChanges[id]?[relationship.name] else { return stored }
        return stored.filter { !change.removed.contains($0) } + change.added.subtracting(stored).sorted()
    }

    /// Puts the whole to-many array of `relationship` into the state of `id` (with the link
    /// changes made so far), so that later changes edit the array.
    func materialize(_ id: PersistentIdentifier, _ relationship: Schema.Relationship) throws {
        guard !attempt.deleted.contains(id), attempt.state[id]?.values[relationship.name] == nil else { return }
        let all = try targets(id, relationship)
        attempt.linkChanges[id]?[relationship.name] = nil
        try modify(id) { $0.values[relationship.name] = .toMany(all) }
    }

    /// `id` gains the link to `target` in its to-many `relationship`.
    func addLink(_ id: PersistentIdentifier, _ relationship: Schema.Relationship, _ target: PersistentIdentifier) {
        guard !attempt.deleted.contains(id) else { return }
        if let value = attempt.state[id]?.values[relationship.name] {
            let ids = value.referencedIdentifiers
            if !ids.contains(target) { attempt.state[id]?.values[relationship.name] = .toMany(ids + [target]) }
            return
        }
        editLinks(of: id, relationship) { $0.add(target) }
    }

    /// `id` loses the link to `target` in its to-many `relationship`.
    func removeLink(_ id: PersistentIdentifier, _ relationship: Schema.Relationship, _ target: PersistentIdentifier) {
        guard !attempt.deleted.contains(id) else { return }
        if let value = attempt.state[id]?.values[relationship.name] {
            attempt.state[id]?.values[relationship.name] = .toMany(value.referencedIdentifiers.filter { $0 != target })
            return
        }
        editLinks(of: id, relationship) { $0.remove(target) }
    }

    /// Edits the link change of `relationship` of `id` in place: a much-linked object's change
    /// is not copied for each link.
    private func editLinks(of id: PersistentIdentifier, _ relationship: Schema.Relationship, _ body: (inout LinkChange) -> Void) {
        var changes = attempt.linkChanges.removeValue(forKey: id) ?? [:]
        body(&changes[relationship.name, default: LinkChange()])
        attempt.linkChanges[id] = changes
    }
}
