import Synchronization

extension LogStore {
    /// The most bytes of entries a flush holds at a time (FORMAT.md, "Flush"): keys, inline
    /// values and the entries' own fixed size (``KeyDirectory/FlushEntry/bufferedBytes``), taken
    /// from the tail's index in key order one window at a time and written before the next
    /// (a window holds one entry even when that one alone is larger). Besides a window, a flush
    /// holds one log block at a time, stored and inflated, while it copies the window's values
    /// out of it, and the table writer's data block, filter and index. So what a flush buffers
    /// is bounded by this figure and one log block, not by the size of the run it flushes.
    static var flushWindowBytes: Int { 8 << 20 }

    /// The bound a flush keeps its buffered bytes under: ``flushWindowBytes`` unless a test set
    /// another.
    var flushWindowBytes: Int { testHooks.flushWindowBytes ?? Self.flushWindowBytes }

    /// The bytes a flush holds in windows and log blocks, counted as it takes and lets go of
    /// them, and the most it has held since the count was last reset.
    struct FlushBuffer {
        private(set) var bytes = 0
        private(set) var peak = 0

        mutating func take(_ count: Int) {
            bytes += count
            peak = max(peak, bytes)
        }

        mutating func release(_ count: Int) { bytes -= count }
    }

    /// One window of a flush: entries in key order, each with its inline value once read.
    private struct FlushWindow {
        var entries: [KeyDirectory.FlushEntry] = []
        var values: [[UInt8]] = []
        /// ``KeyDirectory/FlushEntry/bufferedBytes`` of `entries`.
        var bytes = 0
    }

    /// Where a flush's walk over the index has got to, for one run of segments.
    private struct FlushWalk {
        let segments: ClosedRange<UInt64>
        let tombstones: Bool
        var cursor: [UInt8]? = nil
        var atEnd = false
    }

    /// Writes the current entries of the run of sealed segments `run` (ascending, consecutive)
    /// as one level-0 table, streamed (FORMAT.md, "Flush", step 2): the tail's index is walked in
    /// key order, a window of at most ``flushWindowBytes`` of entries at a time (the index lock
    /// taken for ``moveBatchSize`` keys at a time), each window's values read from their log
    /// blocks (each block read, verified and inflated once per window that needs it, and let go
    /// of once its values are copied out), then written. Tombstones are written only when
    /// `keepingTombstones`. Returns nil when there is nothing to write (no table then).
    ///
    /// A commit made meanwhile is never lost: it goes to a newer segment, which this walk skips,
    /// and the version it replaces may or may not be written (as it was when the walk reached its
    /// key); either way the tail keeps the newer version, and the index drops only what lies in
    /// the flushed segments (``KeyDirectory/dropFlushed(in:after:scanLimit:)``).
    func writeFlushTable(
        of run: ArraySlice<(key: UInt64, value: any StoreFile)>, keepingTombstones: Bool, buffer: inout FlushBuffer
    ) throws(EngineError) -> (record: Manifest.Table, table: StoreTable)? {
        guard let first = run.first?.key, let last = run.last?.key else { return nil }
        var files: [UInt64: any StoreFile] = [:]
        for (number, file) in run { files[number] = file }
        var walk = FlushWalk(segments: first...last, tombstones: keepingTombstones)
        guard var window = try nextFlushWindow(&walk, files: files, buffer: &buffer) else { return nil }
        do throws(EngineError) {
            return try writeTable(level: 0) { (writer: inout TableWriter) throws(EngineError) in
                while true {
                    for (index, entry) in window.entries.enumerated() {
                        let value: TableEntry.Value =
                            if entry.location.isTombstone {
                                .tombstone
                            } else if entry.location.isBlob, let blob = entry.blob {
                                .blob(blob)
                            } else {
                                .value(window.values[index])
                            }
                        try writer.add(TableEntry(key: entry.key, sequence: entry.location.sequence, value: value))
                    }
                    buffer.release(window.bytes)
                    window = FlushWindow()
                    testHooks.afterFlushWindow?()
                    try checkStopping()
                    guard let next = try nextFlushWindow(&walk, files: files, buffer: &buffer) else { return }
                    window = next
                }
            }
        } catch {
            buffer.release(window.bytes)
            throw error
        }
    }

    /// The walk's next window, its values read; nil once the walk has passed the index's last key
    /// with nothing more to write.
    private func nextFlushWindow(
        _ walk: inout FlushWalk, files: [UInt64: any StoreFile], buffer: inout FlushBuffer
    ) throws(EngineError) -> FlushWindow? {
        var window = FlushWindow()
        let budget = flushWindowBytes
        while !walk.atEnd {
            let (segments, tombstones, cursor, holding) = (walk.segments, walk.tombstones, walk.cursor, window.bytes)
            let found = state.withLock { s in
                s.index.flushEntries(
                    after: cursor, in: segments, tombstones: tombstones, holding: holding, byteBudget: budget,
                    scanLimit: Self.moveBatchSize)
            }
            walk.cursor = found.last
            walk.atEnd = found.atEnd
            let bytes = found.entries.reduce(0) { $0 + $1.bufferedBytes }
            buffer.take(bytes)
            window.bytes += bytes
            window.entries += found.entries
            if found.full { break }
            // A mutex does not queue: released and retaken at once, it would stay with this
            // thread while a committer or reader waits. Step aside so the waiters get it.
            if !walk.atEnd { Syscall.pause(microseconds: Self.batchPauseMicroseconds) }
        }
        guard !window.entries.isEmpty else { return nil }
        do throws(EngineError) {
            try readValues(of: &window, files: files, buffer: &buffer)
        } catch {
            buffer.release(window.bytes)
            throw error
        }
        return window
    }

    /// Reads the inline values of `window`'s entries, block by block in file order: each block
    /// read with one `pread`, its crc32 checked and inflated once, its values copied out, and let
    /// go of before the next.
    private func readValues(of window: inout FlushWindow, files: [UInt64: any StoreFile], buffer: inout FlushBuffer) throws(EngineError) {
        window.values = Array(repeating: [], count: window.entries.count)
        if window.entries.contains(where: { $0.location.isBlob && $0.blob == nil }) {
            throw .corruption("the tail's index names a blob it does not hold", path: path, offset: 0)
        }
        let inline = window.entries.indices.filter { index in
            !window.entries[index].location.isTombstone && !window.entries[index].location.isBlob
        }.sorted { a, b in
            let (x, y) = (window.entries[a].location, window.entries[b].location)
            return (x.segment, x.blockOffset, x.valueOffset) < (y.segment, y.blockOffset, y.valueOffset)
        }
        var start = 0
        while start < inline.count {
            let location = window.entries[inline[start]].location
            var end = start + 1
            while end < inline.count, window.entries[inline[end]].location.segment == location.segment,
                window.entries[inline[end]].location.blockOffset == location.blockOffset
            {
                end += 1
            }
            guard let file = files[location.segment] else {
                throw .corruption("the tail's index names segment \(location.segment), which is not open", path: path, offset: 0)
            }
            // The stored block, held while it is read and inflated.
            let length = Int(location.blockLength)
            buffer.take(length)
            let raw: [UInt8]
            do throws(EngineError) {
                raw = try readBlock(at: location, from: file)
            } catch {
                buffer.release(length)
                throw error
            }
            buffer.take(raw.count)
            defer { buffer.release(length + raw.count) }
            for index in inline[start..<end] {
                let location = window.entries[index].location
                let from = Int(location.valueOffset)
                let to = from + Int(location.valueLength)
                guard to <= raw.count else {
                    throw .corruption("value lies past the end of its block", path: file.path, offset: location.blockOffset)
                }
                window.values[index] = Array(raw[from..<to])
            }
            start = end
        }
    }
}

extension LogStore {

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
        var bytesBefore = catalog.withLock { c in c.segmentHintBytes.filter { $0.key < boundary }.values.reduce(0, +) }
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
        let old = catalog.withLock { $0.manifest }
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
        catalog.withLock { c in
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
}
