import Engine
import Foundation

extension SavePlanner {
    /// A save's engine writes, in key order, each key once: what ``plan(_:)`` returns.
    ///
    /// The engine's index merges a commit's keys into its table in one ordered pass, after
    /// sorting them (`KeyDirectory.apply`); the standard library's sort finds sorted input in
    /// one run, so keys handed over in order cost that sort a single pass (the engine needs no
    /// hook for it; a shared commit's saves come as one sorted run each). The counts and the
    /// history transaction a save adds are merged in by ``batch(adding:)`` and
    /// ``engineBatch(adding:in:)``.
    struct Writes {
        /// Byte-wise ascending keys, each once, each with what it becomes: a value (inline or
        /// external) or, `nil`, deleted.
        var entries: [(key: [UInt8], entry: StoredEntry?)] = []

        /// The writes as a batch of record keys (unprefixed), in key order.
        var batch: WriteBatch { batch(adding: WriteBatch()) }

        /// The writes and `extra`'s operations (the save's counts, its history transaction:
        /// bytes only) as one batch of record keys in key order. Of a key in both, `extra`'s
        /// operation comes after, and wins.
        func batch(adding extra: WriteBatch) -> WriteBatch { merged(with: extra, engineKey: nil) }

        /// As ``batch(adding:)``, with the keys as the engine stores them in `space`'s
        /// generation, in the engine's key order: what is committed. (Above generation 0 the
        /// record keys take the generation's prefix and other layers' keys, the history's, do
        /// not: the order is that of the engine's keys.)
        func engineBatch(adding extra: WriteBatch, in space: RecordSpace) -> WriteBatch {
            guard !space.prefix.isEmpty else { return merged(with: extra, engineKey: nil) }
            return merged(with: extra, engineKey: { space.engineKey($0) })
        }

        private func merged(with extra: WriteBatch, engineKey: (([UInt8]) -> [UInt8])?) -> WriteBatch {
            var others = extra.entries ?? []
            if let engineKey { others = others.map { Self.mapping($0, engineKey) } }
            if !others.isEmpty {
                // Stable: a later operation on one key stays later.
                let order = others.indices.sorted { a, b in
                    let c = compareKeys(Self.key(of: others[a]), Self.key(of: others[b]))
                    return c != 0 ? c < 0 : a < b
                }
                others = order.map { others[$0] }
            }
            var batch = WriteBatch()
            var j = 0
            for (recordKey, entry) in entries {
                // The planner writes record keys only: one prefix keeps their order.
                let key = engineKey?(recordKey) ?? recordKey
                while j < others.count, compareKeys(Self.key(of: others[j]), key) < 0 {
                    batch.append(others[j])
                    j += 1
                }
                switch entry {
                case .inline(let bytes)?: batch.put(key, bytes)
                case .external(let bytes)?: batch.putExternal(key, bytes)
                case nil: batch.delete(key)
                }
            }
            while j < others.count {
                batch.append(others[j])
                j += 1
            }
            return batch
        }

        private static func mapping(_ entry: WriteBatch.Entry, _ engineKey: ([UInt8]) -> [UInt8]) -> WriteBatch.Entry {
            switch entry {
            case .put(let key, let value): .put(key: engineKey(key), value: value)
            case .putExternal(let key, let value): .putExternal(key: engineKey(key), value: value)
            case .delete(let key): .delete(key: engineKey(key))
            }
        }

        private static func key(of entry: WriteBatch.Entry) -> [UInt8] {
            switch entry {
            case .put(let key, _), .putExternal(let key, _), .delete(let key): key
            }
        }
    }

    /// Refuses an object whose index or uniqueness entry (`entries` are its entries) would pass
    /// the engine's key limit, naming the attribute, before anything is written.
    ///
    /// - Throws: ``DataStoreError/Code/valueTooLongForKey``.
    func checkKeyLengths(_ entries: ArraySlice<(key: [UInt8], entry: StoredEntry)>, of state: ObjectState) throws {
        for (key, _) in entries where key.count > RecordKeys.maxKeyLength {
            let id = state.persistentIdentifier
            if let refusal = layout.encoder(of: id.entityName).refusal(ofLongKey: key, in: state, reportedAs: reported(id)) { throw refusal }
        }
    }

    /// Every entry that changes, in key order: old entries of touched objects not kept are
    /// deleted, new or changed ones put. An object's old entries are derived with the same
    /// to-many arrays its state holds (the rest are unchanged, or changed through
    /// ``Attempt/linkChanges``, whose join records are put and deleted one by one).
    ///
    /// Both sides are lists sorted once and compared in one merge: no key is hashed.
    func writes() throws -> Writes {
        var before: [(key: [UInt8], entry: StoredEntry)] = []
        var after: [(key: [UInt8], entry: StoredEntry)] = []
        for id in attempt.deleted.sorted() {
            if let old = try storedWhole(id) { before += mapper.entries(of: old) }
        }
        for (id, new) in attempt.state where !attempt.deleted.contains(id) {
            guard var old = try stored(id), let pk = RecordMapper.primaryKey(of: id) else {
                let start = after.count
                after += mapper.entries(of: new)
                try checkKeyLengths(after[start...], of: new)
                continue
            }
            let encoder = layout.encoder(of: id.entityName)
            for link in encoder.relationshipSlots where link.relationship.isToMany && new.slot(link.slot) != nil {
                old.values.slots[link.slot] = .toMany(try storedTargets(id, link.relationship))
            }
            let encoded = encoder.encode(new, primaryKey: pk, assetThreshold: mapper.assetThreshold, layout: layout)
            // The new record's bytes against the stored ones: when equal (and no field is held
            // in an asset, whose bytes the record does not hold), every field, and so every
            // back reference, index and uniqueness entry, is unchanged: only links are compared.
            if encoder.rulesReadFieldsOnly && !encoded.holdsAsset && encoded.record == storedRecords[id] {
                unchangedRecords += 1
                encoder.linkEntries(of: old, mapper: mapper, into: &before)
                encoder.linkEntries(of: new, mapper: mapper, into: &after)
                continue
            }
            before += mapper.entries(of: old)
            let start = after.count
            after += encoder.entries(of: new, encoded, primaryKey: pk, mapper: mapper)
            try checkKeyLengths(after[start...], of: new)
        }
        for (id, changes) in attempt.linkChanges where !attempt.deleted.contains(id) {
            for (name, change) in changes where attempt.state[id]?.values[name] == nil {
                guard case .relationship(let r)? = schema.property(named: name, in: id.entityName) else { continue }
                for target in change.added where !attempt.deleted.contains(target) {
                    after += mapper.joinEntries(of: id, through: r, to: target)
                }
                for target in change.removed {
                    // A placeholder: what matters is that the key is not kept.
                    before += mapper.joinEntries(of: id, through: r, to: target).map { ($0.key, .inline([])) }
                }
            }
        }
        Self.sortKeepingFirst(&before)
        Self.sortKeepingFirst(&after)
        // One merge of the two sorted lists: a key only before is deleted, one only after is
        // put, one on both sides is put when its entry changed.
        var writes = Writes()
        writes.entries.reserveCapacity(after.count)
        var i = 0, j = 0
        while i < before.count || j < after.count {
            let order = i == before.count ? 1 : j == after.count ? -1 : compareKeys(before[i].key, after[j].key)
            if order < 0 {
                writes.entries.append((before[i].key, nil))
                i += 1
            } else if order > 0 {
                writes.entries.append((after[j].key, after[j].entry))
                j += 1
            } else {
                if before[i].entry != after[j].entry { writes.entries.append((after[j].key, after[j].entry)) }
                i += 1
                j += 1
            }
        }
        return writes
    }

    /// Sorts `entries` by key, keeping of each key its first entry (a key repeats only when an
    /// array lists a target twice, or a link is derived from both of its ends).
    static func sortKeepingFirst(_ entries: inout [(key: [UInt8], entry: StoredEntry)]) {
        guard entries.count > 1 else { return }
        let order = stableOrder(entries)
        var sorted: [(key: [UInt8], entry: StoredEntry)] = []
        sorted.reserveCapacity(entries.count)
        for index in order {
            if let last = sorted.last, compareKeys(last.key, entries[index].key) == 0 { continue }
            sorted.append(entries[index])
        }
        entries = sorted
    }

    /// The positions of `entries` in ascending key order, equal keys in their order: a merge
    /// sort of the ascending runs the entries come in (an object's keys of one kind, a save's
    /// time-ordered primary keys), comparing keys with `memcmp`, with a fixed number of buffers
    /// whatever the count.
    static func stableOrder(_ entries: [(key: [UInt8], entry: StoredEntry)]) -> [Int] {
        let count = entries.count
        var order = Array(0..<count)
        guard count > 1 else { return order }
        // The start of every ascending run, and the end.
        var runs = [0]
        for i in 1..<count where compareKeys(entries[i - 1].key, entries[i].key) > 0 { runs.append(i) }
        runs.append(count)
        var buffer = order
        var merged: [Int] = []
        merged.reserveCapacity(runs.count / 2 + 2)
        while runs.count > 2 {
            merged.removeAll(keepingCapacity: true)
            merged.append(0)
            var r = 0
            while r + 1 < runs.count {
                let (low, mid) = (runs[r], runs[r + 1])
                let high = r + 2 < runs.count ? runs[r + 2] : mid
                var (i, j, k) = (low, mid, low)
                while i < mid && j < high {
                    // The left run first on equal keys: stable.
                    if compareKeys(entries[order[j]].key, entries[order[i]].key) < 0 {
                        buffer[k] = order[j]
                        j += 1
                    } else {
                        buffer[k] = order[i]
                        i += 1
                    }
                    k += 1
                }
                while i < mid { buffer[k] = order[i]; i += 1; k += 1 }
                while j < high { buffer[k] = order[j]; j += 1; k += 1 }
                merged.append(high)
                r += 2
            }
            swap(&order, &buffer)
            swap(&runs, &merged)
        }
        return order
    }
}

/// The byte-wise order of two keys: negative, zero or positive (`memcmp` over the common
/// prefix, then the shorter first) — the engine's key order.
func compareKeys(_ a: [UInt8], _ b: [UInt8]) -> Int {
    let common = min(a.count, b.count)
    let prefix = a.withUnsafeBufferPointer { x in
        b.withUnsafeBufferPointer { y in
            common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
        }
    }
    if prefix != 0 { return Int(prefix) }
    return a.count - b.count
}

extension WriteBatch {
    /// Appends `entry`'s operation.
    fileprivate mutating func append(_ entry: WriteBatch.Entry) {
        switch entry {
        case .put(let key, let value): put(key, value)
        case .putExternal(let key, let value): putExternal(key, value)
        case .delete(let key): delete(key)
        }
    }
}
