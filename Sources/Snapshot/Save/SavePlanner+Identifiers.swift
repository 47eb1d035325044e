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
            throw conflict(
                snapshot.persistentIdentifier, "inserted twice (two inserted snapshots carry it)",
                "give each new object a temporary identifier of its own, or insert one snapshot")
        }
        var updatedIDs: Set<PersistentIdentifier> = []
        for snapshot in request.updated where !updatedIDs.insert(snapshot.persistentIdentifier).inserted {
            throw conflict(
                snapshot.persistentIdentifier, "updated twice (two updated snapshots carry it)",
                "merge the two into one updated snapshot")
        }
        let deletedIDs = Set(request.deleted.map(\.persistentIdentifier))
        for snapshot in request.updated where deletedIDs.contains(snapshot.persistentIdentifier) {
            throw conflict(
                snapshot.persistentIdentifier, "both updated and deleted",
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
                    .invalidRequest, "\(entity.name) is abstract; insert an object of one of its sub-entities.", entityName: entity.name,
                    identifier: id)
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
            let unique = layout.encoder(of: temporary.entityName).uniqueKeys(ofStatement: snapshot) { value in
                !value.isNull && !value.referencedIdentifiers.contains(where: \.isTemporary)
            }
            var shared: [(other: PersistentIdentifier, constraint: [String])] = []
            for (key, properties) in unique {
                if let earlier = claimed[key] {
                    shared.append((earlier, properties))
                    continue
                }
                if let holder = heldByUpdate[key] {
                    throw DataStoreError(
                        .conflictingChanges,
                        "The inserted \(temporary.entityName) \(temporary) has the unique \(properties.joined(separator: ", ")) that \(holder), which the same save updates, holds: two statements about one object. State the changes in the update, or move the value away from \(holder).",
                        entityName: temporary.entityName, propertyName: properties.count == 1 ? properties[0] : nil,
                        identifier: temporary, constraint: properties, relatedIdentifiers: [holder])
                }
                keys.append(key)
                if target != nil { continue }
                guard let owner = try uniqueOwner(key), !gone.contains(owner), !updatedIDs.contains(owner) else { continue }
                try requireSameUniqueValues(key, properties, of: temporary, { snapshot.values[$0] }, heldBy: owner)
                target = (owner, properties)
            }
            if !shared.isEmpty {
                throw uniquenessError(
                    temporary, shared,
                    "is inserted in the same save as "
                        + shared.map { "\($0.other) with the same unique \($0.constraint.joined(separator: ", "))" }.joined(separator: " and ")
                        + "; insert one object, or change the values")
            }
            if let t = target, t.id.entityName != temporary.entityName {
                // Refused by ``plan(_:)`` unless a cascade of the save deletes the holder.
                attempt.entityMismatches.append((temporary, t.id, t.constraint))
                target = nil
            }
            let permanent: PersistentIdentifier
            if let target {
                permanent = target.id
                attempt.upserted.insert(permanent)
                attempt.upsertConstraints[permanent, default: []].formUnion(target.constraint)
            } else {
                permanent = try mapper.identifier(entity: temporary.entityName, primaryKey: UUID.makeTimeOrdered())
                // A fresh primary key names no stored object: nothing to read.
                noteNotStored(permanent)
                attempt.inserted.insert(permanent)
                attempt.temporaries[permanent] = temporary
            }
            attempt.remapped[temporary] = permanent
            for key in keys { claimed[key] = temporary }
        }
    }

    /// Refuses a digest collision: `key`, a uniqueness entry in its long form (the SHA-256
    /// digest of the values), names the stored `owner`, whose values of the rule `properties`
    /// differ from the ones `values` reads for `id` (nil: the rule's fallback). A key that holds
    /// the values needs no check, and costs none.
    ///
    /// - Throws: ``DataStoreError/Code/valueTooLongForKey`` naming `id`, the rule and `owner`.
    func requireSameUniqueValues(
        _ key: [UInt8], _ properties: [String], of id: PersistentIdentifier, _ values: (String) -> PropertyValue?,
        heldBy owner: PersistentIdentifier
    ) throws {
        let encoder = layout.encoder(of: id.entityName)
        guard let rule = encoder.uniqueness.first(where: { $0.properties == properties }),
            RecordKeys.isHashedUnique(key, prefixLength: rule.prefix.count), let held = try stored(owner)
        else { return }
        let ours = OrderedValueEncoding.encoded(properties.enumerated().map { values($1) ?? rule.fallbacks[$0] })
        let theirs = OrderedValueEncoding.encoded(properties.map { held[$0] ?? .null })
        guard ours != theirs else { return }
        throw DataStoreError(
            .valueTooLongForKey,
            "The unique \(properties.joined(separator: ", ")) of \(reported(id)) is long enough that its entry holds the SHA-256 digest of the value, and the stored \(owner)'s different value has the same digest; the two cannot both be kept unique. Change the value; nothing was saved.",
            entityName: id.entityName, propertyName: properties.count == 1 ? properties[0] : nil, identifier: reported(id),
            constraint: properties, relatedIdentifiers: [owner])
    }

    /// The object a stored uniqueness entry names, when it exists.
    func uniqueOwner(_ key: [UInt8]) throws -> PersistentIdentifier? {
        guard let bytes = try mapper.records.value(forKey: key) else { return nil }
        guard bytes.count > 16, let entity = String(validating: bytes[16...], as: UTF8.self) else {
            throw RecordDecodingError("a malformed uniqueness entry", key: key)
        }
        let owner = try mapper.identifier(entity: entity, primaryKey: RecordKeys.uuid(from: Array(bytes[..<16])))
        return try stored(owner) != nil ? owner : nil
    }
}
