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
    /// when none is left (or, unless `whileClosing`, once ``close()`` has begun: close then writes
    /// the rest itself). Best effort: a hint that cannot be written is left out, and open
    /// replays its segment. (The background job's body; tests call it directly to write hints at
    /// a known point.)
    package func writePendingSegmentHints(whileClosing: Bool = false) {
        compactionGate.withLock { _ in
            while true {
                let next = compaction.withLock { c -> (number: UInt64, logStart: UInt64)? in
                    guard whileClosing || !c.stopping, !c.pendingSegmentHints.isEmpty else {
                        c.hintsScheduled = false
                        return nil
                    }
                    return (c.pendingSegmentHints.removeFirst(), c.manifest.logStart)
                }
                guard let next else { return }
                // A segment compaction has replaced needs no hint.
                guard next.number >= next.logStart else { continue }
                let file = state.withLock { s in
                    s.closed || next.number >= s.activeSegment ? nil : s.files[next.number]
                }
                guard let file else { continue }
                writeSegmentHint(of: next.number, file)
            }
        }
    }

    /// Builds the hint of segment `number`'s first `length` bytes (all of a sealed segment's),
    /// reading only the frames its current hint does not cover, writes it under a temporary
    /// name, syncs it, renames it into place and syncs the directory: a hint that open finds is
    /// always whole (FORMAT.md, "Segment hint files"). `length` must not pass the synced part
    /// of the segment: a hint never describes frames a power loss could still take away.
    func writeSegmentHint(of number: UInt64, _ file: any StoreFile, upTo length: UInt64? = nil) {
        let hintPath = path + "/" + SegmentHint.name(number)
        let temporary = hintPath + LogFormat.temporarySuffix
        do throws(EngineError) {
            var end = length ?? 0
            if length == nil { end = try file.size() }
            var previous: SegmentHint?
            if let hintFile = try? fileSystem.openFile(hintPath, create: false),
                let hint = try? SegmentHint.load(hintFile, number: number, fileSize: end, isNewest: true, firstSequence: nil),
                (try? hint.checkLastFrame(in: file)) != nil {
                if hint.coveredLength == end { return }  // nothing new to describe
                previous = hint
            }
            let bytes = try SegmentHint.build(from: file, number: number, upTo: end, extending: previous).encoded()
            try HintFile.writeSynced(bytes, to: temporary, fileSystem: fileSystem)
            try fileSystem.rename(temporary, to: hintPath)
            try fileSystem.syncDirectory(path)
            compaction.withLock { $0.segmentHintBytes[number] = UInt64(bytes.count) }
        } catch {
            try? fileSystem.removeFile(temporary)
        }
    }
}
