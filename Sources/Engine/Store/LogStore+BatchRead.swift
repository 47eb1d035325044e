extension LogStore {
    /// The latest committed values of `keys`, in the order given (`nil` for a key that is
    /// absent; a key given twice is answered twice), read on the calling thread: what calling
    /// ``value(forKey:)`` for each key returns, at a lower cost per key.
    ///
    /// The tail's resident index is consulted for every key under one hold of the index lock,
    /// which also takes the set of tables; the keys the tail does not hold are then looked up in
    /// the tables, newest first, in ascending key order: each table checks its key range and
    /// Bloom filter per key, searches its index in place per key, and takes each key's data
    /// block from the block cache (read, checked and parsed once when it is not there). A key
    /// answered by one table is not looked up in older ones. Inline tail values and blobs are
    /// read as by ``value(forKey:)``.
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
            case .table(let view)?: values[position] = Array(view.bytes)
            case .inline(let location, let file)?: values[position] = try readValue(key: keys[position], at: location, from: file)
            case .blob(let reference)?:
                do {
                    values[position] = try openBlob(reference).readAll()
                } catch  where error.code == .missingBlob {
                    // Overwritten and collected meanwhile: the one-key read looks again.
                    values[position] = try value(forKey: keys[position])
                }
            }
        }
        return values
    }

    /// Calls `body` once for each of `keys`, in the order given, with its position and the
    /// latest committed value's bytes (`nil` for a key that is absent): what
    /// ``values(forKeys:)`` returns, lent instead of copied. A value in a table is lent in place,
    /// in its cached block; a tail value or a blob is read first, as ``values(forKeys:)`` reads
    /// it. The bytes are valid only inside each call of `body`. The keys are looked up as by
    /// ``values(forKeys:)``.
    ///
    /// - Throws: as ``values(forKeys:)``, or what `body` throws (the remaining keys are then not
    ///   visited).
    public func withValues(
        forKeys keys: [[UInt8]], _ body: (_ position: Int, _ value: UnsafeRawBufferPointer?) throws(EngineError) -> Void
    ) throws(EngineError) {
        let versions = try currentVersions(of: keys)
        for (position, version) in versions.enumerated() {
            switch version {
            case nil: try body(position, nil)
            case .table(let view)?: try body(position, view.bytes)
            case .cached(let value)?: try withBytes(value) { bytes throws(EngineError) in try body(position, bytes) }
            case .inline(let location, let file)?:
                let value = try readValue(key: keys[position], at: location, from: file)
                try withBytes(value) { bytes throws(EngineError) in try body(position, bytes) }
            case .blob?:
                // Read as the one-key read does (looking again should the blob have been
                // collected after an overwrite).
                guard let value = try value(forKey: keys[position]) else {
                    try body(position, nil)
                    continue
                }
                try withBytes(value) { bytes throws(EngineError) in try body(position, bytes) }
            }
        }
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
            var answered = false
            for index in pending.indices {
                let found = try withBytes(pending[index].key) { key throws(EngineError) -> Version?? in
                    guard let view = try tableEntry(table, key) else { return nil }
                    return .some(try view.version())
                }
                guard let found else { continue }
                for position in pending[index].positions { versions[position] = found }
                pending[index].positions = []
                answered = true
            }
            if answered { pending.removeAll { $0.positions.isEmpty } }
        }
        return versions
    }
}
