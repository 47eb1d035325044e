import BenchSupport
import Foundation
import Snapshot

/// Request shapes the generator can make or leave out. Those both stores agree on are made by
/// default (``defaults``); the others (a known disagreement) only when `WALSTORE_DIFF_INCLUDE`
/// names them (comma-separated, or `all`).
struct DiffShapes: OptionSet, Sendable {
    let rawValue: Int

    /// A save naming one object twice: twice among the updated, updated and deleted, two
    /// inserts with one unique value, an insert upserting into an object the save updates or
    /// deletes, a reference to an object the save deletes, a delete whose rules reach an object
    /// the save also changes (`twice`).
    static let namesAnObjectTwice = DiffShapes(rawValue: 1 << 0)
    /// Strings with combining marks (`e\u{301}`): ordered by their NFC bytes, equal when
    /// canonically equivalent, matched by `Character` (`combining`).
    static let combiningMarks = DiffShapes(rawValue: 1 << 1)
    /// Predicates comparing an attribute with a value of another kind (`typeMismatch`, refused
    /// before reading whatever the data) (`mismatch`).
    static let typeMismatches = DiffShapes(rawValue: 1 << 2)
    /// Sorts by a to-many key path (refused as `invalidPredicate` by both, counts too) (`toManySort`).
    static let toManySorts = DiffShapes(rawValue: 1 << 3)
    /// Doubles of value `-0.0` beside `0.0` (`negativeZero`).
    static let negativeZero = DiffShapes(rawValue: 1 << 4)
    /// Upserting inserts as drawn (`upsertMerge`). Without it, an insert that upserts into a
    /// stored object states the stored object's to-one target where it has none and the
    /// stored links of each to-many with its own, so that merging (a to-one without a target
    /// keeps the stored one, to-manys are united) and replacing give the same result.
    static let upsertMerges = DiffShapes(rawValue: 1 << 5)

    /// The shapes the random run makes without `WALSTORE_DIFF_INCLUDE`: all but
    /// ``negativeZero`` (SQLite stores a whole REAL as an integer, so `-0.0` reads back `0.0`).
    static let defaults: DiffShapes = [.namesAnObjectTwice, .combiningMarks, .typeMismatches, .toManySorts, .upsertMerges]

    static let names: [(String, DiffShapes)] = [
        ("twice", .namesAnObjectTwice), ("combining", .combiningMarks), ("mismatch", .typeMismatches),
        ("toManySort", .toManySorts), ("negativeZero", .negativeZero), ("upsertMerge", .upsertMerges),
    ]

    /// The shapes `text` names (`twice,combining`, or `all`).
    init(names text: String) {
        var shapes: DiffShapes = []
        for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if name == "all" { shapes = DiffShapes(rawValue: ~0) }
            for (known, shape) in Self.names where known == name { shapes.insert(shape) }
        }
        self = shapes
    }

    init(rawValue: Int) { self.rawValue = rawValue }
}

/// Makes the steps of a run from a seed, one at a time, from the state both stores agree on
/// (so that updates, deletes and predicates mostly name objects that exist). The same seed and
/// shapes make the same steps.
struct DiffGenerator {
    var rng: SplitMix64
    let shapes: DiffShapes
    /// The logical number of the next insert.
    private(set) var nextNumber = 1

    init(seed: UInt64, shapes: DiffShapes) {
        rng = SplitMix64(seed: seed)
        self.shapes = shapes
    }

    // MARK: Random choices

    private mutating func chance(_ percent: Int) -> Bool { rng.below(100) < percent }
    private mutating func pick<T>(_ items: [T]) -> T { items[rng.below(items.count)] }
    private mutating func some<T>(_ items: [T], atMost: Int) -> [T] {
        guard !items.isEmpty else { return [] }
        var copy = items
        rng.shuffle(&copy)
        return Array(copy.prefix(rng.below(min(atMost, items.count) + 1)))
    }

    // MARK: Values

    static let dates = [0.0, 86_400, 172_800].map { Date(timeIntervalSinceReferenceDate: 700_000_000 + $0) }

    private var plainStrings: [String] { ["a", "b", "ab", "Ab", "ba", "é", "É", "x y", ""] }

    private mutating func string(_ pool: [String]) -> String {
        if shapes.contains(.combiningMarks) && chance(15) { return pick(["e\u{301}", "E\u{301}", "a\u{30A}b", "ae\u{301}"]) }
        return pick(pool)
    }

    /// A value of `attribute` for an insert or update.
    private mutating func value(_ attribute: Schema.Attribute) -> PropertyValue {
        if attribute.isOptional && chance(25) { return .null }
        switch attribute.name {
        case "handle": return .string(string(["ann", "bob", "cy", "Ann", "dée"]))
        case "name": return .string(string(["red", "blue", "Green", "green", "é"]))
        case "slug": return .string(pick(["a", "b", "c"]))
        case "year": return .int(rng.inRange(2020...2022))
        case "colour": return .string(pick(["red", "blue"]))
        default: break
        }
        switch attribute.valueType {
        case .int: return .int(rng.inRange(-2...3))
        case .double:
            var pool = [0.5, 1.0, -2.25, 2.0, 0.0]
            if shapes.contains(.negativeZero) { pool.append(-0.0) }
            return .double(pick(pool))
        case .bool: return .bool(chance(50))
        case .date: return .date(pick(Self.dates))
        case .string: return .string(string(plainStrings))
        default: return .null
        }
    }

    /// A constant to compare `attribute` with: mostly of its kind (numbers sometimes of
    /// another numeric kind), null sometimes, with ``DiffShapes/typeMismatches`` sometimes of
    /// another kind altogether.
    private mutating func operand(_ attribute: Schema.Attribute) -> PropertyValue {
        if chance(8) { return .null }
        if shapes.contains(.typeMismatches) && chance(8) { return attribute.valueType == .string ? .int(1) : .string("a") }
        switch attribute.valueType {
        case .int where chance(25): return .double(Double(rng.inRange(-4...6)) / 2)
        case .double where chance(25): return .int(rng.inRange(-2...3))
        case .int where attribute.name == "year": return .int(rng.inRange(2019...2023))
        default: return value(Schema.Attribute(attribute.name, attribute.valueType))
        }
    }

    // MARK: Objects

    private func objects(_ entity: String, in state: [PersistentIdentifier: DefaultSnapshot]) -> [PersistentIdentifier] {
        state.keys.filter { DiffSchema.schema.isEntity($0.entityName, kindOf: entity) }.sorted()
    }

    /// The next step, given the agreed state (`current`) and every object ever agreed on.
    mutating func step(current: [PersistentIdentifier: DefaultSnapshot], lastKnown: [PersistentIdentifier: DefaultSnapshot]) -> Step {
        let roll = rng.below(100)
        switch roll {
        case 0..<42: return .save(save(current: current, lastKnown: lastKnown))
        case 42..<62: return .fetch(FetchStep(kind: .fetch, descriptor: descriptor(current: current, lastKnown: lastKnown)))
        case 62..<74: return .fetch(FetchStep(kind: .fetchCount, descriptor: descriptor(current: current, lastKnown: lastKnown)))
        case 74..<88: return .fetch(FetchStep(kind: .fetchIdentifiers, descriptor: descriptor(current: current, lastKnown: lastKnown)))
        case 88..<96:
            let entity = pick(DiffSchema.entityNames)
            return .batchDelete(entity: entity, predicate: chance(80) ? predicate(entity, depth: 0, current: current, lastKnown: lastKnown) : nil)
        default: return .reopen
        }
    }

    // MARK: Saves

    private mutating func save(current: [PersistentIdentifier: DefaultSnapshot], lastKnown: [PersistentIdentifier: DefaultSnapshot]) -> SaveStep {
        var save = SaveStep()
        let twice = shapes.contains(.namesAnObjectTwice)
        // Updates first (distinct objects unless `twice`).
        var updatedIDs: [PersistentIdentifier] = []
        for _ in 0..<rng.below(4) {
            let stale = lastKnown.keys.filter { current[$0] == nil }.sorted()
            var pool = current.keys.sorted()
            if !stale.isEmpty && chance(10) { pool = stale }  // an update of a deleted object
            if !twice { pool.removeAll { updatedIDs.contains($0) } }
            guard !pool.isEmpty else { break }
            let id = pick(pool)
            updatedIDs.append(id)
            var values: [String: PropertyValue] = [:]
            let entity = id.entityName
            let names = DiffSchema.attributes(entity).map(\.name) + DiffSchema.relationships(entity).map(\.name)
            for name in some(names, atMost: 3) { values[name] = propertyValue(entity, name, current: current, newInRequest: save.inserted) }
            if values.isEmpty {
                let name = pick(names)
                values[name] = propertyValue(entity, name, current: current, newInRequest: save.inserted)
            }
            save.updated.append(SaveStep.Change(id: id, values: values))
        }
        // Inserts.
        var claimed: Set<String> = []
        // Objects the save mentions (updates and their references, earlier inserts' references),
        // and the stored objects its inserts upsert into.
        var mentioned = Set(updatedIDs)
        for change in save.updated {
            var values = current[change.id]?.values ?? [:]
            for (name, value) in change.values { values[name] = value }
            mentioned.formUnion(values.values.flatMap(\.referencedIdentifiers))
        }
        var upserted: Set<PersistentIdentifier> = []
        for _ in 0..<rng.below(5) {
            let entity = pick(DiffSchema.entityNames)
            let id = Logical.id(entity, nextNumber)
            var values: [String: PropertyValue] = ["uid": .int(nextNumber)]
            for attribute in DiffSchema.attributes(entity) {
                let v = value(attribute)
                if v.isNull && chance(50) { continue }  // absent, rather than an explicit null
                values[attribute.name] = v
            }
            for relationship in DiffSchema.relationships(entity) where chance(60) {
                values[relationship.name] = propertyValue(entity, relationship.name, current: current, newInRequest: save.inserted)
            }
            if !shapes.contains(.upsertMerges) {
                // No other statement of the save about an object an insert upserts into (the
                // insert's unstated to-one would then mean "keep" to one store and "none" to
                // another).
                values = values.mapValues { value in
                    switch value {
                    case .toOne(let id?) where upserted.contains(id): .toOne(nil)
                    case .toMany(let ids): .toMany(ids.filter { !upserted.contains($0) })
                    default: value
                    }
                }
            }
            if !shapes.contains(.upsertMerges), let target = upsertTarget(entity, values, in: current), target.entityName == entity,
                let stored = current[target]
            {
                if mentioned.contains(target) { continue }
                upserted.insert(target)
                for relationship in DiffSchema.relationships(entity) {
                    let name = relationship.name
                    if relationship.isToMany {
                        let mine = values[name]?.referencedIdentifiers ?? []
                        values[name] = .toMany(mine + (stored.values[name]?.referencedIdentifiers ?? []).filter { !mine.contains($0) })
                    } else if values[name]?.isNull ?? true {
                        values[name] = stored.values[name] ?? .toOne(nil)
                    }
                }
            }
            if !twice {
                // No two inserts share a unique value, and none upserts into an object the save
                // updates.
                let root = DiffSchema.schema.rootEntity(of: entity)?.name ?? entity
                let keys = DiffSchema.uniquenessRules(entity).map { "\(root)|\($0)|\($0.map { values[$0].map(Describe.value) ?? "nil" })" }
                if keys.contains(where: claimed.contains) { continue }
                // Matched against the objects as the save leaves them (rule: an insert matching
                // an object the save updates is refused as two statements about one object).
                var left = current
                for change in save.updated { for (name, value) in change.values { left[change.id]?.values[name] = value } }
                if upsertTarget(entity, values, in: left).map(updatedIDs.contains) == true { continue }
                claimed.formUnion(keys)
            }
            nextNumber += 1
            mentioned.formUnion(values.values.flatMap(\.referencedIdentifiers))
            save.inserted.append(DefaultSnapshot(persistentIdentifier: id, values: values))
        }
        // Deletes: without `twice`, of objects the save neither changes nor refers to, whose
        // delete rules reach none of those.
        var touched = Set(updatedIDs)
        for snapshot in save.inserted {
            touched.formUnion(snapshot.referencedIdentifiers)
            if let target = upsertTarget(snapshot.persistentIdentifier.entityName, snapshot.values, in: current) { touched.insert(target) }
        }
        for change in save.updated {
            // The whole snapshot the update sends: the stored values with the changes applied.
            var values = current[change.id]?.values ?? [:]
            for (name, value) in change.values { values[name] = value }
            touched.formUnion(values.values.flatMap(\.referencedIdentifiers))
        }
        for _ in 0..<rng.below(3) {
            var pool = current.keys.sorted()
            if !twice { pool.removeAll { save.deleted.contains($0) || !Self.reach($0, in: current).isDisjoint(with: touched) } }
            guard !pool.isEmpty else { break }
            let id = pick(pool)
            save.deleted.append(id)
            touched.formUnion(Self.reach(id, in: current))
        }
        if save.itemCount == 0 {
            let entity = pick(DiffSchema.entityNames)
            var values: [String: PropertyValue] = ["uid": .int(nextNumber)]
            for attribute in DiffSchema.attributes(entity) { values[attribute.name] = value(attribute) }
            save.inserted.append(DefaultSnapshot(persistentIdentifier: Logical.id(entity, nextNumber), values: values))
            nextNumber += 1
        }
        return save
    }

    /// The objects within three relationships of `id` (itself included): those its delete
    /// rules, or the inverses they clear, may reach.
    static func reach(_ id: PersistentIdentifier, in state: [PersistentIdentifier: DefaultSnapshot]) -> Set<PersistentIdentifier> {
        var seen: Set<PersistentIdentifier> = [id]
        var frontier = [id]
        for _ in 0..<3 {
            var next: [PersistentIdentifier] = []
            for object in frontier {
                for target in state[object]?.referencedIdentifiers ?? [] where seen.insert(target).inserted { next.append(target) }
            }
            frontier = next
        }
        return seen
    }

    /// The stored object an insert of `values` would upsert into, if any.
    private func upsertTarget(_ entity: String, _ values: [String: PropertyValue], in state: [PersistentIdentifier: DefaultSnapshot]) -> PersistentIdentifier? {
        for rule in DiffSchema.uniquenessRules(entity) {
            let wanted = rule.map { values[$0] ?? .null }
            if wanted.contains(where: \.isNull) { continue }
            let root = DiffSchema.schema.rootEntity(of: entity)?.name ?? entity
            for id in objects(root, in: state) where rule.map({ state[id]?.values[$0] ?? .null }) == wanted { return id }
        }
        return nil
    }

    /// A value for the property `name` of an `entity` object: an attribute's value, or targets
    /// among the stored objects and the save's earlier inserts.
    private mutating func propertyValue(
        _ entity: String, _ name: String, current: [PersistentIdentifier: DefaultSnapshot], newInRequest: [DefaultSnapshot]
    ) -> PropertyValue {
        if let attribute = DiffSchema.attributes(entity).first(where: { $0.name == name }) { return value(attribute) }
        let relationship = DiffSchema.relationships(entity).first { $0.name == name }!
        let candidates = objects(relationship.destination, in: current)
            + newInRequest.map(\.persistentIdentifier).filter { $0.entityName == relationship.destination }
        if relationship.isToMany { return .toMany(some(candidates, atMost: 3)) }
        if candidates.isEmpty || chance(20) { return .toOne(nil) }
        return .toOne(pick(candidates))
    }

    // MARK: Fetches

    /// Key paths through to-one relationships from `entity` to an attribute, up to two hops.
    private func paths(_ entity: String, hops: Int = 2) -> [(path: String, attribute: Schema.Attribute)] {
        var result = DiffSchema.allAttributes(entity).map { ($0.name, $0) }
        guard hops > 0 else { return result }
        for relationship in DiffSchema.relationships(entity) where !relationship.isToMany {
            result += paths(relationship.destination, hops: hops - 1).map { (relationship.name + "." + $0.path, $0.attribute) }
        }
        return result
    }

    private mutating func descriptor(current: [PersistentIdentifier: DefaultSnapshot], lastKnown: [PersistentIdentifier: DefaultSnapshot]) -> FetchDescriptor {
        let entity = pick(DiffSchema.entityNames)
        var descriptor = FetchDescriptor(entityName: entity)
        if chance(80) { descriptor.predicate = predicate(entity, depth: 0, current: current, lastKnown: lastKnown) }
        if chance(70) {
            let sortable = paths(entity).filter { $0.path != "uid" }
            for _ in 0..<rng.inRange(1...2) {
                descriptor.sortBy.append(FetchSortDescriptor(PropertyPath(pick(sortable).path), order: chance(40) ? .reverse : .forward))
            }
            if shapes.contains(.toManySorts) && chance(10), let toMany = DiffSchema.relationships(entity).first(where: \.isToMany) {
                descriptor.sortBy.insert(FetchSortDescriptor(PropertyPath(toMany.name)), at: 0)
            }
            // The tiebreaker: uids are distinct, so the order is total.
            descriptor.sortBy.append(FetchSortDescriptor("uid", order: chance(30) ? .reverse : .forward))
            if chance(35) { descriptor.fetchOffset = rng.below(4) }
            if chance(35) { descriptor.fetchLimit = rng.below(5) }
        }
        if chance(10) { descriptor.includesSubentities = false }
        if chance(10) {
            let names = DiffSchema.allAttributes(entity).map(\.name) + DiffSchema.relationships(entity).map(\.name)
            descriptor.propertiesToFetch = some(names, atMost: 3)
        }
        if chance(10) { descriptor.relationshipKeyPathsForPrefetching = [PropertyPath(pick(DiffSchema.relationships(entity)).name)] }
        return descriptor
    }

    /// A predicate on `entity`'s objects.
    mutating func predicate(
        _ entity: String, depth: Int, current: [PersistentIdentifier: DefaultSnapshot], lastKnown: [PersistentIdentifier: DefaultSnapshot]
    ) -> FetchPredicate {
        let leafOnly = depth >= 2
        let roll = rng.below(leafOnly ? 60 : 100)
        switch roll {
        case 0..<20:
            let (path, attribute) = pick(paths(entity))
            let comparison = pick([FetchPredicate.Comparison.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual])
            return .compare(path: PropertyPath(path), comparison, value: operand(attribute))
        case 20..<32:
            let strings = paths(entity).filter { $0.attribute.valueType == .string }
            let (path, _) = pick(strings)
            let operation = pick([FetchPredicate.StringOperation.contains, .beginsWith, .endsWith])
            let options = FetchPredicate.StringOptions(rawValue: UInt8(rng.below(4)))
            return .string(path: PropertyPath(path), operation, needle: string(["a", "b", "A", "é", "e", "ab", ""]), options: options)
        case 32..<38:
            let nullable = paths(entity).filter(\.attribute.isOptional).map(\.path)
                + DiffSchema.relationships(entity).filter { !$0.isToMany }.map(\.name)
            guard !nullable.isEmpty else { return .isNull(path: "handle") }
            return .isNull(path: PropertyPath(pick(nullable)))
        case 38..<44:
            let (path, attribute) = pick(paths(entity, hops: 1))
            return .oneOf(path: PropertyPath(path), values: (0..<rng.inRange(0...3)).map { _ in operand(attribute) })
        case 44..<50:
            var ids = some(objects(entity, in: lastKnown), atMost: 4)
            if chance(20), let other = lastKnown.keys.sorted().first(where: { $0.entityName != entity }) { ids.append(other) }
            return .identifierIn(Set(ids))
        case 50..<56:
            let toOnes = DiffSchema.relationships(entity).filter { !$0.isToMany }
            guard let relationship = toOnes.isEmpty ? nil : pick(toOnes) else { return .constant(chance(50)) }
            let targets = objects(relationship.destination, in: lastKnown)
            let target: PersistentIdentifier? = targets.isEmpty || chance(20) ? nil : pick(targets)
            return .compare(path: PropertyPath(relationship.name), chance(70) ? .equal : .notEqual, value: .toOne(target))
        case 56..<58:
            return .constant(chance(50))
        case 58..<60:
            // An entity test: the entity itself or one of its sub-entities, with or without theirs.
            let kinds = [entity] + DiffSchema.schema.subentities(of: entity).map(\.name)
            return .entity(pick(kinds), includesSubentities: chance(50))
        case 60..<76:
            // any/all over a to-many, possibly reached through a to-one first.
            var hops: [(prefix: String, entity: String)] = [("", entity)]
            for relationship in DiffSchema.relationships(entity) where !relationship.isToMany {
                hops.append((relationship.name + ".", relationship.destination))
            }
            let hop = pick(hops)
            let toManys = DiffSchema.relationships(hop.entity).filter(\.isToMany)
            guard !toManys.isEmpty else { return .constant(true) }
            let relationship = pick(toManys)
            let inner = predicate(relationship.destination, depth: depth + 1, current: current, lastKnown: lastKnown)
            let path = PropertyPath(hop.prefix + relationship.name)
            return chance(60) ? .any(path: path, inner) : .all(path: path, inner)
        case 76..<86:
            return .not(predicate(entity, depth: depth + 1, current: current, lastKnown: lastKnown))
        case 86..<93:
            return .and((0..<rng.inRange(0...3)).map { _ in predicate(entity, depth: depth + 1, current: current, lastKnown: lastKnown) })
        default:
            return .or((0..<rng.inRange(0...3)).map { _ in predicate(entity, depth: depth + 1, current: current, lastKnown: lastKnown) })
        }
    }
}
