extension LogStore {

    /// Merges tables by the policy (FORMAT.md, "Merge"): the lowest level holding
    /// ``LogStore/CompactionPolicy/mergeFanIn`` tables has all of them merged into one table of
    /// the next level; with `everything`, every table is merged into one (when there are two or
    /// more, or one that holds a tombstone). Overwritten versions are dropped, and tombstones too when no older table remains
    /// below the inputs. Returns nil when no merge was due. Called under the compaction gate.
    ///
    /// Memory: the inputs are read one data block at a time each (``TableCursor``) and written
    /// as they are read, so a merge holds one decoded block per input table, plus the table
    /// writer's filter and index.
    func mergeNow(everything: Bool) throws(EngineError) -> StepResult? {
        // The merge's own references to the input tables end with `merge(everything:)`, before
        // the files are looked at by the removal.
        guard var (result, replaced) = try merge(everything: everything) else { return nil }
        removeReplaced(&replaced)
        result.entriesWritten = result.tables.reduce(0) { $0 + Int($1.entryCount) }
        return result
    }

    /// True when `ids` (ascending) holds `id`: a binary search, allocating nothing.
    static func sortedIDs(_ ids: [UInt64], contain id: UInt64) -> Bool {
        var low = 0
        var high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low < ids.count && ids[low] == id
    }

    func merge(
        everything: Bool
    ) throws(EngineError) -> (StepResult, [(name: String, file: any StoreFile, companions: [String])])? {
        let tables = state.withLock { $0.tables }
        let inputRange: Range<Int>
        let level: UInt32
        if everything {
            // A lone table is rewritten only to drop its tombstones (an older table it hid keys
            // of is gone: salvage dropped it), or to upgrade it from an older table format
            // (FORMAT.md, "Table files": upgrade by rewrite).
            if tables.count < 2 {
                guard let lone = tables.first else { return nil }
                if lone.reader.footer.version == TableFormat.version, !(try Self.holdsTombstone(lone)) { return nil }
            }
            inputRange = 0..<tables.count
            level = max(1, tables.map(\.level).max()!)
        } else {
            let fanIn = options.compaction.mergeFanIn
            var counts: [UInt32: Int] = [:]
            for table in tables { counts[table.level, default: 0] += 1 }
            guard let due = counts.filter({ $0.value >= fanIn }).keys.min() else { return nil }
            let first = tables.firstIndex { $0.level == due }!
            let last = tables.lastIndex { $0.level == due }!
            inputRange = first..<(last + 1)
            // A level is a u32 from the manifest: the highest has no next, and stays.
            level = due == UInt32.max ? due : due + 1
        }
        let inputs = Array(tables[inputRange])
        let droppingTombstones = inputRange.upperBound == tables.count
        try checkStopping()
        var (written, table) = (Manifest.Table?.none, StoreTable?.none)
        // The newest table's version of a key wins; blocks are read once, not cached.
        var merge = MergingCursor(tail: nil, tables: inputs.map { $0.reader.cursor(caching: false) }, reverse: false)
        try merge.seek(.all)
        func nextKept() throws(EngineError) -> TableEntry? {
            while merge.isValid {
                let dropped = droppingTombstones && merge.storedValue.load(as: UInt8.self) == TableFormat.kindTombstone
                let entry = dropped ? nil : try merge.tables[merge.source - 1].entry()
                if let entry, case .blob(let reference) = entry.value {
                    // The manifest's blob list is what blob collection trusts: a reference it
                    // omits would cost the blob file (FORMAT.md, "Manifest").
                    let input = inputs[merge.source - 1]
                    guard Self.sortedIDs(input.record.blobIDs, contain: reference.id) else {
                        throw .corruption(
                            "table references blob \(reference.id), which the manifest's blob list for it omits (blob collection would remove a blob in use); run LogStore.salvage(at:)",
                            path: input.reader.path, offset: merge.tables[merge.source - 1].currentBlock.offset)
                    }
                }
                try merge.advance()
                if let entry { return entry }
            }
            return nil
        }
        if let first = try nextKept() {
            (written, table) = try writeTable(level: level) { (writer: inout TableWriter) throws(EngineError) in
                try writer.add(first)
                var count = 0
                while let next = try nextKept() {
                    try writer.add(next)
                    count += 1
                    if count % 4096 == 0 { try checkStopping() }
                }
            }
        }
        let inputNumbers = Set(inputs.map(\.number))
        var manifestTables = catalog.withLock { $0.manifest.tables }
        let position = manifestTables.firstIndex { inputNumbers.contains($0.number) } ?? 0
        manifestTables.removeAll { inputNumbers.contains($0.number) }
        if let written { manifestTables.insert(written, at: position) }
        let manifest = catalog.withLock { c in
            Manifest(logStart: c.manifest.logStart, lastSequence: c.manifest.lastSequence, tables: manifestTables)
                .keepingClosedEnd(from: c.manifest)
        }
        try installManifest(manifest, removingOnFailure: written.map { [$0.number] } ?? [])
        state.withLock { s in
            s.tables.removeAll { inputNumbers.contains($0.number) }
            if let table { s.tables.insert(table, at: min(position, s.tables.count)) }
        }
        catalog.withLock { c in
            c.manifest = manifest
            c.mergeBytesWritten += written?.length ?? 0
        }
        let bytesBefore = inputs.reduce(0) { $0 + $1.record.length }
        return (
            StepResult(tables: written.map { [$0] } ?? [], bytesBefore: bytesBefore, entriesWritten: 0),
            inputs.map { (name: TableFormat.name($0.number), file: $0.file, companions: []) }
        )
    }

    /// True when `table` holds a tombstone: its entries are read front to back until the first.
    private static func holdsTombstone(_ table: StoreTable) throws(EngineError) -> Bool {
        var cursor = table.reader.cursor(caching: false)
        try cursor.seek(to: .unbounded)
        while cursor.isValid {
            if cursor.storedValue.load(as: UInt8.self) == TableFormat.kindTombstone { return true }
            try cursor.next()
        }
        return false
    }
}
