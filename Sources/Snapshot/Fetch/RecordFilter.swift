import Engine
import Foundation

/// The match stage of a fetch: which stored records of one root the fetch selects, decided on
/// the bytes the engine lends, and what the later stages keep of each (its sort values, its
/// snapshot when one was needed, its bytes when the window is decoded whole). It hides the
/// records format from the candidate sources: they hand it a record's key and bytes.
///
/// Everything that depends only on the fetch is resolved once, when the filter is made: for
/// each concrete entity of the root, whether the fetch selects its objects at all (the
/// descriptor's entity and the predicate's entity tests), its field list, the predicate
/// compiled for its records (``RecordMatcher``) and the fields its sorts read. A record is then
/// tested by parsing its header in place (``RecordView``, into a slot buffer reused for every
/// record), finding its entity by comparing the name's bytes with the root's entities' (no
/// UTF-8 validation, no dictionary), and running the compiled predicate on its fields in place:
/// a record the fetch does not select costs no allocation. A record whose predicate the bytes
/// cannot decide (a path through a relationship, text that is not ASCII, …) is decoded and
/// evaluated on its snapshot, as are records of records format 1.
struct RecordFilter {
    /// What the filter knows of one concrete entity of the root.
    struct EntityPlan {
        let name: String
        let nameBytes: [UInt8]
        let fields: RecordFieldList
        /// Whether the fetch can select objects of this entity: it is the fetched entity (or a
        /// sub-entity of it, when the fetch includes those) and passes the predicate's entity
        /// tests.
        let selected: Bool
        /// The predicate compiled for this entity's records (`nil`: no predicate).
        let matcher: RecordMatcher?
        /// For each sort descriptor, the field it reads when that is a field of the object
        /// itself (read alone from the record); `nil` when the sort needs the snapshot.
        let sortFields: [RecordField?]
    }

    /// One record the fetch selects: what the window and the materialiser need of it.
    struct Candidate {
        var snapshot: DefaultSnapshot?
        let entity: String
        let primaryKey: UUID
        /// The record's bytes, kept when the window is decoded whole.
        let bytes: [UInt8]?
        let sortValues: [PropertyValue]
    }

    let root: String
    let plans: [EntityPlan]
    private let descriptor: FetchDescriptor
    private let mapper: RecordMapper
    private let evaluator: PredicateEvaluator
    /// The properties decoded for a snapshot the predicate or the sort needs (`nil`: all).
    private let properties: Set<String>?
    private let toMany: Bool
    /// Whether a candidate keeps its record's bytes (for a window decoded whole).
    private let keepsBytes: Bool
    private let slots: RecordSlotBuffer

    /// A filter for `descriptor`'s fetch from the records of `root`.
    ///
    /// - Parameters:
    ///   - properties: what a snapshot decoded to evaluate or sort holds (`nil`: everything).
    ///   - toMany: whether such a snapshot holds its to-many arrays.
    ///   - keepsBytes: whether candidates keep their record's bytes.
    init(
        _ descriptor: FetchDescriptor, root: String, mapper: RecordMapper, evaluator: PredicateEvaluator, properties: Set<String>?, toMany: Bool,
        keepsBytes: Bool
    ) throws {
        let schema = mapper.schema
        var plans: [EntityPlan] = []
        var mostFields = 0
        for entity in [root] + schema.subentities(of: root).map(\.name) {
            let fields = mapper.layout.recordFields(of: entity)
            mostFields = max(mostFields, fields.count)
            let selected = try Self.isFetched(entity, by: descriptor, in: schema) && Self.passesEntityTests(entity, descriptor.predicate, evaluator)
            let sortFields = descriptor.sortBy.map { sort -> RecordField? in
                sort.path.components.count == 1 ? fields.field(named: sort.path.components[0]) : nil
            }
            plans.append(
                EntityPlan(
                    name: entity, nameBytes: Array(entity.utf8), fields: fields, selected: selected,
                    matcher: selected
                        ? descriptor.predicate.map {
                            RecordMatcher($0, entity: entity, fields: fields, evaluator: evaluator, storeIdentifier: mapper.storeIdentifier)
                        } : nil,
                    sortFields: sortFields))
        }
        self.root = root
        self.plans = plans
        self.descriptor = descriptor
        self.mapper = mapper
        self.evaluator = evaluator
        self.properties = properties
        self.toMany = toMany
        self.keepsBytes = keepsBytes
        slots = RecordSlotBuffer(capacity: mostFields)
    }

    /// Whether `descriptor` fetches objects of the concrete entity `entity`: it is the entity
    /// fetched, or a sub-entity of it when the fetch includes those.
    static func isFetched(_ entity: String, by descriptor: FetchDescriptor, in schema: Schema) -> Bool {
        entity == descriptor.entityName || (descriptor.includesSubentities && schema.isEntity(entity, kindOf: descriptor.entityName))
    }

    /// Whether an object of the concrete entity `entity` passes the entity tests among the
    /// predicate's top-level conjuncts.
    static func passesEntityTests(_ entity: String, _ predicate: FetchPredicate?, _ evaluator: PredicateEvaluator) throws -> Bool {
        let conjuncts: [FetchPredicate]
        switch predicate {
        case .and(let list)?: conjuncts = list
        case let p?: conjuncts = [p]
        case nil: return true
        }
        for case let .entity(name, includesSubentities) in conjuncts
        where try !evaluator.isOfEntity(entity, name, includesSubentities: includesSubentities) {
            return false
        }
        return true
    }

    /// The plan of the entity whose name is the UTF-8 bytes `name`; `nil` for a name that is
    /// not an entity of the root.
    func plan(named name: UnsafeRawBufferPointer) -> Int? {
        var i = 0
        while i < plans.count {
            let matches = plans[i].nameBytes.withUnsafeBytes { known in
                known.count == name.count && (known.count == 0 || memcmp(known.baseAddress!, name.baseAddress!, known.count) == 0)
            }
            if matches { return i }
            i += 1
        }
        return nil
    }

    /// The candidate the record `bytes` (stored under `key`, primary key `primaryKey`) is when
    /// the fetch selects it; `nil` when it does not.
    ///
    /// - Throws: ``RecordDecodingError`` for a record that does not decode or is not of an
    ///   entity of the root, and what evaluating the predicate or a sort throws.
    func candidate(_ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, primaryKey pk: UUID) throws -> Candidate? {
        guard bytes.count > 0, bytes[0] == RecordReader.version else {
            return try decodedCandidate(Array(bytes), key: Array(key), primaryKey: pk)
        }
        let record = try RecordView(bytes, key: key, buffer: slots)
        guard let p = plan(named: record.entityName) else {
            throw RecordDecodingError("a record of \(record.entityNameString), which is not an entity of the root \(root)", key: Array(key))
        }
        let plan = plans[p]
        guard record.fieldCount <= plan.fields.count else {
            throw RecordDecodingError("a record of \(record.fieldCount) fields, more than the \(plan.fields.count) of \(plan.name)", key: Array(key))
        }
        guard plan.selected else { return nil }
        var snapshot: DefaultSnapshot?
        if let matcher = plan.matcher {
            switch try matcher.matches(record, primaryKey: pk) {
            case false?: return nil
            case true?: break
            case nil:
                let decoded = try decode(bytes, key: key, primaryKey: pk)
                guard try evaluator.evaluate(descriptor.predicate!, on: decoded) else { return nil }
                snapshot = decoded
            }
        }
        var values: [PropertyValue] = []
        if !descriptor.sortBy.isEmpty {
            values.reserveCapacity(descriptor.sortBy.count)
            for (i, sort) in descriptor.sortBy.enumerated() {
                // A field of the object itself, held inline: read alone.
                if snapshot == nil, let field = plan.sortFields[i], !record.isAsset(field.index) {
                    values.append(try record.value(of: field, storeIdentifier: mapper.storeIdentifier))
                    continue
                }
                if snapshot == nil { snapshot = try decode(bytes, key: key, primaryKey: pk) }
                values.append(try evaluator.value(at: sort.path, of: snapshot!))
            }
        }
        return Candidate(snapshot: snapshot, entity: plan.name, primaryKey: pk, bytes: keepsBytes ? Array(bytes) : nil, sortValues: values)
    }

    /// The snapshot (in part: ``properties``) of a format-2 record read in place.
    private func decode(_ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, primaryKey pk: UUID) throws -> DefaultSnapshot {
        try mapper.snapshot(of: try RecordReader(Array(bytes), key: Array(key)), primaryKey: pk, root: root, toMany: toMany, only: properties)
    }

    /// ``candidate(_:key:primaryKey:)`` for a record decoded whole first (records format 1).
    private func decodedCandidate(_ bytes: [UInt8], key: [UInt8], primaryKey pk: UUID) throws -> Candidate? {
        let entity = try mapper.entityName(ofRecord: bytes, key: key)
        guard let plan = plans.first(where: { $0.name == entity }) else {
            throw RecordDecodingError("a record of \(entity), which is not an entity of the root \(root)", key: key)
        }
        guard plan.selected else { return nil }
        let snapshot = try mapper.snapshot(ofRecord: bytes, key: key, primaryKey: pk, root: root, toMany: toMany, only: properties)
        guard try descriptor.predicate.map({ try evaluator.evaluate($0, on: snapshot) }) ?? true else { return nil }
        let values = try descriptor.sortBy.map { try evaluator.value(at: $0.path, of: snapshot) }
        return Candidate(snapshot: snapshot, entity: entity, primaryKey: pk, bytes: keepsBytes ? bytes : nil, sortValues: values)
    }
}
