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
    /// added). Called after each rollover, at open, and by the background job itself when it ends:
    /// segments sealed while it ran (their rollover found it busy) start the next flush at once,
    /// rather than waiting for a rollover that a quiet store may not make.
    ///
    /// It also keeps the sealed tail within its bound under any commit load: while the sealed
    /// segments hold at least ``stallBytes`` and a flush job is scheduled or running, commits
    /// wait (``TailStall``) until that job has flushed them.
    func scheduleFlushIfDue() {
        let policy = options.compaction
        guard policy.isAutomatic else { return }
        let sealed = sealedTailBytes()
        let due = sealed >= UInt64(policy.flushBytes)
        let mergeDue = !due && isMergeDue()
        let start = catalog.withLock { c -> Bool in
            let start = (due || mergeDue) && !c.scheduled && !c.stopping && c.automaticFailure == nil
            if start { c.scheduled = true }
            tailStall.set(c.scheduled && !c.stopping && c.automaticFailure == nil && sealed >= stallBytes)
            return start
        }
        guard start else { return }
        DispatchQueue.global(qos: .utility).async {
            var failure: EngineError?
            do throws(EngineError) {
                try self.compactionGate.withLock { _ throws(EngineError) in
                    try self.checkStopping()
                    // A flush, then one merge at a time, with a flush between any two when the
                    // segments sealed meanwhile are due: commits held at the tail's bound wait
                    // for a flush and at most one merge, not for a chain of merges.
                    var flushing = due
                    while true {
                        if flushing {
                            _ = try self.flushNow(sealingActive: false)
                            self.updateTailStall()
                        }
                        let merged = try self.mergeNow(everything: false) != nil
                        try self.checkStopping()
                        flushing = self.sealedTailBytes() >= UInt64(policy.flushBytes)
                        if !merged && !flushing { break }
                    }
                }
            } catch {
                failure = error
            }
            self.catalog.withLock { c in
                c.scheduled = false
                // Do not retry on every commit: automatic flushing waits for a reopen.
                if let failure, failure.code != .closed { c.automaticFailure = failure }
                // No job runs now: no commit may wait (the look below may stall them again).
                self.tailStall.set(false)
            }
            // A failure or close stops here (the guard above refuses); otherwise the tail sealed
            // meanwhile is looked at again.
            if failure == nil { self.scheduleFlushIfDue() }
        }
    }

    /// The sealed tail's bound: commits wait while the sealed segments hold this much and a
    /// flush is under way. ``LogStore/CompactionPolicy/flushBytes`` plus one segment: the flush
    /// starts at `flushBytes`, and the commits meanwhile may seal one more segment before they
    /// wait (each commit past the check seals at most one).
    var stallBytes: UInt64 { UInt64(options.compaction.flushBytes) + UInt64(options.segmentSize) }

    /// The sealed segments' bytes (the active one excluded).
    func sealedTailBytes() -> UInt64 {
        state.withLock { s -> UInt64 in
            var sealed: UInt64 = 0
            for (number, file) in s.files where number < s.activeSegment { sealed += (try? file.size()) ?? 0 }
            return sealed
        }
    }

    /// After a background flush: lifts the stall if the flush brought the sealed tail below
    /// its bound (the job is still scheduled; it looks again when it ends).
    private func updateTailStall() {
        let sealed = sealedTailBytes()
        catalog.withLock { c in
            tailStall.set(c.scheduled && !c.stopping && c.automaticFailure == nil && sealed >= stallBytes)
        }
    }

    func checkStopping() throws(EngineError) {
        if catalog.withLock({ $0.stopping && !$0.flushingAtClose }) { throw Self.closedError }
    }

    /// At close, once background compaction has stopped: flushes the whole tail (sealing the
    /// active segment) when the policy is automatic, no automatic flush or merge has failed, and
    /// the tail's segments hold at least ``LogStore/CompactionPolicy/flushAtCloseBytes``; then
    /// runs every merge due, so that each level holds fewer than
    /// ``LogStore/CompactionPolicy/mergeFanIn`` tables (at most `(mergeFanIn − 1) × levels`
    /// tables are left). Best effort: a failure before the manifest's switch leaves the tail as it was (the next open
    /// reads it as it would have), one after leaves the store read-only, as any flush's.
    func flushAtClose() {
        let policy = options.compaction
        guard policy.isAutomatic, catalog.withLock({ $0.automaticFailure == nil }) else { return }
        let tailBytes = writer.withLock { w -> UInt64? in
            guard !w.closed, w.failure == nil else { return nil }
            let sealed = state.withLock { s in
                s.files.reduce(UInt64(0)) { $0 + ($1.key < w.activeNumber ? ((try? $1.value.size()) ?? 0) : 0) }
            }
            return sealed + w.writeOffset - UInt64(LogFormat.segmentHeaderSize)
        }
        guard let tailBytes else { return }
        compactionGate.withLock { _ in
            catalog.withLock { $0.flushingAtClose = true }
            defer { catalog.withLock { $0.flushingAtClose = false } }
            if tailBytes >= UInt64(policy.flushAtCloseBytes) {
                guard (try? flushNow(sealingActive: true)) != nil else { return }
            }
            // Then the merges due (the flush's table, or those close interrupted), so that close
            // leaves every level with fewer than mergeFanIn tables. Best effort, as the flush.
            while (try? mergeNow(everything: false)) != nil {}
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
        let bytesBefore = statistics.bytesOnDisk
        let flush = try flushNow(sealingActive: true)
        var tablesWritten = flush.tables.count
        var recordsWritten = flush.entriesWritten
        try checkStopping()
        if let merge = try mergeNow(everything: true) {
            tablesWritten += merge.tables.count
            recordsWritten = merge.entriesWritten
        }
        let blobsRemoved = collectUnreferencedBlobs()
        let report = Statistics.Compaction(
            duration: clock.now - started, bytesBefore: bytesBefore, bytesAfter: statistics.bytesOnDisk,
            recordsWritten: recordsWritten, tablesWritten: tablesWritten, blobsRemoved: blobsRemoved)
        catalog.withLock { $0.last = report }
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

    // MARK: Steps shared by flush and merge

    /// Writes a table of level `level` with `fill` (which adds its entries in key order) under a
    /// temporary name (its partitions waiting in a scratch file once they pass 1 MiB:
    /// ``TableWriter``), renames it into place, syncs the directory and opens it. On failure,
    /// removes what it wrote.
    func writeTable(
        level: UInt32, _ fill: (inout TableWriter) throws(EngineError) -> Void
    ) throws(EngineError) -> (Manifest.Table, StoreTable) {
        let number = catalog.withLock { c in
            defer { c.nextTable += 1 }
            return c.nextTable
        }
        do throws(EngineError) {
            var limits = TableWriter.Limits()
            if let bytes = testHooks.tablePartitionBytes { limits.partitionSize = bytes }
            if let bytes = testHooks.tableSpillBytes { limits.spillBytes = bytes }
            if let bytes = testHooks.tableCopyBytes { limits.copyBytes = bytes }
            var writer = try TableWriter(
                number: number, level: level, directory: path, options: options, fileSystem: fileSystem, limits: limits)
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

    /// Best-effort removal of tables `numbers` under temporary or final names, and their
    /// partitions scratch files (a step failed before its switch). Anything left is removed by
    /// the next open.
    func removeTableFiles(_ numbers: [UInt64]) {
        let names = fileSystem.listNames(path)
        var removed = false
        for number in numbers {
            let name = TableFormat.name(number)
            for candidate in [name, name + LogFormat.temporarySuffix, TableFormat.scratchName(number)] where names.contains(candidate) {
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
        var manifest = catalog.withLock { $0.manifest }
        manifest.closedSegment = segment
        manifest.closedLength = length
        manifest.closedSequence = sequence
        do throws(EngineError) {
            try HintFile.writeSynced(manifest.encoded(), to: temporary, fileSystem: fileSystem)
            try fileSystem.rename(temporary, to: path + "/" + LogFormat.manifestName)
            try fileSystem.syncDirectory(path)
            catalog.withLock { $0.manifest = manifest }
        } catch {
            try? fileSystem.removeFile(temporary)
        }
    }

    /// Writes `manifest` to `MANIFEST-tmp`, syncs it, renames it over `MANIFEST` and syncs the
    /// directory: the atomic switch of a flush or merge. Before the rename, a failure removes the
    /// temporary file and the tables `removingOnFailure`, and the store goes on as it was; a failed
    /// rename or directory sync leaves which manifest is durable unknown, so the store stops
    /// writing and keeps every file until a reopen reads whichever survived.
    func installManifest(_ manifest: Manifest, removingOnFailure tables: [UInt64]) throws(EngineError) {
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
    func removeReplaced(_ replaced: inout [(name: String, file: any StoreFile, companions: [String])]) {
        // The step drops its own reference to each replaced file before looking whether anything
        // else (a scan, a read in flight) still holds it: the caller holds none but these.
        while !replaced.isEmpty {
            let (name, companions) = (replaced.last!.name, replaced.last!.companions)
            weak let heldElsewhere = replaced.removeLast().file
            if heldElsewhere == nil, !catalog.withLock({ $0.stopping }) { cutDown(path + "/" + name) }
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
    func cutDown(_ path: String) {
        guard let file = try? fileSystem.openFile(path, create: false), (try? file.linkCount()) == 1,
            var size = try? file.size()
        else { return }
        while size > 0 {
            size -= min(size, Self.releaseStepBytes)
            guard (try? file.truncate(to: size)) != nil else { return }
            Syscall.pause(microseconds: Self.releasePauseMicroseconds)
        }
    }
}

extension FileSystem {
    /// The names in `directory`, or none when it cannot be listed.
    func listNames(_ directory: String) -> Set<String> {
        Set((try? listDirectory(directory)) ?? [])
    }
}
