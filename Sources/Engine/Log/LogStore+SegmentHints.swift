extension LogStore {
    /// Starts a background job that writes the hint files of the sealed segments waiting for one
    /// (``LogStore/Options/writesSegmentHints``). It reads each segment outside every lock and
    /// installs its hint under the compaction gate, so never during a compaction; it takes no new
    /// segment once ``close()`` has begun, and close waits for it to finish the one in hand.
    func scheduleSegmentHints() {
        guard options.writesSegmentHints else { return }
        let start = catalog.withLock { c -> Bool in
            guard !c.hintsScheduled, !c.stopping, !c.pendingSegmentHints.isEmpty else { return false }
            c.hintsScheduled = true
            return true
        }
        guard start else { return }
        // On the engine's own I/O threads, like every other blocking call made on a caller's behalf.
        IOThreads.shared.submit { self.writePendingSegmentHints() }
    }

    /// Writes the hint file of every sealed segment waiting for one, oldest first, and returns
    /// when none is left (or, unless `whileClosing`, once ``close()`` has begun: close then writes
    /// the rest itself). Best effort: a hint that cannot be written is left out, and open
    /// replays its segment. (The background job's body; tests call it directly to write hints at
    /// a known point.)
    ///
    /// Each hint is built outside the compaction gate (reading a segment takes a while, and a
    /// compaction must not wait for it, nor starve while segments keep being sealed) and
    /// installed under it, once it is known that the segment is still part of the log.
    package func writePendingSegmentHints(whileClosing: Bool = false) {
        hintJob.withLock { _ in drainSegmentHints(whileClosing: whileClosing) }
    }

    private func drainSegmentHints(whileClosing: Bool) {
        while true {
            let next = catalog.withLock { c -> UInt64? in
                guard whileClosing || !c.stopping, !c.pendingSegmentHints.isEmpty else {
                    c.hintsScheduled = false
                    return nil
                }
                return c.pendingSegmentHints.removeFirst()
            }
            guard let number = next else { return }
            let file = state.withLock { s in s.closed || number >= s.activeSegment ? nil : s.files[number] }
            // The store holds `file`, so a compaction meanwhile removes it whole, never cut short.
            guard let file, let bytes = segmentHintBytes(of: number, file) else { continue }
            compactionGate.withLock { _ in
                // Not compacted meanwhile. (Once close() has begun it waits for this job: see
                // `hintJob`.)
                if catalog.withLock({ number >= $0.manifest.logStart }) { installSegmentHint(bytes, of: number) }
            }
        }
    }

    /// Writes the hint of segment `number`'s first `length` bytes (all of a sealed segment's):
    /// ``segmentHintBytes(of:_:upTo:)``, then ``installSegmentHint(_:of:)``. The caller keeps
    /// compaction away (``close()`` does, for the active segment).
    func writeSegmentHint(of number: UInt64, _ file: any StoreFile, upTo length: UInt64? = nil) {
        if let bytes = segmentHintBytes(of: number, file, upTo: length) { installSegmentHint(bytes, of: number) }
    }

    /// The encoded hint of segment `number`'s first `length` bytes (all of a sealed segment's),
    /// reading only the frames its current hint does not cover; nil when that hint already covers
    /// them, or the segment cannot be read. `length` must not pass the synced part of the
    /// segment: a hint never describes frames a power loss could still take away.
    private func segmentHintBytes(of number: UInt64, _ file: any StoreFile, upTo length: UInt64? = nil) -> [UInt8]? {
        let hintPath = path + "/" + SegmentHint.name(number)
        guard let end = length ?? (try? file.size()) else { return nil }
        var previous: SegmentHint?
        if let hintFile = try? fileSystem.openFile(hintPath, create: false),
            let hint = try? SegmentHint.load(hintFile, number: number, fileSize: end, isNewest: true, firstSequence: nil),
            (try? hint.checkLastFrame(in: file)) != nil
        {
            if hint.coveredLength == end { return nil }  // nothing new to describe
            previous = hint
        }
        return try? SegmentHint.build(from: file, number: number, upTo: end, extending: previous).encoded()
    }

    /// Writes a hint under a temporary name, syncs it, renames it into place and syncs the
    /// directory: a hint that open finds is always whole (FORMAT.md, "Segment hint files").
    /// Best effort: on failure the temporary file is removed and open replays the segment.
    private func installSegmentHint(_ bytes: [UInt8], of number: UInt64) {
        let hintPath = path + "/" + SegmentHint.name(number)
        let temporary = hintPath + LogFormat.temporarySuffix
        do throws(EngineError) {
            try HintFile.writeSynced(bytes, to: temporary, fileSystem: fileSystem)
            try fileSystem.rename(temporary, to: hintPath)
            try fileSystem.syncDirectory(path)
            catalog.withLock { $0.segmentHintBytes[number] = UInt64(bytes.count) }
        } catch {
            try? fileSystem.removeFile(temporary)
        }
    }
}
