import Foundation

extension SavePlanner {
    /// Each insert and update, remapped and checked, merged over what the object holds; to-many
    /// statements are kept as intents, applied by ``applyRelationshipChanges()``.
    ///
    /// An upserting insert merges by the upsert rule: its attributes win; a to-one it leaves
    /// nil keeps the stored target; a to-many only gains links (the union of both).
    ///
    /// Each statement is read in one pass over its entity's slots (``read(_:as:rules:reportedAs:dropsNilToOnes:)``):
    /// checked, remapped and placed by slot. A new object's state is what the request states;
    /// the properties it leaves out are not filled in: they read their defaults in place
    /// (``wholeState(_:)``, the entity's encoder).
    func applyStatements(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws {
        let upserts =
            attempt.upserted.isEmpty
            ? [] : Set(request.inserted.compactMap { attempt.remapped[$0.persistentIdentifier] }).intersection(attempt.upserted)
        for snapshot in request.inserted { try applyStatement(snapshot, upserts: upserts) }
        for snapshot in request.updated { try applyStatement(snapshot, upserts: upserts) }
    }

    private func applyStatement(_ snapshot: DefaultSnapshot, upserts: Set<PersistentIdentifier>) throws {
        let given = snapshot.persistentIdentifier
        let id = given.isTemporary ? attempt.remapped[given] ?? given : given
        let encoder = layout.encoder(of: id.entityName)
        if given.isTemporary && attempt.inserted.contains(id) {
            try applyInsert(snapshot, as: id, encoder)
            return
        }
        let isUpsert = given.isTemporary && upserts.contains(id)
        // An upsert's statement leaves out the to-ones it leaves nil (they keep the stored target).
        let rules = encoder.slotRules
        let read = try read(snapshot, as: id, rules: rules, reportedAs: given, dropsNilToOnes: isUpsert)
        record(Statement(id: id, isNew: false, said: read.values, rules: rules), read.slots)
        var merged = try current(id) ?? emptyState(id)
        for (i, rule) in rules.enumerated() {
            guard let value = read.values[i] else { continue }
            switch rule.kind {
            case .attribute(let a):
                merged.values.slots[i] = value.isNull && !a.isOptional ? a.defaultValue ?? value : value
            case .toOne:
                merged.values.slots[i] = .toOne(Self.target(value))
            case .toMany(let r):
                attempt.intents.append(
                    Intent(id: id, slot: i, relationship: r, inverse: rule.inverse, targets: value.referencedIdentifiers, addsOnly: isUpsert))
            }
        }
        attempt.state[id] = merged
    }

    /// A new object's statement (`snapshot`, inserted as `id`): read and checked in one pass
    /// over its entity's slots, its references remapped; its state is the stated values by
    /// slot, rewritten only where the state differs (a non-optional null takes its default, a
    /// null to-one is a `.toOne(nil)`, a stated to-many starts empty and is an intent).
    private func applyInsert(_ snapshot: DefaultSnapshot, as id: PersistentIdentifier, _ encoder: EntityEncoder) throws {
        let rules = encoder.slotRules
        let read = try read(snapshot, as: id, rules: rules, reportedAs: snapshot.persistentIdentifier, dropsNilToOnes: false)
        record(Statement(id: id, isNew: true, said: read.values, rules: rules), read.slots)
        var slots = read.values
        if read.rewrites {
            for (i, rule) in rules.enumerated() {
                guard let value = slots[i] else { continue }
                switch rule.kind {
                case .attribute(let a):
                    if value.isNull && !a.isOptional { slots[i] = a.defaultValue ?? value }
                case .toOne:
                    if case .null = value { slots[i] = .toOne(nil) }
                case .toMany(let r):
                    attempt.intents.append(
                        Intent(id: id, slot: i, relationship: r, inverse: rule.inverse, targets: value.referencedIdentifiers, addsOnly: false))
                    slots[i] = .toMany([])
                }
            }
        }
        attempt.state[id] = ObjectState(id, table: encoder.slots, slots: slots)
    }

    /// Adds `statement`, which states `slots`, to the attempt's statements.
    private func record(_ statement: Statement, _ slots: SlotMask) {
        attempt.statements.append(statement)
        let index = attempt.statements.count - 1
        if let earlier = attempt.stated.updateValue((slots, index), forKey: statement.id) {
            // Two inserts upserted into one object: both state what they state.
            var union = earlier.slots
            union.formUnion(slots)
            attempt.stated[statement.id] = (union, index)
        }
    }

    /// Whether a statement of the request states the property `name` of `id`.
    func isStated(_ id: PersistentIdentifier, _ name: String) -> Bool {
        guard let entry = attempt.stated[id], let slot = layout.slotTable(of: id.entityName).index(of: name) else { return false }
        return entry.slots.contains(slot)
    }

    /// The target of a to-one value (`nil` for `.toOne(nil)`, null, or any other value).
    static func target(_ value: PropertyValue?) -> PersistentIdentifier? {
        if case .toOne(let id?)? = value { return id }
        return nil
    }

    /// `snapshot`, a statement about `id`, read in one pass over its entity's slots (`rules`,
    /// in slot order): each stated value looked up once in the snapshot, its references read
    /// through ``Attempt/remapped``, checked against its property (a known property, a value of
    /// the declared type, a non-optional attribute not null unless it has a default, references
    /// to objects that exist), and placed in its slot. `rewrites`: whether the object's state
    /// differs from the values (a to-many, a null to-one, a non-optional null).
    ///
    /// `dropsNilToOnes`: an upsert's statement, which leaves out (unread, unchecked) the to-ones
    /// that name no target. When a value fails, the statement is checked again in name order,
    /// so that the error names the first property in name order whatever the slots' order
    /// (`reportedAs`: the identifier errors name, the one the request holds).
    private func read(
        _ snapshot: DefaultSnapshot, as id: PersistentIdentifier, rules: [EntityEncoder.SlotRule], reportedAs reportedID: PersistentIdentifier,
        dropsNilToOnes: Bool
    ) throws -> (values: [PropertyValue?], slots: SlotMask, rewrites: Bool) {
        let given = snapshot.values
        let remapped = attempt.remapped
        var values = [PropertyValue?](repeating: nil, count: rules.count)
        var slots = SlotMask()
        var rewrites = false
        var known = 0
        var valid = true
        for i in rules.indices {
            let rule = rules[i]
            guard let raw = given[rule.name] else { continue }
            known += 1
            let value = Self.remapping(raw, remapped)
            switch rule.kind {
            case .attribute(let a):
                if value.isNull {
                    if !a.isOptional { if a.defaultValue == nil { valid = false } else { rewrites = true } }
                } else if !a.valueType.accepts(value) {
                    valid = false
                }
            case .toOne(let r):
                switch value {
                case .toOne(let target?): valid = (try? checkReference(target, from: reportedID, through: r)) != nil
                case .toOne(nil): if dropsNilToOnes { continue }
                case .null:
                    if dropsNilToOnes { continue }
                    rewrites = true
                default:
                    if dropsNilToOnes { continue }
                    valid = false
                }
            case .toMany(let r):
                guard case .toMany(let targets) = value else {
                    valid = false
                    break
                }
                rewrites = true
                for target in targets where (try? checkReference(target, from: reportedID, through: r)) == nil {
                    valid = false
                    break
                }
            }
            guard valid else { break }
            values[i] = value
            slots.insert(i)
        }
        if !valid || known != given.count {
            // A refusal (or a name the entity lacks): the error of the first property in name order.
            var checked = given
            if dropsNilToOnes {
                for (name, value) in given where value.referencedIdentifiers.isEmpty {
                    if case .relationship(let r)? = schema.property(named: name, in: id.entityName), !r.isToMany { checked[name] = nil }
                }
            }
            try validate(checked, of: id, reportedAs: reportedID, remapping: remapped)
            throw DataStoreError(
                .invalidRequest, "\(reportedID) holds a value its entity \(id.entityName) refuses.", entityName: id.entityName, identifier: reportedID
            )
        }
        return (values, slots, rewrites)
    }

    /// `value` with its references to new objects read through `remapped` (returned as it is
    /// when it names none: no copy of a to-many that refers to stored objects only).
    static func remapping(_ value: PropertyValue, _ remapped: [PersistentIdentifier: PersistentIdentifier]) -> PropertyValue {
        switch value {
        case .toOne(let target?):
            guard target.isTemporary, let permanent = remapped[target] else { return value }
            return .toOne(permanent)
        case .toMany(let targets):
            return targets.contains(where: \.isTemporary) ? value.remapping(remapped) : value
        case .array:
            return remapped.isEmpty ? value : value.remapping(remapped)
        default:
            return value
        }
    }

    /// The state of `id` whole, as the object is saved, as a snapshot by name (an output:
    /// for observers): see ``wholeState(_:)``.
    func whole(_ id: PersistentIdentifier) throws -> DefaultSnapshot? {
        try wholeState(id).map(snapshot(of:))
    }

    /// The state of `id` whole, as the object is saved: its values, its defaults for the
    /// properties a new object's state leaves out, and every to-many array.
    func wholeState(_ id: PersistentIdentifier) throws -> ObjectState? {
        guard var state = attempt.state[id] else { return nil }
        let rules = layout.encoder(of: id.entityName).slotRules
        for (i, rule) in rules.enumerated() where state.values.slots[i] == nil {
            if let whole = rule.whole {
                state.values.slots[i] = whole
            } else if let r = rule.relationship {
                state.values.slots[i] = .toMany(try targets(id, r).sorted(by: RecordMapper.canonicalOrder))
            }
        }
        return state
    }

    /// The statement's values against the schema, by name (the path of a refused statement,
    /// see ``read(_:as:rules:reportedAs:dropsNilToOnes:)``): known properties, values of the
    /// declared types, non-optional attributes not null, references to objects that exist.
    /// `reportedAs`: the identifier errors name (the one the request holds).
    /// `remapping`: how the values' references are read (a new object's statement keeps the
    /// request's temporary identifiers).
    private func validate(
        _ values: [String: PropertyValue], of id: PersistentIdentifier, reportedAs reportedID: PersistentIdentifier,
        remapping: [PersistentIdentifier: PersistentIdentifier] = [:]
    ) throws {
        func read(_ entry: (key: String, value: PropertyValue)) -> (key: String, value: PropertyValue) {
            remapping.isEmpty ? entry : (entry.key, entry.value.remapping(remapping))
        }
        do {
            try validate(values.lazy.map(read), of: id, reportedAs: reportedID)
        } catch {
            // The error names the first property in name order, whatever the dictionary's order.
            try validate(values.sorted(by: { $0.key < $1.key }).lazy.map(read), of: id, reportedAs: reportedID)
            throw error
        }
    }

    private func validate(
        _ values: some Sequence<(key: String, value: PropertyValue)>, of id: PersistentIdentifier, reportedAs reportedID: PersistentIdentifier
    ) throws {
        for (name, value) in values {
            guard let property = schema.property(named: name, in: id.entityName) else {
                throw DataStoreError(
                    .unknownProperty, "\(id.entityName) neither declares nor inherits \(name); use a property of the schema.",
                    entityName: id.entityName, propertyName: name, identifier: reportedID)
            }
            switch property {
            case .attribute(let a):
                if value.isNull {
                    if !a.isOptional && a.defaultValue == nil {
                        throw DataStoreError(
                            .missingValue, "\(id.entityName).\(name) of \(reportedID) is not optional; give it a value.",
                            entityName: id.entityName, propertyName: name, identifier: reportedID)
                    }
                } else if !a.valueType.accepts(value) {
                    throw DataStoreError(
                        .typeMismatch,
                        "\(id.entityName).\(name) of \(reportedID) holds \(a.valueType) values, not a \(value.caseName); convert the value.",
                        entityName: id.entityName, propertyName: name, identifier: reportedID)
                }
            case .relationship(let r):
                let fits: Bool
                switch value {
                case .toMany: fits = r.isToMany
                case .toOne, .null: fits = !r.isToMany
                default: fits = false
                }
                guard fits else {
                    throw DataStoreError(
                        .typeMismatch,
                        "\(id.entityName).\(name) of \(reportedID) is a \(r.isToMany ? "to-many" : "to-one") relationship, given a \(value.caseName); give it \(r.isToMany ? ".toMany([…])" : ".toOne(…)").",
                        entityName: id.entityName, propertyName: name, identifier: reportedID)
                }
                for target in value.referencedIdentifiers { try checkReference(target, from: reportedID, through: r) }
            }
        }
    }

    func checkReference(_ target: PersistentIdentifier, from id: PersistentIdentifier, through r: Schema.Relationship) throws {
        func fail(_ code: DataStoreError.Code, _ message: String) -> DataStoreError {
            DataStoreError(code, message, entityName: id.entityName, propertyName: r.name, identifier: id, relatedIdentifiers: [target])
        }
        if target.isTemporary {
            throw fail(
                .danglingReference,
                "\(id.entityName).\(r.name) of \(id) refers to \(target), which is neither stored nor inserted in this save; insert it in the same save."
            )
        }
        if target.storeIdentifier != mapper.storeIdentifier {
            throw fail(
                .foreignIdentifier, "\(id.entityName).\(r.name) of \(id) refers to \(target) of another store; relationships stay within one store.")
        }
        guard schema.isEntity(target.entityName, kindOf: r.destination) else {
            throw fail(
                .typeMismatch,
                "\(id.entityName).\(r.name) of \(id) holds \(r.destination) objects, not \(target.entityName) \(target); refer to a \(r.destination)."
            )
        }
        guard RecordMapper.primaryKey(of: target) != nil, try exists(target) || attempt.upserted.contains(target) else {
            throw fail(
                .danglingReference,
                "\(id.entityName).\(r.name) of \(id) refers to \(target), which the store does not hold; it was deleted or never saved.")
        }
    }
}
