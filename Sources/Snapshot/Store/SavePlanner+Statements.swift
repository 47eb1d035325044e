import Foundation

extension SavePlanner {
    /// Identifiers first: inserts temporary and of concrete, declared entities; updates and
    /// deletes permanent, of this store, and (updates) of stored objects.
    func checkIdentifiers(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws {
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
    func emptySnapshot(_ id: PersistentIdentifier) -> DefaultSnapshot {
        var values: [String: PropertyValue] = [:]
        for property in schema.allProperties(of: id.entityName) {
            switch property {
            case .attribute(let a): values[a.name] = a.defaultValue ?? .null
            case .relationship(let r): values[r.name] = r.isToMany ? .toMany([]) : .toOne(nil)
            }
        }
        return DefaultSnapshot(persistentIdentifier: id, values: values)
    }

    /// Permanent identifiers for the inserts: a new UUID, or the identifier of the stored (or
    /// earlier inserted) object the insert collides with on a uniqueness rule (an upsert).
    func assignIdentifiers(_ inserts: [DefaultSnapshot]) throws {
        var claimed: [[UInt8]: PersistentIdentifier] = [:]
        for snapshot in inserts {
            let temporary = snapshot.persistentIdentifier
            var merged = emptySnapshot(temporary)
            for (name, value) in snapshot.values { merged.values[name] = value }
            var keys: [[UInt8]] = []
            var target: PersistentIdentifier?
            for constraint in layout.uniquenessConstraints(of: temporary.entityName) {
                let values = constraint.properties.map { merged.values[$0] ?? .null }
                if values.contains(where: { $0.isNull || $0.referencedIdentifiers.contains(where: \.isTemporary) }) { continue }
                let key = RecordKeys.unique(entity: constraint.declaredBy, constraint: RecordKeys.listName(constraint.properties),
                                            values: OrderedValueEncoding.encoded(values))
                keys.append(key)
                if target != nil { continue }
                if let earlier = claimed[key] {
                    target = earlier
                } else if let owner = try uniqueOwner(key) {
                    target = owner
                }
            }
            let permanent: PersistentIdentifier
            if let target, target.entityName != temporary.entityName {
                throw DataStoreError(
                    .uniqueness,
                    "The inserted \(temporary.entityName) shares its unique values with \(target), a \(target.entityName); an upsert needs the same entity, so change the values or update that object.",
                    entityName: temporary.entityName, identifier: temporary)
            }
            if let target {
                permanent = target
                if !inserted.contains(target) { upserted.insert(target) }
            } else {
                permanent = try mapper.identifier(entity: temporary.entityName, primaryKey: UUID.makeRandom())
                inserted.insert(permanent)
            }
            remapped[temporary] = permanent
            for key in keys where claimed[key] == nil { claimed[key] = permanent }
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
    func applyStatements(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws {
        let deletedInRequest = Set(request.deleted.map(\.persistentIdentifier))
        for snapshot in request.inserted + request.updated where !deletedInRequest.contains(snapshot.persistentIdentifier) {
            let id = remapped[snapshot.persistentIdentifier] ?? snapshot.persistentIdentifier
            let statement = snapshot.copy(persistentIdentifier: id, remappedIdentifiers: remapped)
            try validate(statement)
            statements.append((id, statement))
            stated[id, default: []].formUnion(statement.values.keys)
            let base = try current(id) ?? emptySnapshot(id)
            var merged = base
            for (name, value) in statement.values {
                guard case .relationship(let r)? = schema.property(named: name, in: id.entityName) else {
                    let attribute = schema.attribute(named: name, in: id.entityName)
                    merged.values[name] = value.isNull && attribute?.isOptional == false ? attribute?.defaultValue ?? value : value
                    continue
                }
                if r.isToMany {
                    intents.append((id, r, value.referencedIdentifiers))
                } else {
                    merged.values[name] = .toOne(value.referencedIdentifiers.first)
                }
            }
            state[id] = merged
        }
    }

    /// The statement's values against the schema: known properties, values of the declared
    /// types, non-optional attributes not null, references to objects that exist.
    private func validate(_ statement: DefaultSnapshot) throws {
        let id = statement.persistentIdentifier
        for (name, value) in statement.values.sorted(by: { $0.key < $1.key }) {
            guard let property = schema.property(named: name, in: id.entityName) else {
                throw DataStoreError(
                    .unknownProperty, "\(id.entityName) neither declares nor inherits \(name); use a property of the schema.",
                    entityName: id.entityName, propertyName: name, identifier: id)
            }
            switch property {
            case .attribute(let a):
                if value.isNull {
                    if !a.isOptional && a.defaultValue == nil {
                        throw DataStoreError(
                            .missingValue, "\(id.entityName).\(name) is not optional; give it a value.", entityName: id.entityName, propertyName: name, identifier: id)
                    }
                } else if !a.valueType.accepts(value) {
                    throw DataStoreError(
                        .typeMismatch, "\(id.entityName).\(name) holds \(a.valueType) values, not a \(value.caseName); convert the value.",
                        entityName: id.entityName, propertyName: name, identifier: id)
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
                        .typeMismatch, "\(id.entityName).\(name) is a \(r.isToMany ? "to-many" : "to-one") relationship, given a \(value.caseName).",
                        entityName: id.entityName, propertyName: name, identifier: id)
                }
                for target in value.referencedIdentifiers { try checkReference(target, from: id, through: r) }
            }
        }
    }

    private func checkReference(_ target: PersistentIdentifier, from id: PersistentIdentifier, through r: Schema.Relationship) throws {
        func fail(_ code: DataStoreError.Code, _ message: String) -> DataStoreError {
            DataStoreError(code, message, entityName: id.entityName, propertyName: r.name, identifier: id)
        }
        if target.isTemporary {
            throw fail(.danglingReference, "\(id.entityName).\(r.name) refers to \(target), which is neither stored nor inserted in this save; insert it in the same save.")
        }
        if target.storeIdentifier != mapper.storeIdentifier {
            throw fail(.foreignIdentifier, "\(id.entityName).\(r.name) refers to \(target) of another store; relationships stay within one store.")
        }
        guard schema.isEntity(target.entityName, kindOf: r.destination) else {
            throw fail(.typeMismatch, "\(id.entityName).\(r.name) holds \(r.destination) objects, not \(target.entityName).")
        }
        guard RecordMapper.primaryKey(of: target) != nil, try exists(target) || upserted.contains(target) else {
            throw fail(.danglingReference, "\(id.entityName).\(r.name) refers to \(target), which the store does not hold; it was deleted or never saved.")
        }
    }
}
