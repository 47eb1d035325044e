import Foundation
import Snapshot
import SQLiteSupport

/// One save of a ``CoreDataSQLiteStore``: the checks made before the transaction begins, then
/// the statements run inside it. Used with the store's lock held.
///
/// Relationships: a to-one is its foreign-key column. A to-many whose inverse is a to-one is
/// the targets' foreign keys: a change to it moves the targets that the save does not also
/// state themselves (a target that states its to-one wins). A many-to-many is its join table:
/// the additions and removals of both sides, each measured against the stored state before the
/// save, are applied. These are ``WALDataStore``'s rules.
final class SaveTransaction {
    unowned let store: CoreDataSQLiteStore
    var layout: CoreDataLayout { store.layout }
    /// Every temporary identifier of the save → its permanent identifier.
    private(set) var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
    private var maxKeys: [String: Int64] = [:]
    private var firstKeys: [String: Int64] = [:]
    private var deleted: Set<PersistentIdentifier> = []
    /// The objects the request updates: a cascade that reaches one is refused.
    private var updatedIDs: Set<PersistentIdentifier> = []
    /// Deleted objects and the targets their deny relationships held when they were deleted.
    private var denials: [(owner: PersistentIdentifier, relationship: String, targets: [PersistentIdentifier])] = []
    /// Rows deleted by the save, as "ZTABLE#Z_PK".
    private var deletedRows: Set<String> = []
    /// Objects whose bounded to-many relationships the save may have changed.
    private var countOwners: Set<Owner> = []

    /// An object by entity and `Z_PK`.
    private struct Owner: Hashable, Comparable {
        var entity: String
        var key: Int64
        static func < (a: Owner, b: Owner) -> Bool { (a.entity, a.key) < (b.entity, b.key) }
    }

    /// Stored objects no insert upserts into: those a cascade of an earlier attempt at the same
    /// save deleted.
    let excluded: Set<PersistentIdentifier>

    /// Thrown (inside the transaction, which rolls back) when a cascade of the save deleted an
    /// object an insert upserted into: the save is planned again with those excluded.
    struct UpsertTargetsDeleted: Error {
        var targets: Set<PersistentIdentifier>
    }

    init(store: CoreDataSQLiteStore, excluding excluded: Set<PersistentIdentifier> = []) {
        self.store = store
        self.excluded = excluded
    }

    // MARK: Checks before the transaction

    /// Refuses a request with unknown entities or properties, values of the wrong type,
    /// missing values, temporary identifiers among the updated and deleted, and identifiers of
    /// other stores.
    func check(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws {
        try checkStatedOnce(request)
        let temporaries = Set(request.inserted.map(\.persistentIdentifier))
        for snapshot in request.inserted {
            guard snapshot.persistentIdentifier.isTemporary else {
                throw DataStoreError(
                    .invalidRequest, "An inserted object has the permanent identifier \(snapshot.persistentIdentifier); insert it under a temporary one.",
                    entityName: snapshot.persistentIdentifier.entityName, identifier: snapshot.persistentIdentifier)
            }
            try checkValues(snapshot, insert: true, temporaries: temporaries)
        }
        for snapshot in request.updated {
            _ = try key(of: snapshot.persistentIdentifier)
            try checkValues(snapshot, insert: false, temporaries: temporaries)
        }
        for snapshot in request.deleted { _ = try key(of: snapshot.persistentIdentifier) }
        try checkInsertsClaimDistinctValues(request)
    }

    /// Two inserts sharing a unique value are refused (`uniqueness`, naming both) before the
    /// transaction begins: the refusal reads nothing, and so writes nothing (not even the
    /// WAL index a first write transaction sets up).
    private func checkInsertsClaimDistinctValues(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws {
        var claimed: [String: PersistentIdentifier] = [:]
        for snapshot in request.inserted {
            let temporary = snapshot.persistentIdentifier
            let table = try layout.table(temporary.entityName)
            var claims: [String] = []
            for properties in table.uniqueness {
                let values = properties.map { snapshot.values[$0] ?? table.columnsByAttribute[$0]?.attribute.defaultValue ?? .null }
                if values.contains(where: { $0.isNull || !$0.referencedIdentifiers.isEmpty }) { continue }
                let claim = "\(table.name)|\(properties)|\(values.map(CanonicalCollation.claimForm))"
                if let earlier = claimed[claim] {
                    throw DataStoreError(
                        .uniqueness, "Two inserted \(table.entity.name) objects have the same \(properties.joined(separator: ", ")); change one of them, or insert one.",
                        entityName: table.entity.name, propertyName: properties.count == 1 ? properties[0] : nil, identifier: temporary,
                        constraint: properties, relatedIdentifiers: [earlier])
                }
                claims.append(claim)
            }
            for claim in claims { claimed[claim] = temporary }
        }
    }

    /// One object stated twice is refused (`conflictingChanges`), before anything else: the
    /// same identifier twice among the inserted or the updated, or among both the updated and
    /// the deleted. The same identifier twice among the deleted is one delete.
    private func checkStatedOnce(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws {
        func conflict(_ id: PersistentIdentifier, _ lists: String, _ advice: String) -> DataStoreError {
            DataStoreError(.conflictingChanges, "\(id) is \(lists) in one save; \(advice).", entityName: id.entityName, identifier: id)
        }
        var insertedIDs: Set<PersistentIdentifier> = []
        for snapshot in request.inserted where !insertedIDs.insert(snapshot.persistentIdentifier).inserted {
            throw conflict(snapshot.persistentIdentifier, "inserted twice", "give each new object a temporary identifier of its own")
        }
        var updatedIDs: Set<PersistentIdentifier> = []
        for snapshot in request.updated where !updatedIDs.insert(snapshot.persistentIdentifier).inserted {
            throw conflict(snapshot.persistentIdentifier, "updated twice", "merge the two into one updated snapshot")
        }
        let deletedIDs = Set(request.deleted.map(\.persistentIdentifier))
        for snapshot in request.updated where deletedIDs.contains(snapshot.persistentIdentifier) {
            throw conflict(snapshot.persistentIdentifier, "both updated and deleted", "drop the update to delete it, or drop the delete to keep it")
        }
        self.updatedIDs = updatedIDs
    }

    /// `Z_PK` of a permanent identifier of this store.
    func key(of id: PersistentIdentifier) throws -> Int64 {
        guard let storeIdentifier = id.storeIdentifier else {
            throw DataStoreError(
                .temporaryIdentifierInUpdate, "An updated or deleted object has the temporary identifier \(id); insert it first.",
                entityName: id.entityName, identifier: id)
        }
        guard storeIdentifier == store.identifier, case .integer(let key) = id.primaryKey else {
            throw DataStoreError(
                .foreignIdentifier, "\(id) was made by the store \(storeIdentifier), not by \(store.identifier); save it through its own store.",
                entityName: id.entityName, identifier: id)
        }
        _ = try layout.table(id.entityName)
        return key
    }

    private func checkValues(_ snapshot: DefaultSnapshot, insert: Bool, temporaries: Set<PersistentIdentifier>) throws {
        let id = snapshot.persistentIdentifier
        let table = try layout.table(id.entityName)
        for (name, value) in snapshot.values {
            if let column = table.columnsByAttribute[name] {
                if value.isNull {
                    if !column.attribute.isOptional {
                        throw DataStoreError(.missingValue, "\(id.entityName).\(name) may not be null; give it a value.", entityName: id.entityName, propertyName: name, identifier: id)
                    }
                } else if !column.attribute.valueType.accepts(value) {
                    throw DataStoreError(
                        .typeMismatch, "\(id.entityName).\(name) holds \(column.attribute.valueType) values, not a \(value.caseName); convert the value.",
                        entityName: id.entityName, propertyName: name, identifier: id)
                }
            } else if let link = table.linksByName[name] {
                switch (link.relationship.isToMany, value) {
                case (false, .toOne), (false, .null), (true, .toMany), (true, .null): break
                default:
                    throw DataStoreError(
                        .typeMismatch, "\(id.entityName).\(name) is a \(link.relationship.isToMany ? "to-many" : "to-one") relationship, given a \(value.caseName).",
                        entityName: id.entityName, propertyName: name, identifier: id)
                }
                for target in value.referencedIdentifiers {
                    if target.isTemporary {
                        guard temporaries.contains(target) else {
                            throw DataStoreError(
                                .danglingReference, "\(id.entityName).\(name) refers to \(target), which is neither stored nor inserted in this save.",
                                entityName: id.entityName, propertyName: name, identifier: id)
                        }
                    } else if target.storeIdentifier != store.identifier {
                        throw DataStoreError(
                            .foreignIdentifier, "\(id.entityName).\(name) refers to \(target), an object of another store.",
                            entityName: id.entityName, propertyName: name, identifier: id)
                    }
                    guard store.schema.isEntity(target.entityName, kindOf: link.relationship.destination) else {
                        throw DataStoreError(
                            .typeMismatch, "\(id.entityName).\(name) points at \(link.relationship.destination) objects, not at \(target.entityName).",
                            entityName: id.entityName, propertyName: name, identifier: id)
                    }
                }
            } else {
                throw DataStoreError(
                    .unknownProperty, "\(id.entityName) has no property \(name); use a property of the schema.",
                    entityName: id.entityName, propertyName: name, identifier: id)
            }
        }
        if insert {
            for column in table.columns where snapshot.values[column.attribute.name] == nil || snapshot.values[column.attribute.name]!.isNull {
                if !column.attribute.isOptional && column.attribute.defaultValue == nil {
                    throw DataStoreError(
                        .missingValue, "The inserted \(id.entityName) has no \(column.attribute.name), which may not be null; give it a value.",
                        entityName: id.entityName, propertyName: column.attribute.name, identifier: id)
                }
            }
        }
    }

    // MARK: Inside the transaction

    /// One object to write: its permanent identity, whether its row exists, and the values
    /// the request states.
    private struct Write {
        var entity: String
        var key: Int64
        var isNew: Bool
        var values: [String: PropertyValue]
    }

    /// A link change of a join table.
    private struct JoinChange: Hashable {
        var table: String
        var own: String
        var other: String
        var ownKey: Int64
        var otherKey: Int64
    }

    func apply(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>, log: inout CoreDataSQLiteStore.FileLog) throws {
        // Updated objects must be stored: checked before anything else is looked up, so that a
        // request refused for several reasons is refused for this one, as WALDataStore's
        // checks come before its plan.
        for snapshot in request.updated where !(try exists(snapshot.persistentIdentifier)) {
            let id = snapshot.persistentIdentifier
            throw DataStoreError(.danglingReference, "The updated \(id) is not in the store; it was deleted. Insert it again instead.", entityName: id.entityName, identifier: id)
        }
        // No insert or update may refer to an object the same save deletes.
        let deletedIDs = Set(request.deleted.map(\.persistentIdentifier))
        for snapshot in request.inserted + request.updated {
            for (name, value) in snapshot.values.sorted(by: { $0.key < $1.key }) {
                for target in value.referencedIdentifiers where deletedIDs.contains(target) {
                    let id = snapshot.persistentIdentifier
                    throw DataStoreError(
                        .danglingReference, "\(id.entityName).\(name) of \(id) refers to \(target), which the same save deletes; drop the reference, or keep the object.",
                        entityName: id.entityName, propertyName: name, identifier: id, relatedIdentifiers: [target])
                }
            }
        }
        let updatedByID = Dictionary(request.updated.map { ($0.persistentIdentifier, $0) }, uniquingKeysWith: { _, last in last })
        // Permanent identifiers: an upsert's target, or a new key from Z_PRIMARYKEY. Inserts are
        // matched against the stored objects as the save leaves them: not one it deletes, nor
        // one whose update moves the value away.
        var claimed: [String: PersistentIdentifier] = [:]  // claim → the temporary identifier
        // The unique values the updated objects hold once the request is applied: an insert
        // with one of them is a second statement about that object.
        var heldByUpdate: [String: PersistentIdentifier] = [:]
        for snapshot in request.updated {
            let id = snapshot.persistentIdentifier
            let table = try layout.table(id.entityName)
            guard var merged = try store.objects(id.entityName, [try key(of: id)]).first else { continue }
            for (name, value) in snapshot.values { merged.values[name] = value }
            for properties in table.uniqueness {
                let values = properties.map { merged.values[$0] ?? .null }
                if values.contains(where: { $0.isNull || !$0.referencedIdentifiers.isEmpty }) { continue }
                heldByUpdate["\(table.name)|\(properties)|\(values.map(CanonicalCollation.claimForm))"] = id
            }
        }
        var existing: Set<PersistentIdentifier> = []
        for snapshot in request.inserted {
            let temporary = snapshot.persistentIdentifier
            let table = try layout.table(temporary.entityName)
            var target: PersistentIdentifier?
            var targetConstraint: [String] = []
            var claims: [String] = []
            for properties in table.uniqueness {
                let values = properties.map { snapshot.values[$0] ?? table.columnsByAttribute[$0]?.attribute.defaultValue ?? .null }
                if values.contains(where: { $0.isNull || !$0.referencedIdentifiers.isEmpty }) { continue }
                // Strings by their NFC form: canonically equivalent spellings are one value.
                let claim = "\(table.name)|\(properties)|\(values.map(CanonicalCollation.claimForm))"
                claims.append(claim)
                if let earlier = claimed[claim] {
                    throw DataStoreError(
                        .uniqueness, "Two inserted \(table.entity.name) objects have the same \(properties.joined(separator: ", ")); change one of them, or insert one.",
                        entityName: table.entity.name, propertyName: properties.count == 1 ? properties[0] : nil, identifier: temporary,
                        constraint: properties, relatedIdentifiers: [earlier])
                }
                if let holder = heldByUpdate[claim] {
                    throw DataStoreError(
                        .conflictingChanges,
                        "The inserted \(temporary.entityName) \(temporary) has the unique \(properties.joined(separator: ", ")) that \(holder), which the same save updates, holds: two statements about one object. State the changes in the update, or move the value away from \(holder).",
                        entityName: temporary.entityName, propertyName: properties.count == 1 ? properties[0] : nil,
                        identifier: temporary, constraint: properties, relatedIdentifiers: [holder])
                }
                if target != nil { continue }
                // Not an object the save deletes, nor one it updates (its update moves the
                // value away, or it would hold it, refused above): the insert is a new object.
                guard let stored = try storedOwner(table, properties, values), !deletedIDs.contains(stored), !excluded.contains(stored), updatedByID[stored] == nil else { continue }
                target = stored
                targetConstraint = properties
            }
            if let target {
                guard target.entityName == table.entity.name else {
                    // An upsert never changes an object's entity.
                    throw DataStoreError(
                        .uniqueness, "An inserted \(table.entity.name) has the same \(targetConstraint.joined(separator: ", ")) as the stored \(target), a \(target.entityName); change the value, or update that object instead.",
                        entityName: table.entity.name, propertyName: targetConstraint.count == 1 ? targetConstraint[0] : nil, identifier: temporary,
                        constraint: targetConstraint, relatedIdentifiers: [target])
                }
                existing.insert(target)
            }
            let permanent = try target ?? store.identifier(table.entity.name, try newKey(table))
            remapped[temporary] = permanent
            for claim in claims { claimed[claim] = temporary }
        }
        try bumpPrimaryKeys()

        // The objects to write, references remapped; later statements of one object merge
        // over earlier ones.
        var writes: [Write] = []
        var position: [String: Int] = [:]  // "ZTABLE#Z_PK" → index in writes
        func add(_ id: PersistentIdentifier, isNew: Bool, _ values: [String: PropertyValue]) throws {
            let key = try key(of: id)
            let place = "\(try layout.table(id.entityName).name)#\(key)"
            if let i = position[place] {
                for (name, value) in values { writes[i].values[name] = value }
                return
            }
            position[place] = writes.count
            writes.append(Write(entity: id.entityName, key: key, isNew: isNew, values: values))
        }
        for snapshot in request.inserted {
            let permanent = remapped[snapshot.persistentIdentifier]!
            let values = snapshot.copy(persistentIdentifier: permanent, remappedIdentifiers: remapped).values
            if existing.contains(permanent) {
                try add(permanent, isNew: false, try upserted(values, into: permanent))
            } else {
                try add(permanent, isNew: true, values)
            }
        }
        for snapshot in request.updated {
            try add(snapshot.persistentIdentifier, isNew: false, snapshot.copy(persistentIdentifier: snapshot.persistentIdentifier, remappedIdentifiers: remapped).values)
        }

        // Stored references must exist.
        var checked: Set<PersistentIdentifier> = Set(remapped.values)
        for write in writes {
            for value in write.values.values {
                for target in value.referencedIdentifiers where checked.insert(target).inserted {
                    guard try exists(target) else {
                        throw DataStoreError(
                            .danglingReference, "\(write.entity) refers to \(target), which the store does not hold; it was deleted or never saved.",
                            entityName: write.entity, identifier: target)
                    }
                }
            }
        }

        // Relationship changes, measured against the state before the save.
        var joinAdds: [JoinChange] = []
        var joinRemoves: [JoinChange] = []
        var moves: [(table: String, column: String, target: Int64, owner: Int64?, ownerEntity: String)] = []
        for write in writes {
            let table = try layout.table(write.entity)
            for link in table.links {
                guard link.relationship.isToMany, let value = write.values[link.relationship.name] else { continue }
                let wanted = Set(try value.referencedIdentifiers.map { try key(of: $0) })
                let stored: Set<Int64> = write.isNew ? [] : Set(try store.toMany(link, owners: [write.key])[write.key] ?? [])
                switch link.storage {
                case .foreignKey: break
                case let .inverseForeignKey(targetTable, column):
                    let inverse = link.relationship.inverse ?? ""
                    func statesItself(_ key: Int64) -> Bool {
                        guard let i = position["\(link.destinationTable)#\(key)"] else { return false }
                        return writes[i].values[inverse] != nil
                    }
                    for target in wanted.subtracting(stored) where !statesItself(target) { moves.append((targetTable, column, target, write.key, write.entity)) }
                    for target in stored.subtracting(wanted) where !statesItself(target) { moves.append((targetTable, column, target, nil, write.entity)) }
                case let .join(joinTable, own, other):
                    for target in wanted.subtracting(stored) { joinAdds.append(JoinChange(table: joinTable, own: own, other: other, ownKey: write.key, otherKey: target)) }
                    for target in stored.subtracting(wanted) { joinRemoves.append(JoinChange(table: joinTable, own: own, other: other, ownKey: write.key, otherKey: target)) }
                }
            }
        }

        // The objects on the other side of bounded to-many relationships, before the save.
        for write in writes where !write.isNew { try noteBoundedNeighbours(write.entity, write.key) }
        for move in moves {
            // A moved target's former owner loses it.
            var former: Int64?
            try store.query("SELECT \(move.column) FROM \(move.table) WHERE Z_PK = ?", [.integer(move.target)]) { row in
                if !row.isNull(0) { former = row.integer(0) }
            }
            if let former { countOwners.insert(Owner(entity: move.ownerEntity, key: former)) }
        }

        // Rows.
        for write in writes {
            let table = try layout.table(write.entity)
            if write.isNew {
                try insertRow(table, write, log: &log)
            } else {
                try updateRow(table, write, log: &log)
            }
        }
        // A target one write adds is not detached by another that drops it (both statements
        // hold once it has moved to the one that adds it).
        let added = Set(moves.filter { $0.owner != nil }.map { "\($0.table).\($0.column)#\($0.target)" })
        for move in moves where move.owner != nil || !added.contains("\(move.table).\(move.column)#\(move.target)") {
            if let owner = move.owner {
                try store.run("UPDATE \(move.table) SET \(move.column) = ?, Z_OPT = Z_OPT + 1 WHERE Z_PK = ?", [.integer(owner), .integer(move.target)])
            } else {
                try store.run("UPDATE \(move.table) SET \(move.column) = NULL, Z_OPT = Z_OPT + 1 WHERE Z_PK = ?", [.integer(move.target)])
            }
        }
        for change in joinRemoves {
            try store.run("DELETE FROM \(change.table) WHERE \(change.own) = ? AND \(change.other) = ?", [.integer(change.ownKey), .integer(change.otherKey)])
        }
        for change in joinAdds {
            try store.run("INSERT OR IGNORE INTO \(change.table) (\(change.own), \(change.other)) VALUES (?, ?)", [.integer(change.ownKey), .integer(change.otherKey)])
        }

        for snapshot in request.deleted {
            try deleteObject(snapshot.persistentIdentifier.entityName, try key(of: snapshot.persistentIdentifier), log: &log)
        }
        // An insert never merges into an object the save deletes, by a cascade either.
        let lost = existing.intersection(deleted)
        if !lost.isEmpty { throw UpsertTargetsDeleted(targets: lost) }
        try checkDenials()
        // Nor to one a cascade of the save deletes.
        if !deleted.isEmpty {
            for snapshot in request.inserted + request.updated {
                for (name, value) in snapshot.values.sorted(by: { $0.key < $1.key }) {
                    let targets = value.referencedIdentifiers.map { remapped[$0] ?? $0 }
                    guard let gone = targets.first(where: deleted.contains) else { continue }
                    let id = snapshot.persistentIdentifier
                    throw DataStoreError(
                        .danglingReference, "\(id.entityName).\(name) of \(id) refers to \(gone), which a cascade rule of the same save deletes; drop the reference, or keep the object.",
                        entityName: id.entityName, propertyName: name, identifier: id, relatedIdentifiers: [gone])
                }
            }
        }
        for write in writes where !deletedRows.contains("\(try layout.table(write.entity).name)#\(write.key)") {
            countOwners.insert(Owner(entity: write.entity, key: write.key))
            try noteBoundedNeighbours(write.entity, write.key)
        }
        // In WALDataStore's order, so that a save refused for several reasons is refused for
        // the same one: the written objects' counts, uniqueness among them, the other objects'
        // counts, then uniqueness against the objects the save did not write.
        var written: Set<String> = []
        for write in writes { written.insert("\(try layout.table(write.entity).name)#\(write.key)") }
        try checkCounts { written.contains($0) }
        try checkUniqueness(writes) { written.contains($0) }
        try checkCounts { !written.contains($0) }
        try checkUniqueness(writes) { !written.contains($0) }
    }

    /// The relationships of `entity` whose inverse is a to-many with a minimum or maximum count.
    private func boundedInverses(_ entity: String) throws -> [(link: CoreDataLayout.Link, inverse: String)] {
        try layout.table(entity).links.compactMap { link in
            guard let inverse = link.relationship.inverse, let other = store.schema.relationship(named: inverse, in: link.relationship.destination),
                other.isToMany, other.minimumCount != nil || other.maximumCount != nil
            else { return nil }
            return (link, link.relationship.destination)
        }
    }

    /// Notes the objects row `key` of `entity` reaches through relationships whose inverse is
    /// bounded: their counts change when this object's links do.
    private func noteBoundedNeighbours(_ entity: String, _ key: Int64) throws {
        let table = try layout.table(entity)
        for (link, destination) in try boundedInverses(entity) {
            switch link.storage {
            case .foreignKey(let column):
                try store.query("SELECT \(column) FROM \(table.name) WHERE Z_PK = ? AND \(column) IS NOT NULL", [.integer(key)]) {
                    countOwners.insert(Owner(entity: destination, key: $0.integer(0)))
                }
            case .inverseForeignKey, .join:
                for target in try store.toMany(link, owners: [key])[key] ?? [] { countOwners.insert(Owner(entity: destination, key: target)) }
            }
        }
    }

    /// Refuses the save when an object it changed (one whose "ZTABLE#Z_PK" `includes`
    /// accepts) holds fewer or more objects in a to-many relationship than the relationship's
    /// minimum or maximum count, as the save leaves it.
    func checkCounts(of includes: (String) -> Bool = { _ in true }) throws {
        for owner in countOwners.sorted() {
            let table = try layout.table(owner.entity)
            let row = "\(table.name)#\(owner.key)"
            if deletedRows.contains(row) || !includes(row) { continue }
            // The row's own entity: a sub-entity may declare bounded relationships of its own.
            var kind = table
            if table.isShared {
                try store.query("SELECT Z_ENT FROM \(table.name) WHERE Z_PK = ?", [.integer(owner.key)]) { kind = try layout.table(try layout.entityName($0.integer(0))) }
            }
            for link in kind.links where link.relationship.isToMany && (link.relationship.minimumCount != nil || link.relationship.maximumCount != nil) {
                let count = (try store.toMany(link, owners: [owner.key])[owner.key] ?? []).count
                let r = link.relationship
                guard count < (r.minimumCount ?? 0) || count > (r.maximumCount ?? Int.max) else { continue }
                let id = try store.identifier(kind.entity.name, owner.key)
                throw DataStoreError(
                    .cardinality,
                    "\(id) would hold \(count) objects in \(r.name), outside \(r.minimumCount ?? 0)...\(r.maximumCount.map(String.init) ?? "∞"); add or remove some.",
                    entityName: kind.entity.name, propertyName: r.name, identifier: id)
            }
        }
    }

    /// Refuses the save when an object it wrote shares the values of a uniqueness rule with
    /// another object (one whose "ZTABLE#Z_PK" `includes` accepts), as the save leaves them: checked once every statement has run, so that
    /// an update may take a value the same save moves away from, or deletes (each rule's index
    /// makes this one lookup per written object and rule).
    private func checkUniqueness(_ writes: [Write], against includes: (String) -> Bool) throws {
        let temporaries = Dictionary(remapped.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        for write in writes {
            let id = try store.identifier(write.entity, write.key)
            if deleted.contains(id) { continue }
            let table = try layout.table(write.entity)
            for properties in table.uniqueness {
                let columns = properties.compactMap { name -> String? in
                    if let column = table.columnsByAttribute[name] { return column.name }
                    if case .foreignKey(let column)? = table.linksByName[name]?.storage { return column }
                    return nil
                }
                guard columns.count == properties.count else { continue }
                let matches = columns.map { "o.\($0) = t.\($0)" }.joined(separator: " AND ")
                var other: PersistentIdentifier?
                try store.query(
                    "SELECT o.Z_PK, o.Z_ENT FROM \(table.name) t JOIN \(table.name) o ON \(matches) AND o.Z_PK <> t.Z_PK WHERE t.Z_PK = ? LIMIT 1",
                    [.integer(write.key)]
                ) { other = try store.identifier(try layout.entityName($0.integer(1)), $0.integer(0)) }
                guard let otherID = other, case .integer(let otherKey) = otherID.primaryKey, includes("\(table.name)#\(otherKey)") else { continue }
                throw DataStoreError(
                    .uniqueness,
                    "The save would give \(id) the same \(properties.joined(separator: ", ")) as the stored \(otherID); change one of them, or update \(otherID) instead.",
                    entityName: write.entity, propertyName: properties.count == 1 ? properties[0] : nil,
                    identifier: temporaries[id] ?? id, constraint: properties, relatedIdentifiers: [temporaries[otherID] ?? otherID])
            }
        }
    }

    /// An upserting insert's `values` as they update the stored `id`: its attributes win, a
    /// to-one without a target keeps the stored one, and a to-many holds the stored links and
    /// the inserted ones (an upsert never removes a link).
    private func upserted(_ values: [String: PropertyValue], into id: PersistentIdentifier) throws -> [String: PropertyValue] {
        let table = try layout.table(id.entityName)
        let key = try key(of: id)
        var result = values
        for (name, value) in values {
            guard let link = table.linksByName[name] else { continue }
            if !link.relationship.isToMany {
                if value.isNull { result[name] = nil }
                continue
            }
            let inserted = value.referencedIdentifiers
            let present = Set(inserted.compactMap { id -> Int64? in if case .integer(let k) = id.primaryKey { k } else { nil } })
            let stored = (try store.toMany(link, owners: [key])[key] ?? []).filter { !present.contains($0) }
            let entities = try concreteEntities(link, stored)
            result[name] = .toMany(inserted + (try stored.map { try store.identifier(entities[$0] ?? link.relationship.destination, $0) }))
        }
        return result
    }

    // MARK: Keys

    /// The next `Z_PK` of `table`'s tree (its root's `Z_PRIMARYKEY` row, since the tree's rows
    /// share one table); `Z_PRIMARYKEY` is read once per save.
    private func newKey(_ table: CoreDataLayout.Table) throws -> Int64 {
        let entity = try layout.entityName(Int64(table.rootNumber))
        if maxKeys[entity] == nil {
            var max: Int64 = 0
            try store.query("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", [.integer(Int64(table.rootNumber))]) { max = $0.integer(0) }
            maxKeys[entity] = max
            firstKeys[entity] = max
        }
        maxKeys[entity]! += 1
        return maxKeys[entity]!
    }

    /// One `Z_MAX` bump per tree that inserted, as Core Data reserves a range of keys.
    private func bumpPrimaryKeys() throws {
        for (entity, max) in maxKeys {
            let table = try layout.table(entity)
            let changed = try store.run(
                "UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?",
                [.integer(max), .integer(Int64(table.number)), .integer(firstKeys[entity]!)])
            guard changed == 1 else { throw ColumnValues.damaged("a Z_PRIMARYKEY row that changed under the save") }
        }
    }

    /// The stored object (of `table`'s entity or another of its tree) holding `values`.
    private func storedOwner(_ table: CoreDataLayout.Table, _ properties: [String], _ values: [PropertyValue]) throws -> PersistentIdentifier? {
        var conditions: [String] = []
        var arguments: [SQLArgument] = []
        for (name, value) in zip(properties, values) {
            guard let column = table.columnsByAttribute[name] else { return nil }
            conditions.append("\(column.name) = ?")
            arguments.append(try ColumnValues.argument(value))
        }
        var found: PersistentIdentifier?
        try store.query("SELECT Z_PK, Z_ENT FROM \(table.name) WHERE \(conditions.joined(separator: " AND "))", arguments) {
            found = try store.identifier(try layout.entityName($0.integer(1)), $0.integer(0))
        }
        return found
    }

    private func exists(_ id: PersistentIdentifier) throws -> Bool {
        let table = try layout.table(id.entityName)
        var found = false
        try store.query("SELECT 1 FROM \(table.name) WHERE Z_PK = ? AND Z_ENT = ?", [.integer(try key(of: id)), .integer(Int64(table.number))]) { _ in found = true }
        return found
    }

    // MARK: Rows

    /// The column form of an attribute's value; a large external-storage value is written to
    /// its file first.
    private func argument(_ column: CoreDataLayout.Column, _ value: PropertyValue, log: inout CoreDataSQLiteStore.FileLog) throws -> SQLArgument {
        guard column.isExternal else { return try ColumnValues.argument(value) }
        guard case .data(let data) = value else { return .null }
        if data.count >= store.configuration.externalDataThreshold {
            let name = try store.files.write(data)
            log.written.append(name)
            return .blob(Data([ColumnValues.externalMarker]) + Data(name.utf8))
        }
        return .blob(Data([ColumnValues.inlineMarker]) + data)
    }

    private func insertRow(_ table: CoreDataLayout.Table, _ write: Write, log: inout CoreDataSQLiteStore.FileLog) throws {
        var names = ["Z_PK", "Z_ENT", "Z_OPT"]
        var arguments: [SQLArgument] = [.integer(write.key), .integer(Int64(table.number)), .integer(1)]
        for column in table.columns {
            var value = write.values[column.attribute.name] ?? .null
            if value.isNull, let defaultValue = column.attribute.defaultValue { value = defaultValue }
            names.append(column.name)
            arguments.append(try argument(column, value, log: &log))
        }
        for link in table.links {
            guard case .foreignKey(let column) = link.storage else { continue }
            names.append(column)
            arguments.append(try foreignKey(write.values[link.relationship.name]))
        }
        try store.run(
            "INSERT INTO \(table.name) (\(names.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))",
            arguments)
    }

    private func updateRow(_ table: CoreDataLayout.Table, _ write: Write, log: inout CoreDataSQLiteStore.FileLog) throws {
        var sets: [String] = []
        var arguments: [SQLArgument] = []
        for column in table.columns {
            guard let value = write.values[column.attribute.name] else { continue }
            if column.isExternal { log.dropped += try externalFiles(table, [column], write.key) }
            sets.append("\(column.name) = ?")
            arguments.append(try argument(column, value, log: &log))
        }
        for link in table.links {
            guard case .foreignKey(let column) = link.storage, let value = write.values[link.relationship.name] else { continue }
            sets.append("\(column) = ?")
            arguments.append(try foreignKey(value))
        }
        arguments.append(.integer(write.key))
        let changed = try store.run(
            "UPDATE \(table.name) SET \((["Z_OPT = Z_OPT + 1"] + sets).joined(separator: ", ")) WHERE Z_PK = ?", arguments)
        guard changed == 1 else {
            let id = try store.identifier(table.entity.name, write.key)
            throw DataStoreError(.danglingReference, "The updated \(id) is not in the store; it was deleted. Insert it again instead.", entityName: table.entity.name, identifier: id)
        }
    }

    private func foreignKey(_ value: PropertyValue?) throws -> SQLArgument {
        guard case .toOne(let target?)? = value else { return .null }
        return .integer(try key(of: target))
    }

    /// The external files the columns of row `key` name.
    private func externalFiles(_ table: CoreDataLayout.Table, _ columns: [CoreDataLayout.Column], _ key: Int64) throws -> [String] {
        var names: [String] = []
        for column in columns where column.isExternal {
            try store.query("SELECT \(column.name) FROM \(table.name) WHERE Z_PK = ?", [.integer(key)]) { row in
                if let stored = row.data(0), stored.first == ColumnValues.externalMarker {
                    names.append(String(decoding: stored.dropFirst(), as: UTF8.self))
                }
            }
        }
        return names
    }

    // MARK: Deletes

    /// Deletes row `key` of `entity` with its delete rules: cascades delete the targets,
    /// nullify clears the targets' foreign keys, deny refuses while there are targets; its join
    /// rows go with it, its external files once the transaction commits.
    /// An object the request updates that a cascade reaches is refused (`conflictingChanges`).
    func deleteObject(_ entity: String, _ key: Int64, cascadedBy owner: (id: PersistentIdentifier, relationship: String)? = nil, log: inout CoreDataSQLiteStore.FileLog) throws {
        let id = try store.identifier(entity, key)
        guard !deleted.contains(id) else { return }
        if let owner, updatedIDs.contains(id) {
            throw DataStoreError(
                .conflictingChanges,
                "\(id) is deleted by the cascade rule of \(owner.id).\(owner.relationship), and the same save updates it: two statements about one object. Detach it from \(owner.id) to keep it, or drop the update.",
                entityName: entity, identifier: id, relatedIdentifiers: [owner.id])
        }
        deleted.insert(id)
        let table = try layout.table(entity)
        deletedRows.insert("\(table.name)#\(key)")
        try noteBoundedNeighbours(entity, key)
        for link in table.links {
            let rule = link.relationship.deleteRule
            if rule == .noAction { continue }
            var targets: [Int64] = []
            switch link.storage {
            case .foreignKey(let column):
                if rule == .nullify { continue }
                try store.query("SELECT \(column) FROM \(table.name) WHERE Z_PK = ? AND \(column) IS NOT NULL", [.integer(key)]) { targets.append($0.integer(0)) }
            case .inverseForeignKey, .join:
                if rule == .nullify, case .join = link.storage { continue }  // the join rows go below
                targets = try store.toMany(link, owners: [key])[key] ?? []
            }
            let destination = link.relationship.destination
            let entities = try concreteEntities(link, targets)
            switch rule {
            case .deny:
                // Checked once every delete has run: the rule counts the targets the save leaves.
                let held = try targets.map { try store.identifier(entities[$0] ?? destination, $0) }
                if !held.isEmpty { denials.append((id, link.relationship.name, held)) }
            case .cascade:
                for target in targets { try deleteObject(entities[target] ?? destination, target, cascadedBy: (id, link.relationship.name), log: &log) }
            case .nullify:
                if case let .inverseForeignKey(targetTable, column) = link.storage {
                    try store.run("UPDATE \(targetTable) SET \(column) = NULL, Z_OPT = Z_OPT + 1 WHERE \(column) = ?", [.integer(key)])
                }
            case .noAction:
                break
            }
        }
        // To-one references without an inverse lose the deleted object too (each column has its
        // index), as a relationship's inverse would be nullified: a fetch never returns a
        // reference to an object that is gone, which a save of the same snapshot would refuse.
        for (sourceTable, column) in toOnesWithoutInverse(to: entity) {
            try store.run("UPDATE \(sourceTable) SET \(column) = NULL, Z_OPT = Z_OPT + 1 WHERE \(column) = ?", [.integer(key)])
        }
        log.dropped += try externalFiles(table, table.columns, key)
        try store.run("DELETE FROM \(table.name) WHERE Z_PK = ?", [.integer(key)])
        for (joinTable, column) in joinColumns(referencing: entity) {
            try store.run("DELETE FROM \(joinTable) WHERE \(column) = ?", [.integer(key)])
        }
    }

    /// Refuses the save when a deleted object's relationship with the deny rule held a target
    /// that the save does not delete too.
    func checkDenials() throws {
        for denial in denials {
            guard let kept = try denial.targets.first(where: { try !deleted.contains($0) && exists($0) }) else { continue }
            throw DataStoreError(
                .deleteDenied, "\(denial.owner) cannot be deleted: its \(denial.relationship) still holds \(kept) and the rule is deny; delete or detach that first.",
                entityName: denial.owner.entityName, propertyName: denial.relationship, identifier: denial.owner, relatedIdentifiers: [kept])
        }
    }

    /// The entity of each of `keys`, rows of `link`'s destination table (its destination, or
    /// one of its sub-entities).
    private func concreteEntities(_ link: CoreDataLayout.Link, _ keys: [Int64]) throws -> [Int64: String] {
        guard !keys.isEmpty, try layout.table(link.relationship.destination).isShared else { return [:] }
        var result: [Int64: String] = [:]
        for key in keys {
            try store.query("SELECT Z_ENT FROM \(link.destinationTable) WHERE Z_PK = ?", [.integer(key)]) { result[key] = try layout.entityName($0.integer(0)) }
        }
        return result
    }

    /// The table and foreign-key column of every to-one relationship without an inverse whose
    /// destination `entity` is (or inherits from).
    private func toOnesWithoutInverse(to entity: String) -> [(String, String)] {
        var result: Set<[String]> = []
        for table in layout.tables.values {
            for link in table.links where link.relationship.inverse == nil && store.schema.isEntity(entity, kindOf: link.relationship.destination) {
                if case .foreignKey(let column) = link.storage { result.insert([table.name, column]) }
            }
        }
        return result.sorted { $0.joined() < $1.joined() }.map { ($0[0], $0[1]) }
    }

    /// Every join-table column that holds `Z_PK`s of `entity`.
    private func joinColumns(referencing entity: String) -> [(String, String)] {
        var result: Set<[String]> = []
        for table in layout.tables.values {
            for link in table.links {
                guard case let .join(joinTable, own, other) = link.storage else { continue }
                if store.schema.isEntity(entity, kindOf: table.entity.name) { result.insert([joinTable, own]) }
                if store.schema.isEntity(entity, kindOf: link.relationship.destination) { result.insert([joinTable, other]) }
            }
        }
        return result.sorted { $0.joined() < $1.joined() }.map { ($0[0], $0[1]) }
    }
}
