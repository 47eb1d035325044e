import Snapshot

extension StoreContext {
    /// Stages the deletion of the object `identifier` and what the schema's delete rules imply:
    /// the targets of its `cascade` relationships are deleted (and theirs, in turn), the
    /// inverse of each `nullify` relationship loses the object in its targets (staged as their
    /// updates), and a `deny` relationship that still has a target not deleted with it refuses
    /// the whole delete. Deleting a pending insert discards it (and its cascades), and the
    /// pending objects that referred to it lose the reference.
    ///
    /// - Throws: ``DataStoreError/Code/deleteDenied`` naming the object and relationship, with
    ///   nothing staged; ``DataStoreError/Code/danglingReference`` when the object does not
    ///   exist; the store's errors.
    public func delete(_ identifier: PersistentIdentifier) throws {
        try stageDeletion(identifier)
    }

    /// ``delete(_:)``, returning the objects it deleted: `identifier`'s object and those its
    /// cascades reach (pending inserts among them, discarded).
    @discardableResult
    func stageDeletion(_ identifier: PersistentIdentifier) throws -> [PersistentIdentifier] {
        let root = current(identifier)
        guard try snapshot(for: root) != nil else {
            throw DataStoreError(
                .danglingReference, "\(root) is not in its store or is already pending deletion.", entityName: root.entityName, identifier: root)
        }
        var doomed: [PersistentIdentifier] = []
        var doomedSet: Set<PersistentIdentifier> = []
        var queue = [root]
        while let d = queue.popLast() {
            guard !doomedSet.contains(d), let s = try snapshot(for: d) else { continue }
            doomed.append(d)
            doomedSet.insert(d)
            for r in relationships(of: d.entityName) where r.deleteRule == .cascade {
                queue.append(contentsOf: try targets(of: s, through: r).reversed())
            }
        }
        for d in doomed {
            let s = try snapshot(for: d)!
            for r in relationships(of: d.entityName) where r.deleteRule == .deny {
                if let kept = try targets(of: s, through: r).first(where: { !doomedSet.contains($0) }) {
                    throw DataStoreError(
                        .deleteDenied, "\(d) cannot be deleted: its \(r.name) still holds \(kept) and the rule is deny; delete or detach that first.",
                        entityName: d.entityName, propertyName: r.name, identifier: d)
                }
            }
        }
        // The nullified inverses, worked out before anything is staged.
        var edits: [(PersistentIdentifier, String, PersistentIdentifier)] = []
        for d in doomed {
            let s = try snapshot(for: d)!
            for r in relationships(of: d.entityName) where r.deleteRule == .nullify {
                guard let inverse = r.inverse else { continue }
                for t in try targets(of: s, through: r) where !doomedSet.contains(t) { edits.append((t, inverse, d)) }
            }
        }
        for d in doomed {
            if inserts.removeValue(forKey: d) != nil {
                insertOrder.removeAll { $0 == d }
            } else {
                if updates.removeValue(forKey: d) != nil { updateOrder.removeAll { $0 == d } }
                changedKeys[d] = nil
                deleteOrder.append(d)
                deletes.insert(d)
            }
        }
        for (t, inverse, d) in edits {
            guard let s = try snapshot(for: t) else { continue }
            switch s.values[inverse] {
            case .toMany(let ids)? where ids.contains(d): try update(t, [inverse: .toMany(ids.filter { $0 != d })])
            case .toOne(d)?: try update(t, [inverse: .toOne(nil)])
            default: break
            }
        }
        stripReferences(to: doomedSet)
        return doomed
    }

    /// The relationships of `entityName`, inherited ones included.
    func relationships(of entityName: String) -> [Schema.Relationship] {
        schema.allProperties(of: entityName).compactMap { if case .relationship(let r) = $0 { r } else { nil } }
    }

    /// The objects `snapshot` reaches through `r` as a save of the pending changes leaves them:
    /// those it lists, and the pending objects whose inverse of `r` points at it (inverses are
    /// not kept in memory before a save); for a to-many whose inverse is a to-one, without the
    /// listed objects a pending change takes elsewhere (their own to-one, or another object's
    /// to-many `r` listing them), as the store's delete rules read it.
    func targets(of snapshot: DefaultSnapshot, through r: Schema.Relationship) throws -> [PersistentIdentifier] {
        var result = snapshot.values[r.name]?.referencedIdentifiers ?? []
        if let inverse = r.inverse {
            let id = snapshot.persistentIdentifier
            let pending = insertOrder.compactMap({ inserts[$0] }) + updateOrder.compactMap({ updates[$0] })
            for p in pending where p.values[inverse]?.referencedIdentifiers.contains(id) == true && !result.contains(p.persistentIdentifier) {
                result.append(p.persistentIdentifier)
            }
            if r.isToMany, schema.relationship(named: inverse, in: r.destination)?.isToMany == false {
                result.removeAll { t in
                    // Its own to-one decides when a pending change states it (an update's
                    // snapshot holds the stored one too, stale once another's to-many moves it).
                    if let own = inserts[t] ?? updates[t], inserts[t] != nil || changedKeys[t]?.contains(inverse) == true {
                        return own.values[inverse]?.referencedIdentifiers.first != id
                    }
                    return pending.contains { other in
                        other.persistentIdentifier != id
                            && (inserts[other.persistentIdentifier] != nil || changedKeys[other.persistentIdentifier]?.contains(r.name) == true)
                            && other.values[r.name]?.referencedIdentifiers.contains(t) == true
                    }
                }
            }
        }
        return result.filter { !deletes.contains($0) }
    }

    /// Pending inserts and updates lose their references to `ids`.
    func stripReferences(to ids: Set<PersistentIdentifier>) {
        func stripped(_ s: DefaultSnapshot) -> DefaultSnapshot? {
            var s = s
            var changed = false
            for (name, value) in s.values {
                switch value {
                case .toOne(let t?) where ids.contains(t):
                    s.values[name] = .toOne(nil)
                    changed = true
                case .toMany(let list) where list.contains(where: ids.contains):
                    s.values[name] = .toMany(list.filter { !ids.contains($0) })
                    changed = true
                default: break
                }
            }
            return changed ? s : nil
        }
        for id in insertOrder { if let s = inserts[id].flatMap(stripped) { inserts[id] = s } }
        for id in updateOrder { if let s = updates[id].flatMap(stripped) { updates[id] = s } }
    }
}
