import Dispatch

extension LogStore {
    /// Compacts the store now, on the calling thread, and returns what it did.
    ///
    /// Compaction (FORMAT.md, "Compaction") seals the active segment, rewrites the live records
    /// of every older segment and pack into new pack files — in key order, so the records of one
    /// key prefix sit together, in compressed blocks — with a hint file beside each, switches to
    /// them by installing a new manifest, removes the old files, then removes blob files no key
    /// references. Nothing visible changes: every read before, during and after sees the same
    /// contents. Commits and reads on other threads go on meanwhile; they wait only for short
    /// steps (sealing the segment, and index updates in batches of ``moveBatchSize`` keys).
    ///
    /// When this returns, the new manifest and packs are durable. A crash at any point leaves the
    /// old state or the new one, and the next open removes what the other left behind.
    ///
    /// - Throws: ``EngineError``. Before the manifest is replaced, a failure removes what the
    ///   compaction wrote and leaves the store as it was. Should the manifest's rename, or the
    ///   directory sync after it, fail, which state is durable is unknown: the store turns
    ///   read-only (``EngineError/Code/readOnly``) and keeps every file either state needs;
    ///   reopen it. ``EngineError/Code/closed`` when ``close()`` interrupts it.
    @discardableResult
    public func compact() throws(EngineError) -> Statistics.Compaction {
        // It runs at the caller's CPU priority: a lowered one (nice) was tried, and made things
        // worse, as a preempted compaction thread holding the index lock stalls every reader.
        try compactionGate.withLock { _ throws(EngineError) in try compactNow() }
    }

    /// Keys moved to their new location per hold of the index lock.
    static var moveBatchSize: Int { 1024 }
    /// The pause between two such holds, in which waiting committers and readers take the lock.
    static var batchPauseMicroseconds: Int { 50 }
    /// A replaced file nobody else holds is cut down by this much at a time before it is removed.
    static var releaseStepBytes: UInt64 { 4 << 20 }
    /// The pause after each such cut.
    static var releasePauseMicroseconds: Int { 1000 }

    /// Starts a compaction in the background when ``LogStore/Options/compaction`` says one is due: at least
    /// ``LogStore/CompactionPolicy/minimumBytes`` of record bytes in the files but the active segment, at
    /// least ``LogStore/CompactionPolicy/deadRatio`` of them dead. Called after each successful commit.
    func scheduleCompactionIfDue() {
        let policy = options.compaction
        guard policy.isAutomatic else { return }
        let due = state.withLock { s -> Bool in
            var live = 0
            var dead = Int(s.index.retiredBlobBytes)  // replaced blobs wait for a compaction too
            for (file, usage) in s.index.usage where file != s.activeSegment {
                live += usage.liveBytes
                dead += usage.deadBytes
            }
            let total = live + dead
            return total > 0 && total >= policy.minimumBytes && Double(dead) >= policy.deadRatio * Double(total)
        }
        guard due else { return }
        let start = compaction.withLock { c -> Bool in
            guard !c.scheduled, !c.stopping, c.automaticFailure == nil else { return false }
            c.scheduled = true
            return true
        }
        guard start else { return }
        DispatchQueue.global(qos: .utility).async {
            var failure: EngineError?
            do throws(EngineError) {
                try self.compact()
            } catch {
                failure = error
            }
            self.compaction.withLock { c in
                c.scheduled = false
                // Do not retry on every commit: automatic compaction waits for a reopen.
                if let failure, failure.code != .closed { c.automaticFailure = failure }
            }
        }
    }

    private func checkStopping() throws(EngineError) {
        if compaction.withLock({ $0.stopping }) { throw Self.closedError }
    }

    private func compactNow() throws(EngineError) -> Statistics.Compaction {
        let clock = ContinuousClock()
        let started = clock.now
        try checkStopping()

        // 1. Seal the active segment: everything written so far becomes an input, durably.
        // The inputs are listed under the same writer lock: once it is released, commits may
        // fill segment `boundary` and roll over again, and no segment from `boundary` on may
        // ever be an input.
        var (boundary, lastSequence, inputs) = try writer.withLock {
            w throws(EngineError) -> (UInt64, UInt64, [(key: UInt64, value: any StoreFile)]) in
            guard !w.closed else { throw Self.closedError }
            if let failure = w.failure { throw Self.readOnlyError(after: failure) }
            if w.writeOffset > UInt64(LogFormat.segmentHeaderSize) {
                try rollOver(&w)
            } else {
                try syncIfNeeded(&w)
            }
            let boundary = w.activeNumber
            let inputs = state.withLock { s in
                s.files.filter { PackFile.isPack($0.key) || $0.key < boundary }.sorted { $0.key < $1.key }
            }
            return (boundary, w.nextSequence - 1, inputs)
        }
        guard !inputs.isEmpty else {
            let report = Statistics.Compaction(
                duration: clock.now - started, bytesBefore: 0, bytesAfter: 0, recordsWritten: 0, packsWritten: 0,
                blobsRemoved: collectUnreferencedBlobs())
            compaction.withLock { $0.last = report }
            return report
        }
        var bytesBefore = compaction.withLock { c in
            c.hintBytes.values.reduce(0, +) + c.segmentHintBytes.filter { $0.key < boundary }.values.reduce(0, +)
        }
        for (_, file) in inputs { bytesBefore += try file.size() }

        // 2. Copy the live records into new packs (temporary names until all are written).
        var run = CompactionRun(store: self)
        let newFiles: [(UInt64, any StoreFile)]
        do throws(EngineError) {
            for (id, file) in inputs {
                try checkStopping()
                if PackFile.isPack(id) {
                    try PackFile.forEachBlock(of: file, number: PackFile.number(ofFileID: id)) {
                        blockOffset, _, raw, records throws(EngineError) in
                        try run.collect(raw: raw, records: records, file: id, blockOffset: blockOffset)
                    }
                } else {
                    var reader = try LogReader(file: file, segmentNumber: id, isNewest: false)
                    _ = try reader.readHeader()
                    while let frame = try reader.nextFrame() {
                        if frame.isClose { continue }
                        _ = try CommitDecoding.records(inPayload: frame.payload, frameOffset: frame.offset, path: file.path) {
                            raw, records throws(EngineError) in
                            let blockOffset = frame.offset + UInt64(records.first!.blockOffset)
                            try run.collect(raw: raw, records: Array(records), file: id, blockOffset: blockOffset)
                        }
                    }
                }
            }
            try run.flush()
            try checkStopping()
            try run.renameIntoPlace()
            newFiles = try run.openFinishedPacks()
        } catch {
            run.removeWrittenFiles()
            throw error
        }

        // 3. Switch: the new manifest names the new packs and the first segment after them.
        let manifest = Manifest(
            logStart: boundary, lastSequence: lastSequence, packs: run.packs.map(\.number),
            packSizes: run.packs.map(\.packBytes))
        let temporary = path + "/" + LogFormat.manifestTemporaryName
        do throws(EngineError) {
            try HintFile.writeSynced(manifest.encoded(), to: temporary, fileSystem: fileSystem)
        } catch {
            try? fileSystem.removeFile(temporary)
            run.removeWrittenFiles()
            throw error
        }
        do throws(EngineError) {
            try fileSystem.rename(temporary, to: path + "/" + LogFormat.manifestName)
            try fileSystem.syncDirectory(path)
        } catch {
            // The rename may have happened (even when it reports an error), and may or may not be
            // durable; both states are whole on disk. Stop writing and keep every file until a
            // reopen reads whichever manifest survived.
            writer.withLock { w in if w.failure == nil { w.failure = error } }
            throw error
        }

        // 4. Point the index at the new packs, in batches, then drop the old files.
        state.withLock { s in
            for (id, file) in newFiles {
                s.files[id] = file
                s.index.noteSegment(id)
            }
        }
        var moved = 0
        for pack in run.packs {
            var start = 0
            while start < pack.entries.count {
                let end = min(start + Self.moveBatchSize, pack.entries.count)
                moved += state.withLock { s in
                    var count = 0
                    for i in start..<end where s.index.move(pack.entries[i].key, from: pack.oldLocations[i], to: pack.entries[i].location) {
                        count += 1
                    }
                    return count
                }
                start = end
                // A mutex does not queue: released and retaken at once, it would stay with this
                // thread while a committer or reader waits. Step aside so the waiters get it.
                Syscall.pause(microseconds: Self.batchPauseMicroseconds)
            }
        }
        let inputIDs = inputs.map(\.key)
        state.withLock { s in
            for id in inputIDs { s.files[id] = nil }
            s.index.forgetFiles(inputIDs)
        }
        compaction.withLock { c in
            c.manifest = manifest
            c.hintBytes = Dictionary(uniqueKeysWithValues: run.packs.map { ($0.number, $0.hintBytes) })
            c.segmentHintBytes = c.segmentHintBytes.filter { $0.key >= boundary }
        }
        // The compaction drops its own reference to each replaced file before looking whether
        // anything else (a scan, a read in flight) still holds it.
        var replaced = inputs
        inputs = []
        while !replaced.isEmpty {
            var (id, file): (UInt64, (any StoreFile)?) = replaced.removeLast()
            weak let heldElsewhere = file
            file = nil
            let name = PackFile.isPack(id) ? PackFile.name(PackFile.number(ofFileID: id)) : SegmentFile.name(id)
            if heldElsewhere == nil, !compaction.withLock({ $0.stopping }) { cutDown(path + "/" + name) }
            try? fileSystem.removeFile(path + "/" + name)
            let hint = PackFile.isPack(id) ? PackFile.hintName(PackFile.number(ofFileID: id)) : SegmentHint.name(id)
            try? fileSystem.removeFile(path + "/" + hint)
        }
        try? fileSystem.syncDirectory(path)

        // 5. Collect blobs that no key references any more.
        let blobsRemoved = collectUnreferencedBlobs()

        let report = Statistics.Compaction(
            duration: clock.now - started, bytesBefore: bytesBefore,
            bytesAfter: run.packs.reduce(0) { $0 + $1.packBytes + $1.hintBytes },
            recordsWritten: moved, packsWritten: run.packs.count, blobsRemoved: blobsRemoved)
        compaction.withLock { $0.last = report }
        return report
    }

    /// Frees the disk blocks of the replaced file at `path` a few MiB at a time, with a pause
    /// after each step, before it is removed. Called only when nothing in the store holds the file
    /// any more (a scan, or a read that found its location before the index moved on, could still
    /// read any byte of it, so such a file is removed whole and freed when its last holder lets
    /// go), and not once `close()` has begun (it would wait for the cutting). A file with another
    /// name (a hard-linked backup) is left whole too: cutting acts on the file, not on the name.
    /// Another process that has the file open cannot be seen; it finds it shrinking.
    ///
    /// Why: on ext4, `unlink` frees all of a 64 MiB file's blocks in one call (12–16 ms here), and
    /// a commit's `fdatasync` issued meanwhile waits until it returns: the longest commit waits
    /// of a compaction came from these removals. In steps, a commit waits for one step at most.
    /// The file is already outside the manifest, so a crash midway leaves a leftover that open
    /// removes, whatever its length. Best effort: a failure leaves the rest to `unlink`.
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

    /// Removes blob files that no live key references and no commit in flight is writing. The
    /// references are read after a sync, so an overwrite that a power loss could still undo never
    /// costs the blob it replaced. Best effort: returns how many were removed.
    @discardableResult
    package func collectUnreferencedBlobs() -> Int {
        guard let names = try? fileSystem.listDirectory(blobDirectory) else { return 0 }
        let keep = try? writer.withLock { w throws(EngineError) -> Set<UInt64> in
            guard !w.closed, w.failure == nil else { throw Self.closedError }
            try syncIfNeeded(&w)
            let referenced = state.withLock { s in
                s.index.retiredBlobBytes = 0
                return Set(s.index.blobs.values.map(\.id))
            }
            return referenced.union(blobIDs.withLock { $0.pending })
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

/// The live records a compaction has found, cut into packs of about a segment's size: each run
/// is sorted by key and written as one pack with its hint file.
struct CompactionRun {
    struct Pack {
        var number: UInt64
        var entries: [IndexEntry]
        /// Where each entry's record was before (parallel to `entries`): it moves only if the
        /// index still points there.
        var oldLocations: [Location]
        var packBytes: UInt64
        var hintBytes: UInt64
    }

    private struct Record {
        var key: [UInt8]
        var old: Location
        var value: [UInt8]
        var blob: BlobReference?
    }

    let store: LogStore
    private var records: [Record] = []
    private var recordBytes = 0
    private(set) var packs: [Pack] = []
    /// Every pack number taken, for clean-up on failure.
    private var numbers: [UInt64] = []

    init(store: LogStore) { self.store = store }

    /// Keeps the records of one verified block that are still the current version of their key.
    mutating func collect(raw: [UInt8], records blockRecords: [RecordPlacement], file: UInt64, blockOffset: UInt64) throws(EngineError) {
        let live = store.state.withLock { s -> [(Int, Location)] in
            var live: [(Int, Location)] = []
            for (i, record) in blockRecords.enumerated() where record.valueLength != nil {
                if let location = s.index[record.key], location.segment == file, location.blockOffset == blockOffset,
                    location.valueOffset == UInt32(record.valueOffset)
                {
                    live.append((i, location))
                }
            }
            return live
        }
        for (i, location) in live {
            let record = blockRecords[i]
            let value = record.blob == nil
                ? Array(raw[record.valueOffset..<record.valueOffset + record.valueLength!]) : []
            records.append(Record(key: record.key, old: location, value: value, blob: record.blob))
            recordBytes += record.key.count + value.count + 48
        }
        if recordBytes >= store.options.segmentSize { try flush() }
    }

    /// Writes the records gathered so far as one pack (sorted by key) and its hint file.
    mutating func flush() throws(EngineError) {
        guard !records.isEmpty else { return }
        records.sort { compareBytes($0.key, $1.key) < 0 }
        let number = store.compaction.withLock { c in
            defer { c.nextPack += 1 }
            return c.nextPack
        }
        numbers.append(number)
        var writer = try PackWriter(
            number: number, directory: store.path, level: store.options.compressionLevel,
            blockSize: store.options.blockSize, fileSystem: store.fileSystem)
        for record in records {
            try writer.add(key: record.key, sequence: record.old.sequence, value: record.value[...], blob: record.blob)
        }
        let entries = try writer.finish()
        let hint = try HintFile.writeTemporary(
            entries, packNumber: number, directory: store.path, fileSystem: store.fileSystem)
        packs.append(Pack(
            number: number, entries: entries, oldLocations: records.map(\.old), packBytes: writer.size,
            hintBytes: hint.size))
        records.removeAll()
        recordBytes = 0
    }

    /// Renames every pack and hint to its final name and syncs the directory.
    func renameIntoPlace() throws(EngineError) {
        for pack in packs {
            for name in [PackFile.name(pack.number), PackFile.hintName(pack.number)] {
                try store.fileSystem.rename(store.path + "/" + name + LogFormat.temporarySuffix, to: store.path + "/" + name)
            }
        }
        try store.fileSystem.syncDirectory(store.path)
    }

    /// Opens the finished packs by their final names (the writer's handle carries the temporary
    /// name, which errors would report).
    func openFinishedPacks() throws(EngineError) -> [(UInt64, any StoreFile)] {
        var files: [(UInt64, any StoreFile)] = []
        for pack in packs {
            let path = store.path + "/" + PackFile.name(pack.number)
            files.append((PackFile.fileID(pack.number), try store.fileSystem.openFile(path, create: false)))
        }
        return files
    }

    /// Best-effort removal of whatever this compaction wrote, under temporary or final names (it
    /// failed before the switch). Anything left is removed by the next open.
    func removeWrittenFiles() {
        let names = store.fileSystem.listNames(store.path)
        var removed = false
        for number in numbers {
            for name in [PackFile.name(number), PackFile.hintName(number)] {
                for candidate in [name, name + LogFormat.temporarySuffix] where names.contains(candidate) {
                    removed = (try? store.fileSystem.removeFile(store.path + "/" + candidate)) != nil || removed
                }
            }
        }
        if removed { try? store.fileSystem.syncDirectory(store.path) }
    }
}

extension FileSystem {
    /// The names in `directory`, or none when it cannot be listed.
    func listNames(_ directory: String) -> Set<String> {
        Set((try? listDirectory(directory)) ?? [])
    }
}
