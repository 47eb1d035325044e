import Dispatch

extension LogStore {
    /// Compacts the store now, on the calling thread, and returns what it did.
    ///
    /// Compaction (FORMAT.md, "Flush", "Merge") seals the active segment, flushes every sealed
    /// segment's current entries into a new sorted table, merges every table into one (dropping
    /// overwritten versions and every tombstone; a lone table is rewritten only when it holds a
    /// tombstone), installs each step with a new manifest,
    /// removes the replaced files, then removes blob files no entry references. Afterwards the
    /// resident index of the log's tail is empty and one table holds every key. Nothing visible
    /// changes: every read before, during and after sees the same contents. Commits and reads on
    /// other threads go on meanwhile; they wait only for short steps (sealing the segment, and
    /// index updates in batches of ``moveBatchSize`` keys).
    ///
    /// When this returns, the new manifest and table are durable. A crash at any point leaves
    /// the old state or the new one, and the next open removes what the other left behind.
    ///
    /// Memory: besides the resident index and the caches, the flush holds at most
    /// ``LogStore/flushWindowBytes`` of keys and values and one log block at a time, the merge
    /// one decoded data block per table, and the collection the ids of the blobs still
    /// referenced; each table writer's filter and index grow with its table.
    ///
    /// - Throws: ``EngineError``. Before a manifest is replaced, a failure removes what the step
    ///   wrote and leaves the store as it was. Should the manifest's rename, or the directory
    ///   sync after it, fail, which state is durable is unknown: the store turns read-only
    ///   (``EngineError/Code/readOnly``) and keeps every file either state needs; reopen it.
    ///   ``EngineError/Code/closed`` when ``close()`` interrupts it.
    @discardableResult
    public func compact() throws(EngineError) -> Statistics.Compaction {
        // It runs at the caller's CPU priority: a lowered one (nice) was tried, and made things
        // worse, as a preempted compaction thread holding the index lock stalls every reader.
        try compactionGate.withLock { _ throws(EngineError) in try compactNow() }
    }

    /// Keys dropped from the resident index per hold of the index lock after a flush.
    static var moveBatchSize: Int { 1024 }
    /// The pause between two such holds, in which waiting committers and readers take the lock.
    static var batchPauseMicroseconds: Int { 50 }
    /// A replaced file nobody else holds is cut down by this much at a time before it is removed.
    static var releaseStepBytes: UInt64 { 4 << 20 }
    /// The pause after each such cut.
    static var releasePauseMicroseconds: Int { 1000 }
    /// The uncompressed size at which a table's data block is cut (FORMAT.md, "Table files"): a
    /// point read in a table inflates one block of about this size.
    static var tableBlockSize: Int { 4096 }

    /// Starts a flush (and the merges it makes due) in the background when
    /// ``LogStore/CompactionPolicy/isAutomatic`` and the sealed segments of the tail hold at
    /// least ``LogStore/CompactionPolicy/flushBytes``, or a merge is due (tables a flush at close
    /// added). Called after each rollover and at open.
    func scheduleFlushIfDue() {
        let policy = options.compaction
        guard policy.isAutomatic else { return }
        let due = state.withLock { s -> Bool in
            var sealed: UInt64 = 0
            for (number, file) in s.files where number < s.activeSegment { sealed += (try? file.size()) ?? 0 }
            return sealed >= UInt64(policy.flushBytes)
        }
        guard due || isMergeDue() else { return }
        let start = compaction.withLock { c -> Bool in
            guard !c.scheduled, !c.stopping, c.automaticFailure == nil else { return false }
            c.scheduled = true
            return true
        }
        guard start else { return }
        DispatchQueue.global(qos: .utility).async {
            var failure: EngineError?
            do throws(EngineError) {
                try self.compactionGate.withLock { _ throws(EngineError) in
                    try self.checkStopping()
                    if due { _ = try self.flushNow(sealingActive: false) }
                    while try self.mergeNow(everything: false) != nil { try self.checkStopping() }
                }
            } catch {
                failure = error
            }
            self.compaction.withLock { c in
                c.scheduled = false
                // Do not retry on every commit: automatic flushing waits for a reopen.
                if let failure, failure.code != .closed { c.automaticFailure = failure }
            }
        }
    }

    func checkStopping() throws(EngineError) {
        if compaction.withLock({ $0.stopping && !$0.flushingAtClose }) { throw Self.closedError }
    }

    /// At close, once background compaction has stopped: flushes the whole tail (sealing the
    /// active segment) when the policy is automatic, no automatic flush or merge has failed, and
    /// the tail's segments hold at least ``LogStore/CompactionPolicy/flushAtCloseBytes``. Best
    /// effort: a failure before the manifest's switch leaves the tail as it was (the next open
    /// reads it as it would have), one after leaves the store read-only, as any flush's.
    func flushAtClose() {
        let policy = options.compaction
        guard policy.isAutomatic, compaction.withLock({ $0.automaticFailure == nil }) else { return }
        let tailBytes = writer.withLock { w -> UInt64? in
            guard !w.closed, w.failure == nil else { return nil }
            let sealed = state.withLock { s in
                s.files.reduce(UInt64(0)) { $0 + ($1.key < w.activeNumber ? ((try? $1.value.size()) ?? 0) : 0) }
            }
            return sealed + w.writeOffset - UInt64(LogFormat.segmentHeaderSize)
        }
        guard let tailBytes, tailBytes >= UInt64(policy.flushAtCloseBytes) else { return }
        compactionGate.withLock { _ in
            compaction.withLock { $0.flushingAtClose = true }
            defer { compaction.withLock { $0.flushingAtClose = false } }
            _ = try? flushNow(sealingActive: true)
        }
    }

    /// True when some level holds ``LogStore/CompactionPolicy/mergeFanIn`` tables.
    private func isMergeDue() -> Bool {
        let fanIn = options.compaction.mergeFanIn
        let levels = state.withLock { s in s.tables.map(\.level) }
        var counts: [UInt32: Int] = [:]
        for level in levels { counts[level, default: 0] += 1 }
        return counts.values.contains { $0 >= fanIn }
    }

    private func compactNow() throws(EngineError) -> Statistics.Compaction {
        let clock = ContinuousClock()
        let started = clock.now
        try checkStopping()
        let flush = try flushNow(sealingActive: true)
        var tablesWritten = flush.tables.count
        var bytesBefore = flush.bytesBefore
        var recordsWritten = flush.entriesWritten
        var bytesAfter = flush.tables.reduce(0) { $0 + $1.length }
        try checkStopping()
        if let merge = try mergeNow(everything: true) {
            tablesWritten += merge.tables.count
            // What the flush wrote is counted once, as part of the merged table.
            bytesBefore += merge.bytesBefore - min(merge.bytesBefore, bytesAfter)
            bytesAfter = merge.tables.reduce(0) { $0 + $1.length }
            recordsWritten = merge.entriesWritten
        }
        let blobsRemoved = collectUnreferencedBlobs()
        let report = Statistics.Compaction(
            duration: clock.now - started, bytesBefore: bytesBefore, bytesAfter: bytesAfter,
            recordsWritten: recordsWritten, tablesWritten: tablesWritten, blobsRemoved: blobsRemoved)
        compaction.withLock { $0.last = report }
        return report
    }

    /// What one flush or merge did.
    struct StepResult {
        /// The tables written, oldest first (none when every entry was dropped or there were none).
        var tables: [Manifest.Table]
        /// Bytes of the files it replaced (segments and their hints, or tables).
        var bytesBefore: UInt64
        /// Entries written into the tables.
        var entriesWritten: Int
    }

    // MARK: Flush

    /// Flushes the sealed segments of the tail (FORMAT.md, "Flush"): with `sealingActive`, seals
    /// the active segment first so that every commit so far is flushed. Writes their current
    /// entries as level-0 tables, one per run of segments of about
    /// ``LogStore/CompactionPolicy/flushBytes`` (at least a segment), each streamed from the
    /// tail's index in key order (``writeFlushTable(of:keepingTombstones:buffer:)``), a tombstone
    /// kept only while an older table exists; installs one manifest whose log start is the first
    /// segment not flushed; drops from the resident index the entries that still lie in the
    /// flushed segments; and removes the segments. Called under the compaction gate.
    ///
    /// Memory: the entries it buffers (keys, inline values) are at most
    /// ``LogStore/flushWindowBytes`` at a time, plus one log block, whatever the size of the
    /// runs; it keeps no list of what it flushed (the index is walked again to drop it), only
    /// the table writer's filter and index grow with a table.
    func flushNow(sealingActive: Bool) throws(EngineError) -> StepResult {
        let (boundary, lastSequence) = try writer.withLock { w throws(EngineError) -> (UInt64, UInt64) in
            guard !w.closed else { throw Self.closedError }
            if let failure = w.failure { throw Self.readOnlyError(after: failure) }
            if sealingActive {
                if w.writeOffset > UInt64(LogFormat.segmentHeaderSize) { try rollOver(&w) } else { try syncIfNeeded(&w) }
            }
            // Every segment below the active one is sealed and synced (rollOver syncs it).
            return (w.activeNumber, w.activeFirstSequence - 1)
        }
        var (inputs, olderTablesExist) = state.withLock { s in
            (s.files.filter { $0.key < boundary }.sorted { $0.key < $1.key }, !s.tables.isEmpty)
        }
        guard !inputs.isEmpty else { return StepResult(tables: [], bytesBefore: 0, entriesWritten: 0) }
        var bytesBefore = compaction.withLock { c in c.segmentHintBytes.filter { $0.key < boundary }.values.reduce(0, +) }
        var sizes: [UInt64] = []
        for (_, file) in inputs { sizes.append(try file.size()) }
        bytesBefore += sizes.reduce(0, +)

        // 1–2. For each run of segments: stream their current entries into a table.
        let groupBytes = UInt64(max(options.compaction.flushBytes, options.segmentSize))
        var written: [(record: Manifest.Table, table: StoreTable)] = []
        var kept = 0
        var buffer = FlushBuffer()
        defer { lastFlushPeak.store(buffer.peak, ordering: .relaxed) }
        do throws(EngineError) {
            var start = 0
            while start < inputs.count {
                var end = start + 1
                var bytes = sizes[start]
                while end < inputs.count, bytes + sizes[end] <= groupBytes {
                    bytes += sizes[end]
                    end += 1
                }
                try checkStopping()
                // A tombstone is written only while an older table (or an older run of this
                // flush) may hold its key; it leaves the resident index either way.
                let keepTombstones = olderTablesExist || !written.isEmpty
                if let table = try writeFlushTable(of: inputs[start..<end], keepingTombstones: keepTombstones, buffer: &buffer) {
                    written.append(table)
                    kept += Int(table.record.entryCount)
                }
                start = end
            }
            // A record left out because a later commit replaced it must not go with its segment
            // while that commit could still be lost (`.deferred`, `.none`): sync the log first.
            // Every such commit is appended already (the index names it), so this covers them.
            try writer.withLock { w throws(EngineError) in
                guard !w.closed else { throw Self.closedError }
                try syncIfNeeded(&w)
            }
        } catch {
            removeTableFiles(written.map(\.record.number))
            throw error
        }

        // 3. Switch: the new manifest lists the new tables first (newest first) and starts the
        // log at `boundary`.
        let old = compaction.withLock { $0.manifest }
        let manifest = Manifest(
            logStart: boundary, lastSequence: lastSequence, tables: written.reversed().map(\.record) + old.tables
        ).keepingClosedEnd(from: old)
        try installManifest(manifest, removingOnFailure: written.map(\.record.number))

        // 4. The tables answer for the flushed keys before they leave the resident index.
        state.withLock { s in s.tables.insert(contentsOf: written.reversed().map(\.table), at: 0) }
        // The index drops what lies in the flushed segments: the versions the tables hold (and
        // the tombstones left out). One walk in key order, ``moveBatchSize`` keys per hold.
        let flushedSegments = inputs.first!.key...inputs.last!.key
        var cursor: [UInt8]? = nil
        while true {
            let from = cursor
            let step = state.withLock { s in s.index.dropFlushed(in: flushedSegments, after: from, scanLimit: Self.moveBatchSize) }
            if step.atEnd { break }
            cursor = step.last
            // A mutex does not queue: released and retaken at once, it would stay with this
            // thread while a committer or reader waits. Step aside so the waiters get it.
            Syscall.pause(microseconds: Self.batchPauseMicroseconds)
        }
        let inputNumbers = inputs.map(\.key)
        state.withLock { s in
            for number in inputNumbers { s.files[number] = nil }
            s.index.forgetFiles(inputNumbers)
        }
        let tables = written.map(\.record)
        compaction.withLock { c in
            c.manifest = manifest
            c.segmentHintBytes = c.segmentHintBytes.filter { $0.key >= boundary }
            c.pendingSegmentHints.removeAll { $0 < boundary }
            c.flushBytesWritten += tables.reduce(0) { $0 + $1.length }
        }
        written = []
        var replaced = inputs.map { (name: SegmentFile.name($0.key), file: $0.value, companions: [SegmentHint.name($0.key)]) }
        inputs = []
        removeReplaced(&replaced)
        return StepResult(tables: tables, bytesBefore: bytesBefore, entriesWritten: kept)
    }

    // MARK: Merge

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

    private func merge(
        everything: Bool
    ) throws(EngineError) -> (StepResult, [(name: String, file: any StoreFile, companions: [String])])? {
        let tables = state.withLock { $0.tables }
        let inputRange: Range<Int>
        let level: UInt32
        if everything {
            // A lone table is rewritten only to drop its tombstones (an older table it hid keys
            // of is gone: salvage dropped it).
            if tables.count < 2 {
                guard let lone = tables.first, try Self.holdsTombstone(lone) else { return nil }
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
                let cursor = merge.tables[merge.source - 1]
                let dropped = droppingTombstones && cursor.storedValue.load(as: UInt8.self) == TableFormat.kindTombstone
                let entry = dropped ? nil : try cursor.entry()
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
        var manifestTables = compaction.withLock { $0.manifest.tables }
        let position = manifestTables.firstIndex { inputNumbers.contains($0.number) } ?? 0
        manifestTables.removeAll { inputNumbers.contains($0.number) }
        if let written { manifestTables.insert(written, at: position) }
        let manifest = compaction.withLock { c in
            Manifest(logStart: c.manifest.logStart, lastSequence: c.manifest.lastSequence, tables: manifestTables)
                .keepingClosedEnd(from: c.manifest)
        }
        try installManifest(manifest, removingOnFailure: written.map { [$0.number] } ?? [])
        state.withLock { s in
            s.tables.removeAll { inputNumbers.contains($0.number) }
            if let table { s.tables.insert(table, at: min(position, s.tables.count)) }
        }
        compaction.withLock { c in
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

    // MARK: Steps shared by flush and merge

    /// Writes a table of level `level` with `fill` (which adds its entries in key order) under a
    /// temporary name, renames it into place, syncs the directory and opens it. On failure,
    /// removes what it wrote.
    func writeTable(
        level: UInt32, _ fill: (inout TableWriter) throws(EngineError) -> Void
    ) throws(EngineError) -> (Manifest.Table, StoreTable) {
        let number = compaction.withLock { c in
            defer { c.nextTable += 1 }
            return c.nextTable
        }
        do throws(EngineError) {
            var writer = try TableWriter(number: number, level: level, directory: path, options: options, fileSystem: fileSystem)
            try fill(&writer)
            let record = try writer.finish()
            try checkStopping()
            try fileSystem.rename(writer.temporaryPath, to: writer.finalPath)
            try fileSystem.syncDirectory(path)
            let table = try StoreTable.open(record, directory: path, fileSystem: fileSystem, cache: tableCache)
            return (record, table)
        } catch {
            removeTableFiles([number])
            throw error
        }
    }

    /// Best-effort removal of tables `numbers` under temporary or final names (a step failed
    /// before its switch). Anything left is removed by the next open.
    private func removeTableFiles(_ numbers: [UInt64]) {
        let names = fileSystem.listNames(path)
        var removed = false
        for number in numbers {
            let name = TableFormat.name(number)
            for candidate in [name, name + LogFormat.temporarySuffix] where names.contains(candidate) {
                removed = (try? fileSystem.removeFile(path + "/" + candidate)) != nil || removed
            }
        }
        if removed { try? fileSystem.syncDirectory(path) }
    }

    /// Records at a clean close where the log ends (FORMAT.md, "Manifest": closed segment and
    /// length), when segment hints are off and nothing else would: the manifest is rewritten with
    /// the active segment and the end of its last commit frame. Best effort: on failure the
    /// temporary file is removed and the manifest stays as it was (open then cannot tell a newest
    /// segment cut short from a torn tail, as without the record).
    func recordLogEnd(segment: UInt64, length: UInt64, sequence: UInt64) {
        let temporary = path + "/" + LogFormat.manifestTemporaryName
        var manifest = compaction.withLock { $0.manifest }
        manifest.closedSegment = segment
        manifest.closedLength = length
        manifest.closedSequence = sequence
        do throws(EngineError) {
            try HintFile.writeSynced(manifest.encoded(), to: temporary, fileSystem: fileSystem)
            try fileSystem.rename(temporary, to: path + "/" + LogFormat.manifestName)
            try fileSystem.syncDirectory(path)
            compaction.withLock { $0.manifest = manifest }
        } catch {
            try? fileSystem.removeFile(temporary)
        }
    }

    /// Writes `manifest` to `MANIFEST-tmp`, syncs it, renames it over `MANIFEST` and syncs the
    /// directory: the atomic switch of a flush or merge. Before the rename, a failure removes the
    /// temporary file and the tables `removingOnFailure`, and the store goes on as it was; a failed
    /// rename or directory sync leaves which manifest is durable unknown, so the store stops
    /// writing and keeps every file until a reopen reads whichever survived.
    private func installManifest(_ manifest: Manifest, removingOnFailure tables: [UInt64]) throws(EngineError) {
        let temporary = path + "/" + LogFormat.manifestTemporaryName
        do throws(EngineError) {
            try checkStopping()
            try HintFile.writeSynced(manifest.encoded(), to: temporary, fileSystem: fileSystem)
        } catch {
            try? fileSystem.removeFile(temporary)
            removeTableFiles(tables)
            throw error
        }
        do throws(EngineError) {
            try fileSystem.rename(temporary, to: path + "/" + LogFormat.manifestName)
            try fileSystem.syncDirectory(path)
        } catch {
            writer.withLock { w in if w.failure == nil { w.failure = error } }
            throw error
        }
    }

    /// Removes the files a step replaced (each with its companions, such as a segment's hint),
    /// then syncs the directory (best effort: open removes whatever is left). A file nothing else
    /// holds is cut down first (``cutDown(_:)``).
    private func removeReplaced(_ replaced: inout [(name: String, file: any StoreFile, companions: [String])]) {
        // The step drops its own reference to each replaced file before looking whether anything
        // else (a scan, a read in flight) still holds it: the caller holds none but these.
        while !replaced.isEmpty {
            let (name, companions) = (replaced.last!.name, replaced.last!.companions)
            weak let heldElsewhere = replaced.removeLast().file
            if heldElsewhere == nil, !compaction.withLock({ $0.stopping }) { cutDown(path + "/" + name) }
            try? fileSystem.removeFile(path + "/" + name)
            for companion in companions { try? fileSystem.removeFile(path + "/" + companion) }
        }
        try? fileSystem.syncDirectory(path)
    }

    /// Frees the disk blocks of the replaced file at `path` a few MiB at a time, with a pause
    /// after each step, before it is removed. Called only when nothing in the store holds the file
    /// any more (a scan, or a read that found it before the switch, could still read any byte of
    /// it, so such a file is removed whole and freed when its last holder lets go), and not once
    /// `close()` has begun (it would wait for the cutting). A file with another name (a
    /// hard-linked backup) is left whole too: cutting acts on the file, not on the name. Another
    /// process that has the file open cannot be seen; it finds it shrinking.
    ///
    /// Why: on ext4, `unlink` frees all of a large file's blocks in one call, and a commit's
    /// `fdatasync` issued meanwhile waits until it returns. In steps, a commit waits for one step
    /// at most. The file is already outside the manifest, so a crash midway leaves a leftover that
    /// open removes, whatever its length. Best effort: a failure leaves the rest to `unlink`.
    private func cutDown(_ path: String) {
        guard let file = try? fileSystem.openFile(path, create: false), (try? file.linkCount()) == 1,
            var size = try? file.size()
        else { return }
        while size > 0 {
            size -= min(size, Self.releaseStepBytes)
            guard (try? file.truncate(to: size)) != nil else { return }
            Syscall.pause(microseconds: Self.releasePauseMicroseconds)
        }
    }

    // MARK: Blobs

    /// Removes blob files that no entry references (of the tail's index, or of a table, by the
    /// manifest's lists) and no commit in flight is writing. The references are read after a
    /// sync, so an overwrite that a power loss could still undo never costs the blob it replaced.
    /// Best effort: returns how many were removed.
    @discardableResult
    package func collectUnreferencedBlobs() -> Int {
        guard let names = try? fileSystem.listDirectory(blobDirectory) else { return 0 }
        let keep = try? writer.withLock { w throws(EngineError) -> Set<UInt64> in
            guard !w.closed, w.failure == nil else { throw Self.closedError }
            try syncIfNeeded(&w)
            var referenced = state.withLock { s in
                s.index.retiredBlobBytes = 0
                var ids = Set(s.index.blobs.values.map(\.id))
                for table in s.tables { ids.formUnion(table.record.blobIDs) }
                return ids
            }
            referenced.formUnion(blobIDs.withLock { $0.pending })
            return referenced
        }
        guard let keep else { return 0 }
        var removed = 0
        for name in names {
            guard let id = BlobFile.id(fromName: name), !keep.contains(id) else { continue }
            if (try? fileSystem.removeFile(blobDirectory + "/" + name)) != nil { removed += 1 }
        }
        if removed > 0 { try? fileSystem.syncDirectory(blobDirectory) }
        return removed
    }
}

extension FileSystem {
    /// The names in `directory`, or none when it cannot be listed.
    func listNames(_ directory: String) -> Set<String> {
        Set((try? listDirectory(directory)) ?? [])
    }
}
