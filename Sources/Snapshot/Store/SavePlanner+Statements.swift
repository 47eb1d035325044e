import Foundation

extension SavePlanner {
    /// Identifiers first: inserts temporary and of concrete, declared entities; updates and
    /// deletes permanent, of this store, and (updates) of stored objects.
    ///
    /// One object stated twice is refused (`conflictingChanges`): the same identifier twice
    /// among the inserted or the updated, or among both the updated and the deleted. The same
    /// identifier twice among the deleted is one delete.
    func checkIdentifiers(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws {
        func conflict(_ id: PersistentIdentifier, _ lists: String, _ advice: String) -> DataStoreError {
            DataStoreError(
                .conflictingChanges, "\(id) is \(lists) in one save; \(advice).", entityName: id.entityName, identifier: id)
        }
        var insertedIDs: Set<PersistentIdentifier> = []
        for snapshot in request.inserted where !insertedIDs.insert(snapshot.persistentIdentifier).inserted {
            throw conflict(snapshot.persistentIdentifier, "inserted twice (two inserted snapshots carry it)",
                           "give each new object a temporary identifier of its own, or insert one snapshot")
        }
        var updatedIDs: Set<PersistentIdentifier> = []
        for snapshot in request.updated where !updatedIDs.insert(snapshot.persistentIdentifier).inserted {
            throw conflict(snapshot.persistentIdentifier, "updated twice (two updated snapshots carry it)",
                           "merge the two into one updated snapshot")
        }
        let deletedIDs = Set(request.deleted.map(\.persistentIdentifier))
        for snapshot in request.updated where deletedIDs.contains(snapshot.persistentIdentifier) {
            throw conflict(snapshot.persistentIdentifier, "both updated and deleted",
                           "drop the update to delete it, or drop the delete to keep it")
        }
        for snapshot in request.inserted {
            let id = snapshot.persistentIdentifier
            guard id.isTemporary else {
                throw DataStoreError(
                    .invalidRequest, "An inserted object has the permanent identifier \(id); insert new objects under temporary identifiers.",
                    entityName: id.entityName, identifier: id)
            }
            let entity = try schema.requireEntity(named: id.entityName)
            guard !entity.isAbstract else {
                throw DataStoreError(
                    .invalidRequest, "\(entity.name) is abstract; insert an object of one of its sub-entities.", entityName: entity.name, identifier: id)
            }
        }
        for snapshot in request.updated + request.deleted { try checkPermanent(snapshot.persistentIdentifier) }
        for snapshot in request.updated where try stored(snapshot.persistentIdentifier) == nil {
            let id = snapshot.persistentIdentifier
            throw DataStoreError(
                .danglingReference, "The updated object \(id) is not in the store (deleted, or never saved); insert it instead.",
                entityName: id.entityName, identifier: id)
        }
    }

    func checkPermanent(_ id: PersistentIdentifier) throws {
        guard let store = id.storeIdentifier else {
            throw DataStoreError(
                .temporaryIdentifierInUpdate, "An updated or deleted object has the temporary identifier \(id); insert it first.",
                entityName: id.entityName, identifier: id)
        }
        guard store == mapper.storeIdentifier else {
            throw DataStoreError(
                .foreignIdentifier, "\(id) was made by the store \(store), not by \(mapper.storeIdentifier); save it through its own store.",
                entityName: id.entityName, identifier: id)
        }
        _ = try schema.requireEntity(named: id.entityName)
        guard RecordMapper.primaryKey(of: id) != nil else {
            throw DataStoreError(
                .invalidRequest, "\(id) has a \(id.primaryKey) primary key; this store makes UUID primary keys only.",
                entityName: id.entityName, identifier: id)
        }
    }

    /// A new object's values: its defaults, null attributes, no targets.
    func emptyState(_ id: PersistentIdentifier) -> ObjectState {
        if let values = emptyValuesByEntity[id.entityName] { return ObjectState(id, table: values.table, slots: values.slots) }
        var state = ObjectState(id, table: layout.slotTable(of: id.entityName))
        for property in schema.allProperties(of: id.entityName) {
            switch property {
            case .attribute(let a): state[a.name] = a.defaultValue ?? .null
            case .relationship(let r): state[r.name] = r.isToMany ? .toMany([]) : .toOne(nil)
            }
        }
        emptyValuesByEntity[id.entityName] = state.values
        return state
    }

    /// Permanent identifiers for the inserts: a new UUID, or the identifier of the stored object
    /// the insert collides with on a uniqueness rule (an upsert), as the request leaves it:
    /// - an object in `excluded` (the request deletes it) is no match: the insert is new;
    /// - a value the request's update moves away is free: the insert is new;
    /// - a value an object the request updates keeps, or moves to it, is `conflictingChanges`
    ///   (two statements about one object);
    /// - two inserts sharing a unique value are `uniqueness`, naming both;
    /// - a stored object of another entity is `uniqueness` (an upsert cannot change the entity),
    ///   unless the save deletes it (by a cascade too: refused by ``plan(_:)`` once that is known);
    /// - a match that another statement moves off the value (a to-many or one-to-one stated from
    ///   the other side changing its to-one of the rule) is excluded by ``plan(_:)``: the insert is new.
    func assignIdentifiers(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>, excluding excluded: Set<PersistentIdentifier>) throws {
        let gone = excluded.union(request.deleted.map(\.persistentIdentifier))
        let updatedIDs = Set(request.updated.map(\.persistentIdentifier))
        // The unique values the updated objects hold once the request is applied.
        var heldByUpdate: [[UInt8]: PersistentIdentifier] = [:]
        for snapshot in request.updated {
            let id = snapshot.persistentIdentifier
            guard var merged = try stored(id) else { continue }
            for (name, value) in snapshot.values { merged[name] = value }
            for (key, _) in mapper.uniqueKeys(of: merged) { heldByUpdate[key] = id }
        }
        var claimed: [[UInt8]: PersistentIdentifier] = [:]
        for snapshot in request.inserted {
            let temporary = snapshot.persistentIdentifier
            // A new object's values are its stated ones over its entity's defaults (read in
            // place: no merged copy per insert).
            var keys: [[UInt8]] = []
            var target: (id: PersistentIdentifier, constraint: [String])?
            for constraint in layout.uniquenessConstraints(of: temporary.entityName) {
                let values = constraint.properties.map { value($0, of: snapshot) }
                if values.contains(where: { $0.isNull || $0.referencedIdentifiers.contains(where: \.isTemporary) }) { continue }
                let key = RecordKeys.unique(entity: constraint.declaredBy, constraint: RecordKeys.listName(constraint.properties),
                                            values: OrderedValueEncoding.encoded(values))
                if let earlier = claimed[key] {
                    throw uniquenessError(
                        temporary, earlier, constraint.properties,
                        "is inserted in the same save as \(earlier) with the same unique \(constraint.properties.joined(separator: ", ")); insert one object, or change one of the values")
                }
                if let holder = heldByUpdate[key] {
                    throw DataStoreError(
                        .conflictingChanges,
                        "The inserted \(temporary.entityName) \(temporary) has the unique \(constraint.properties.joined(separator: ", ")) that \(holder), which the same save updates, holds: two statements about one object. State the changes in the update, or move the value away from \(holder).",
                        entityName: temporary.entityName, propertyName: constraint.properties.count == 1 ? constraint.properties[0] : nil,
                        identifier: temporary, constraint: constraint.properties, relatedIdentifiers: [holder])
                }
                keys.append(key)
                if target != nil { continue }
                guard let owner = try uniqueOwner(key), !gone.contains(owner), !updatedIDs.contains(owner) else { continue }
                target = (owner, constraint.properties)
            }
            if let t = target, t.id.entityName != temporary.entityName {
                // Refused by ``plan(_:)`` unless a cascade of the save deletes the holder.
                entityMismatches.append((temporary, t.id, t.constraint))
                target = nil
            }
            let permanent: PersistentIdentifier
            if let target {
                permanent = target.id
                upserted.insert(permanent)
                upsertConstraints[permanent, default: []].formUnion(target.constraint)
            } else {
                permanent = try mapper.identifier(entity: temporary.entityName, primaryKey: UUID.makeTimeOrdered())
                // A fresh primary key names no stored object: nothing to read.
                noteNotStored(permanent)
                inserted.insert(permanent)
                temporaries[permanent] = temporary
            }
            remapped[temporary] = permanent
            for key in keys { claimed[key] = temporary }
        }
    }

    /// The object a stored uniqueness entry names, when it exists.
    func uniqueOwner(_ key: [UInt8]) throws -> PersistentIdentifier? {
        guard let bytes = try mapper.engine.value(forKey: key) else { return nil }
        guard bytes.count > 16, let entity = String(validating: bytes[16...], as: UTF8.self) else {
            throw RecordDecodingError("a malformed uniqueness entry", key: key)
        }
        let owner = try mapper.identifier(entity: entity, primaryKey: RecordKeys.uuid(from: Array(bytes[..<16])))
        return try stored(owner) != nil ? owner : nil
    }

    /// Each insert and update, remapped and checked, merged over what the object holds; to-many
    /// statements are kept as intents, applied by ``applyRelationshipChanges()``.
    ///
    /// An upserting insert merges by the upsert rule: its attributes win; a to-one it leaves
    /// nil keeps the stored target; a to-many only gains links (the union of both).
    ///
    /// A new object's state is what the request states, in one pass over its values; the
    /// properties it leaves out are not filled in: they read their defaults in place
    /// (``value(_:of:)``, the entity's encoder).
    func applyStatements(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws {
        let upserts = Set(request.inserted.compactMap { remapped[$0.persistentIdentifier] }).intersection(upserted)
        for snapshot in request.inserted + request.updated {
            let id = remapped[snapshot.persistentIdentifier] ?? snapshot.persistentIdentifier
            if snapshot.persistentIdentifier.isTemporary && inserted.contains(id) {
                try applyInsert(snapshot, as: id)
                continue
            }
            let isUpsert = snapshot.persistentIdentifier.isTemporary && upserts.contains(id)
            // An update's statement is the request's snapshot, its references to new objects
            // read through ``remapped``; an upsert's is a copy without the to-ones it leaves nil.
            var statement = snapshot
            var remapping = remapped
            if isUpsert {
                statement = snapshot.copy(persistentIdentifier: id, remappedIdentifiers: remapped)
                remapping = [:]
                for (name, value) in statement.values where value.referencedIdentifiers.isEmpty {
                    if case .relationship(let r)? = schema.property(named: name, in: id.entityName), !r.isToMany { statement.values[name] = nil }
                }
            }
            try validate(statement.values, of: id, reportedAs: snapshot.persistentIdentifier, remapping: remapping)
            statements.append((id, statement))
            stated[id, default: []].formUnion(statement.values.keys)
            var merged = try current(id) ?? emptyState(id)
            for (name, said) in statement.values {
                let value = remapping.isEmpty ? said : said.remapping(remapping)
                guard case .relationship(let r)? = schema.property(named: name, in: id.entityName) else {
                    let attribute = schema.attribute(named: name, in: id.entityName)
                    merged.values[name] = value.isNull && attribute?.isOptional == false ? attribute?.defaultValue ?? value : value
                    continue
                }
                if r.isToMany {
                    intents.append((id, r, value.referencedIdentifiers, isUpsert))
                } else {
                    merged.values[name] = .toOne(value.referencedIdentifiers.first)
                }
            }
            state[id] = merged
        }
    }

    /// A new object's statement (`snapshot`, inserted as `id`): checked with its references
    /// remapped, its state made in one pass over the stated values (a non-optional null takes
    /// its default, a to-one is a `.toOne`, a stated to-many starts empty and is an intent).
    /// The request's snapshot is kept as the statement, its temporary references read through
    /// ``remapped``.
    private func applyInsert(_ snapshot: DefaultSnapshot, as id: PersistentIdentifier) throws {
        let remapped = remapped
        let reportedID = snapshot.persistentIdentifier
        try validate(snapshot.values, of: id, reportedAs: reportedID, remapping: remapped)
        statements.append((id, snapshot))
        stated[id] = Set(snapshot.values.keys)
        var state = ObjectState(id, table: layout.slotTable(of: id.entityName))
        if !needsRewriting(snapshot, as: id) {
            // Every stated value is stored as it is: placed in its slot unchanged.
            for (name, value) in snapshot.values { state[name] = value }
            self.state[id] = state
            return
        }
        for (name, value) in snapshot.values {
            switch schema.property(named: name, in: id.entityName) {
            case .relationship(let r)? where r.isToMany:
                intents.append((id, r, value.referencedIdentifiers.map { remapped[$0] ?? $0 }, false))
                state[name] = .toMany([])
            case .relationship?:
                state[name] = .toOne(value.referencedIdentifiers.first.map { remapped[$0] ?? $0 })
            case .attribute(let a)?:
                state[name] = value.isNull && !a.isOptional ? a.defaultValue ?? value : value.remapping(remapped)
            case nil:
                state[name] = value.remapping(remapped)
            }
        }
        self.state[id] = state
    }

    /// Whether a new object's stated values (already validated) differ from its state: a
    /// to-many (an intent; the state's array starts empty), a to-one naming another new object,
    /// a null (a to-one's is `.toOne(nil)`, a non-optional attribute's its default), an array
    /// (which may hold identifiers). Read from the values' cases: the schema is asked only
    /// about nulls.
    private func needsRewriting(_ snapshot: DefaultSnapshot, as id: PersistentIdentifier) -> Bool {
        for (name, value) in snapshot.values {
            switch value {
            case .toMany, .array: return true
            case .toOne(let target?): if remapped[target] != nil { return true }
            case .null:
                guard case .attribute(let a)? = schema.property(named: name, in: id.entityName) else { return true }
                if !a.isOptional && a.defaultValue != nil { return true }
            default: continue
            }
        }
        return false
    }

    /// The value of `name` in `state`, a state of the save: what it holds, else (a new
    /// object's property the request left out) the property's default — an attribute's
    /// default value or null, no target.
    func value(_ name: String, of state: ObjectState) -> PropertyValue {
        state[name] ?? defaultValue(name, in: state.persistentIdentifier.entityName)
    }

    /// The value of `name` in a new object's statement `snapshot`, read as a state's is.
    func value(_ name: String, of snapshot: DefaultSnapshot) -> PropertyValue {
        snapshot.values[name] ?? defaultValue(name, in: snapshot.persistentIdentifier.entityName)
    }

    /// The value a new object's property `name` the request left out reads.
    private func defaultValue(_ name: String, in entity: String) -> PropertyValue {
        schema.attribute(named: name, in: entity)?.defaultValue ?? .null
    }

    /// The state of `id` whole, as the object is saved, as a snapshot by name (an output:
    /// for observers): see ``wholeState(_:)``.
    func whole(_ id: PersistentIdentifier) throws -> DefaultSnapshot? {
        try wholeState(id).map(snapshot(of:))
    }

    /// The state of `id` whole, as the object is saved: its values, its defaults for the
    /// properties a new object's state leaves out, and every to-many array.
    func wholeState(_ id: PersistentIdentifier) throws -> ObjectState? {
        guard var snapshot = state[id] else { return nil }
        let properties = schema.allProperties(of: id.entityName)
        // A state names properties of its entity only: as many as it has, it holds them all.
        if snapshot.values.count == properties.count { return snapshot }
        for property in properties where snapshot.values[property.name] == nil {
            switch property {
            case .attribute(let a): snapshot.values[a.name] = a.defaultValue ?? .null
            case .relationship(let r):
                snapshot.values[r.name] = r.isToMany ? .toMany(try targets(id, r).sorted(by: RecordMapper.canonicalOrder)) : .toOne(nil)
            }
        }
        return snapshot
    }

    /// The statement's values against the schema: known properties, values of the declared
    /// types, non-optional attributes not null, references to objects that exist.
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
                        .typeMismatch, "\(id.entityName).\(name) of \(reportedID) holds \(a.valueType) values, not a \(value.caseName); convert the value.",
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
                        .typeMismatch, "\(id.entityName).\(name) of \(reportedID) is a \(r.isToMany ? "to-many" : "to-one") relationship, given a \(value.caseName); give it \(r.isToMany ? ".toMany([…])" : ".toOne(…)").",
                        entityName: id.entityName, propertyName: name, identifier: reportedID)
                }
                for target in value.referencedIdentifiers { try checkReference(target, from: reportedID, through: r) }
            }
        }
    }

    private func checkReference(_ target: PersistentIdentifier, from id: PersistentIdentifier, through r: Schema.Relationship) throws {
        func fail(_ code: DataStoreError.Code, _ message: String) -> DataStoreError {
            DataStoreError(code, message, entityName: id.entityName, propertyName: r.name, identifier: id, relatedIdentifiers: [target])
        }
        if target.isTemporary {
            throw fail(.danglingReference, "\(id.entityName).\(r.name) of \(id) refers to \(target), which is neither stored nor inserted in this save; insert it in the same save.")
        }
        if target.storeIdentifier != mapper.storeIdentifier {
            throw fail(.foreignIdentifier, "\(id.entityName).\(r.name) of \(id) refers to \(target) of another store; relationships stay within one store.")
        }
        guard schema.isEntity(target.entityName, kindOf: r.destination) else {
            throw fail(.typeMismatch, "\(id.entityName).\(r.name) of \(id) holds \(r.destination) objects, not \(target.entityName) \(target); refer to a \(r.destination).")
        }
        guard RecordMapper.primaryKey(of: target) != nil, try exists(target) || upserted.contains(target) else {
            throw fail(.danglingReference, "\(id.entityName).\(r.name) of \(id) refers to \(target), which the store does not hold; it was deleted or never saved.")
        }
    }
}
