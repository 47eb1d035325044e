/// How the entities and properties of a stored schema correspond to a new one, and what
/// changed: an entity or property of the new schema matches the old one its `originalName`
/// names, else the old one of the same name (a name already claimed by an `originalName` is
/// not matched again).
struct SchemaMapping {
    let old: Schema
    let new: Schema
    /// New entity name → old entity name.
    private(set) var oldEntity: [String: String] = [:]
    /// Old entity name → new entity name (absent: removed).
    private(set) var newEntity: [String: String] = [:]
    /// New entity → its declared property (new name) → the old declared property's name.
    private(set) var oldProperty: [String: [String: String]] = [:]
    /// Every difference, in the new schema's order (removed entities last).
    private(set) var changes: [SchemaChange] = []

    init(from old: Schema, to new: Schema) {
        self.old = old
        self.new = new
        for entity in new.entities {
            if let original = entity.originalName, original != entity.name, old.entity(named: original) != nil {
                oldEntity[entity.name] = original
            }
        }
        let claimed = Set(oldEntity.values)
        for entity in new.entities where oldEntity[entity.name] == nil && old.entity(named: entity.name) != nil && !claimed.contains(entity.name) {
            oldEntity[entity.name] = entity.name
        }
        for (n, o) in oldEntity { newEntity[o] = n }
        var matchedProperties: [String: [String: Schema.Property]] = [:]
        for entity in new.entities {
            guard let oldName = oldEntity[entity.name], let before = old.entity(named: oldName) else { continue }
            let matched = Self.match(entity.declaredProperties, in: before.declaredProperties, name: \.name) { p in
                switch p {
                case .attribute(let a): a.originalName
                case .relationship(let r): r.originalName
                }
            }
            matchedProperties[entity.name] = matched
            oldProperty[entity.name] = matched.mapValues(\.name)
        }
        for entity in new.entities {
            guard let oldName = oldEntity[entity.name], let before = old.entity(named: oldName) else {
                changes.append(.entityAdded(entity.name))
                continue
            }
            compare(before, entity, matched: matchedProperties[entity.name] ?? [:])
        }
        for entity in old.entities where newEntity[entity.name] == nil { changes.append(.entityRemoved(entity.name)) }
    }

    /// The strongest effect of the changes: what the migration has to do. A migration that
    /// would change only the header is a rewrite when some entity's old field list is not a
    /// prefix of its new one (records format 2 finds fields by position: a field added before
    /// others, or to a superentity of an entity with fields of its own, moves them).
    var effect: SchemaChange.Effect {
        let strongest = changes.map(\.effect).max() ?? .header
        guard strongest < .rewrite, !keepsFieldPrefixes else { return strongest }
        return .rewrite
    }

    /// Whether every entity kept from the old schema has its old record fields as the first
    /// of its new ones (same properties, same order, same storage).
    var keepsFieldPrefixes: Bool {
        new.entities.allSatisfy { entity in
            guard let oldName = oldEntity[entity.name] else { return true }
            return RecordFieldList(schema: new, entity: entity.name).hasPrefix(RecordFieldList(schema: old, entity: oldName))
        }
    }

    /// Whether the data must be read to know it fits the new schema: a new uniqueness rule (no
    /// two objects may share its values) or an attribute made required without a default (no
    /// object may hold a null).
    var needsCheck: Bool {
        changes.contains { change in
            switch change {
            case .uniquenessAdded, .attributeMadeRequired(_, _, hasDefault: false): true
            default: false
            }
        }
    }

    /// The old name of the property `name` (declared or inherited) of the new entity `entity`,
    /// or `nil` for a property the old schema does not have.
    func oldName(ofProperty name: String, inNew entity: String) -> String? {
        guard let declaring = new.inheritanceChain(of: entity).first(where: { e in e.declaredProperties.contains { $0.name == name } }) else {
            return nil
        }
        return oldProperty[declaring.name]?[name]
    }

    private static func match<T>(_ items: [T], in oldItems: [T], name: (T) -> String, original: (T) -> String?) -> [String: T] {
        var result: [String: T] = [:]
        var claimed: Set<String> = []
        for item in items {
            if let o = original(item), o != name(item), let found = oldItems.first(where: { name($0) == o }) {
                result[name(item)] = found
                claimed.insert(o)
            }
        }
        for item in items where result[name(item)] == nil && !claimed.contains(name(item)) {
            if let found = oldItems.first(where: { name($0) == name(item) }) { result[name(item)] = found }
        }
        return result
    }

    private mutating func compare(_ before: Schema.Entity, _ after: Schema.Entity, matched: [String: Schema.Property]) {
        let e = after.name
        if before.name != e { changes.append(.entityRenamed(from: before.name, to: e)) }
        if before.superentityName.flatMap({ newEntity[$0] ?? "\u{0}removed" }) != after.superentityName || (after.isAbstract && !before.isAbstract) {
            changes.append(.inheritanceChanged(entity: e))
        }

        let oldProperties = before.declaredProperties
        let map = oldProperty[e] ?? [:]

        for property in after.declaredProperties {
            guard let previous = matched[property.name] else {
                switch property {
                case .attribute(let a):
                    changes.append(.attributeAdded(entity: e, attribute: a.name))
                    if !a.isOptional && (a.defaultValue == nil || a.defaultValue == .null) {
                        changes.append(.attributeMadeRequired(entity: e, attribute: a.name, hasDefault: false))
                    }
                case .relationship(let r): changes.append(.relationshipAdded(entity: e, relationship: r.name))
                }
                continue
            }
            switch (previous, property) {
            case let (.attribute(o), .attribute(n)): compare(o, n, in: e)
            case let (.relationship(o), .relationship(n)): compare(o, n, in: e)
            default: changes.append(.propertyKindChanged(entity: e, property: property.name))
            }
        }
        let kept = Set(matched.values.map(\.name))
        for property in oldProperties where !kept.contains(property.name) {
            switch property {
            case .attribute(let a): changes.append(.attributeRemoved(entity: e, attribute: a.name))
            case .relationship(let r): changes.append(.relationshipRemoved(entity: e, relationship: r.name))
            }
        }

        // Indexes and uniqueness rules, old ones spelled with the new property names.
        func renamed(_ properties: [String]) -> [String]? {
            var result: [String] = []
            for p in properties {
                guard let n = map.first(where: { $0.value == p })?.key else { return nil }
                result.append(n)
            }
            return result
        }
        let oldIndexes = before.indexes.map { renamed($0.properties) }
        let newIndexes = after.indexes.map(\.properties)
        for index in newIndexes where !oldIndexes.contains(index) { changes.append(.indexAdded(entity: e, properties: index)) }
        for (i, index) in oldIndexes.enumerated() where index.map({ !newIndexes.contains($0) }) ?? true {
            changes.append(.indexRemoved(entity: e, properties: before.indexes[i].properties))
        }
        func rules(_ entity: Schema.Entity) -> [[String]] {
            entity.attributes.filter { $0.options.contains(.unique) }.map { [$0.name] } + entity.uniquenessConstraints.map(\.properties)
        }
        let oldRules = rules(before).map(renamed)
        let newRules = rules(after)
        for rule in newRules where !oldRules.contains(rule) { changes.append(.uniquenessAdded(entity: e, properties: rule)) }
        for (i, rule) in oldRules.enumerated() where rule.map({ !newRules.contains($0) }) ?? true {
            changes.append(.uniquenessRemoved(entity: e, properties: rules(before)[i]))
        }
    }

    private mutating func compare(_ o: Schema.Attribute, _ n: Schema.Attribute, in e: String) {
        if o.name != n.name { changes.append(.attributeRenamed(entity: e, from: o.name, to: n.name)) }
        if o.valueType != n.valueType { changes.append(.attributeTypeChanged(entity: e, attribute: n.name, from: o.valueType, to: n.valueType)) }
        if o.isOptional && !n.isOptional {
            changes.append(.attributeMadeRequired(entity: e, attribute: n.name, hasDefault: n.defaultValue.map { !$0.isNull } ?? false))
        } else if !o.isOptional && n.isOptional {
            changes.append(.attributeMadeOptional(entity: e, attribute: n.name))
        }
        if o.defaultValue != n.defaultValue { changes.append(.attributeDefaultChanged(entity: e, attribute: n.name)) }
        let storage: Schema.Attribute.Options = [.externalStorage, .ephemeral]
        if o.options.intersection(storage) != n.options.intersection(storage) {
            changes.append(.attributeStorageChanged(entity: e, attribute: n.name))
        }
    }

    private mutating func compare(_ o: Schema.Relationship, _ n: Schema.Relationship, in e: String) {
        if o.name != n.name { changes.append(.relationshipRenamed(entity: e, from: o.name, to: n.name)) }
        if newEntity[o.destination] != n.destination || o.cardinality != n.cardinality {
            changes.append(.relationshipTargetChanged(entity: e, relationship: n.name))
            return
        }
        // The old inverse, spelled as the new schema names it.
        let oldInverse: String? = o.inverse.flatMap { inv in
            let oldDestination = old.inheritanceChain(of: o.destination).first { $0.declaredProperties.contains { $0.name == inv } }
            guard let d = oldDestination, let nd = newEntity[d.name] else { return nil }
            return newName(ofOld: inv, inNew: nd)
        }
        if oldInverse != n.inverse {
            // A to-one keeps its links in its own field and back references whatever its
            // inverse, as long as that is a to-many (rebuilt from them) or nothing; a to-many's
            // links move between join records and back references with its inverse.
            let newInverse = n.inverse.flatMap { new.relationship(named: $0, in: n.destination) }
            let oldInverseRelationship = o.inverse.flatMap { old.relationship(named: $0, in: o.destination) }
            let storageStays = !n.isToMany && (newInverse?.isToMany ?? true) && (oldInverseRelationship?.isToMany ?? true)
            changes.append(.relationshipInverseChanged(entity: e, relationship: n.name, storageMoves: !storageStays))
        }
        if !n.isToMany && o.isOptional && !n.isOptional { changes.append(.relationshipMadeRequired(entity: e, relationship: n.name)) }
        if o.deleteRule != n.deleteRule || o.minimumCount != n.minimumCount || o.maximumCount != n.maximumCount || (!o.isOptional && n.isOptional) {
            changes.append(.relationshipRulesChanged(entity: e, relationship: n.name))
        }
    }

    /// The new name of the old property `name` as seen from the new entity `entity` (its
    /// declaration may be an ancestor's), when the new schema keeps it.
    func newName(ofOld name: String, inNew entity: String) -> String? {
        for ancestor in new.inheritanceChain(of: entity) {
            if let n = oldProperty[ancestor.name]?.first(where: { $0.value == name })?.key { return n }
        }
        return nil
    }
}
