import Dispatch

extension LogStore {
    /// Starts a background job that writes the hint files of the sealed segments waiting for one
    /// (``LogStore/Options/writesSegmentHints``). It runs under the compaction gate, so never at
    /// the same time as a compaction, and ``close()`` waits for the hint being written.
    func scheduleSegmentHints() {
        guard options.writesSegmentHints else { return }
        let start = compaction.withLock { c -> Bool in
            guard !c.hintsScheduled, !c.stopping, !c.pendingSegmentHints.isEmpty else { return false }
            c.hintsScheduled = true
            return true
        }
        guard start else { return }
        DispatchQueue.global(qos: .utility).async { self.writePendingSegmentHints() }
    }

    /// Writes the hint file of every sealed segment waiting for one, oldest first, and returns
    /// when none is left (or ``close()`` has begun). Best effort: a hint that cannot be written
    /// is left out, and open replays its segment. (The background job's body; tests call it
    /// directly to write hints at a known point.)
    package func writePendingSegmentHints() {
        compactionGate.withLock { _ in
            while true {
                let next = compaction.withLock { c -> (number: UInt64, logStart: UInt64)? in
                    guard !c.stopping, !c.pendingSegmentHints.isEmpty else {
                        c.hintsScheduled = false
                        return nil
                    }
                    return (c.pendingSegmentHints.removeFirst(), c.manifest.logStart)
                }
                guard let next else { return }
                // A segment compaction has replaced needs no hint.
                guard next.number >= next.logStart else { continue }
                let file = state.withLock { s in s.closed || next.number >= s.activeSegment ? nil : s.files[next.number] }
                guard let file else { continue }
                writeSegmentHint(of: next.number, file)
            }
        }
    }

    /// Builds the hint of sealed segment `number` by reading its frames, writes it under a
    /// temporary name, syncs it, renames it into place and syncs the directory: a hint that open
    /// finds is always whole (FORMAT.md, "Segment hint files").
    private func writeSegmentHint(of number: UInt64, _ file: any StoreFile) {
        let hintPath = path + "/" + SegmentHint.name(number)
        let temporary = hintPath + LogFormat.temporarySuffix
        do throws(EngineError) {
            let bytes = try SegmentHint.build(from: file, number: number).encoded()
            try HintFile.writeSynced(bytes, to: temporary, fileSystem: fileSystem)
            try fileSystem.rename(temporary, to: hintPath)
            try fileSystem.syncDirectory(path)
            compaction.withLock { $0.segmentHintBytes[number] = UInt64(bytes.count) }
        } catch {
            try? fileSystem.removeFile(temporary)
        }
    }
}
