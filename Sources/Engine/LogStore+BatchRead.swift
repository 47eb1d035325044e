extension LogStore {
    /// The latest committed values of `keys`, in the order given (`nil` for a key that is
    /// absent; a key given twice is answered twice), read on the calling thread: what calling
    /// ``value(forKey:)`` for each key returns, at a lower cost per key.
    ///
    /// The tail's resident index is consulted for every key under one hold of the index lock,
    /// which also takes the set of tables; the keys the tail does not hold are then looked up in
    /// the tables, newest first, in ascending key order: each table checks its key range and
    /// Bloom filter per key, searches its index per key, and reads (or takes from the block
    /// cache) and checks each data block once for all the keys it can hold. A key answered by
    /// one table is not looked up in older ones. Inline tail values and blobs are read as by
    /// ``value(forKey:)``.
    ///
    /// The keys the tail holds and the tables are seen in one state of the store; a commit that
    /// returns while the call runs may or may not be seen for a key read from a blob or a tail
    /// segment afterwards, as for separate calls.
    ///
    /// - Throws: as ``value(forKey:)``: ``EngineError/Code/corruption`` naming the file and
    ///   offset when a block or blob fails its checks (no partial result is returned);
    ///   ``EngineError/Code/missingBlob``; ``EngineError/Code/closed`` after ``close()``.
    public func values(forKeys keys: [[UInt8]]) throws(EngineError) -> [[UInt8]?] {
        let versions = try currentVersions(of: keys)
        var values = [[UInt8]?](repeating: nil, count: keys.count)
        for (position, version) in versions.enumerated() {
            switch version {
            case nil: continue
            case .cached(let value)?: values[position] = value
            case .inline(let location, let file)?: values[position] = try readValue(key: keys[position], at: location, from: file)
            case .blob(let reference)?:
                do {
                    values[position] = try openBlob(reference).readAll()
                } catch where error.code == .missingBlob {
                    // Overwritten and collected meanwhile: the one-key read looks again.
                    values[position] = try value(forKey: keys[position])
                }
            }
        }
        return values
    }

    /// The current version of each of `keys` (as ``currentVersion(of:)`` finds it), the tail
    /// consulted for all of them under one hold of the index lock, then the tables newest first
    /// for the keys still unanswered, in ascending order and without repeats.
    func currentVersions(of keys: [[UInt8]]) throws(EngineError) -> [Version?] {
        var versions = [Version?](repeating: nil, count: keys.count)
        var missing: [Int] = []
        let tables = try state.withLock { s throws(EngineError) -> [StoreTable] in
            guard !s.closed else { throw Self.closedError }
            for (position, key) in keys.enumerated() {
                guard let version = try tailVersion(of: key, in: &s) else {
                    missing.append(position)
                    continue
                }
                versions[position] = version
            }
            return s.tables
        }
        guard !missing.isEmpty, !tables.isEmpty else { return versions }
        // Ascending, each distinct key once with every position asking for it.
        missing.sort { compareBytes(keys[$0], keys[$1]) < 0 }
        var pending: [(key: [UInt8], positions: [Int])] = []
        for position in missing {
            if let last = pending.last, last.key == keys[position] {
                pending[pending.count - 1].positions.append(position)
            } else {
                pending.append((keys[position], [position]))
            }
        }
        for table in tables {
            guard !pending.isEmpty else { break }
            var asked: [Int] = []
            for (index, item) in pending.enumerated() where try mayHold(table, item.key) { asked.append(index) }
            guard !asked.isEmpty else { continue }
            let entries = try table.reader.entriesAfterFilter(forSortedKeys: asked.map { pending[$0].key })
            var answered = Set<Int>()
            for (index, entry) in zip(asked, entries) {
                guard let entry else { continue }
                let version = entry.version
                for position in pending[index].positions { versions[position] = version }
                answered.insert(index)
            }
            if !answered.isEmpty { pending = pending.enumerated().filter { !answered.contains($0.offset) }.map(\.element) }
        }
        return versions
    }
}
