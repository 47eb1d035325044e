/// What open recovers from the segment files (FORMAT.md, "Recovery").
struct RecoveredLog {
    var index = KeyDirectory()
    var files: [UInt64: any StoreFile] = [:]
    var activeFile: (any StoreFile)?
    var activeNumber: UInt64 = 1
    var writeOffset = UInt64(LogFormat.segmentHeaderSize)
    /// The active segment's size: from `writeOffset` to here it holds preallocated zeros.
    var allocatedEnd = UInt64(LogFormat.segmentHeaderSize)
    var lastSequence: UInt64 = 0
    var recovery = LogStore.Statistics.Recovery()
    /// Higher than the id of every blob file present at open and every referenced blob.
    var nextBlobID: UInt64 = 1
    /// The names of the blob files in `blobs/` that no live key references, and of temporary
    /// blob files: all with ids below ``nextBlobID``. Removed after open returns.
    var unreferencedBlobs: [String] = []
    /// The leftovers found (``findLeftovers(names:)``) and not removed yet: those of an open that
    /// defers their removal, else none.
    var leftovers: [String] = []

    /// The manifest open found (an empty one before the first flush).
    var manifest = Manifest()
    /// The tables it lists, opened, newest first.
    var tables: [StoreTable] = []
    /// The block cache the tables read through.
    let tableCache: TableBlockCache
    /// Higher than every table number seen in the directory or the manifest.
    var nextTableNumber: UInt64 = 1
    /// The active segment's first sequence (its header's).
    var activeFirstSequence: UInt64 = 1
    /// The size of each sealed segment's hint file, by segment number.
    var segmentHintBytes: [UInt64: UInt64] = [:]
    /// Sealed segments replayed because their hint was missing or damaged: their hints are
    /// written in the background after open.
    var segmentsNeedingHints: [UInt64] = []
    /// The deletes segment hints hold, applied once every file is loaded (``applyHintTombstones()``).
    private var hintTombstones: [(key: [UInt8], sequence: UInt64, segment: UInt64, size: Int)] = []

    init(tableCache: TableBlockCache) { self.tableCache = tableCache }

    /// Opens the store's files (FORMAT.md, "Open"): reads the manifest (upgrading a format-3
    /// store first), opens each table (its
    /// length checked against the manifest, its footer read), loads each sealed
    /// segment's hint file (replaying the segment when its
    /// hint is missing or fails a check), replays the newest segment, and leaves
    /// the newest segment ready for appends: a torn tail cut off (and the cut synced), a torn
    /// header rewritten. Then lists the blob files no key references, which the store removes
    /// in the background once open has returned. Only then, when nothing is left that could
    /// refuse the open, removes what an interrupted flush or merge left: a refused open has
    /// removed no file (it may have cut a torn tail, which only the newest segment's replay
    /// does, once every earlier check passed).
    /// With `deferringLeftovers`, the leftovers are only listed (``leftovers``), for the store to
    /// remove once its opener knows its own open succeeds.
    static func recover(
        directory: String, blobDirectory: String, fileSystem: any FileSystem, options: LogStore.Options,
        tableCache: TableBlockCache, deferringLeftovers: Bool = false
    ) throws(EngineError) -> RecoveredLog {
        var log = RecoveredLog(tableCache: tableCache)
        var names = try fileSystem.listDirectory(directory)
        var manifestPresent = true
        switch try Manifest.read(in: directory, names: names, fileSystem: fileSystem) {
        case .none:
            manifestPresent = false
        case .current(let manifest):
            log.manifest = manifest
        case .version3(let old):
            log.manifest = try Upgrade.run(old, directory: directory, names: names, fileSystem: fileSystem, options: options)
            log.recovery.upgradedFromFormat3 = true
            names = try fileSystem.listDirectory(directory)
        }
        try log.checkManifestFiles(names: names, directory: directory, manifestPresent: manifestPresent)
        try log.openTables(directory: directory, fileSystem: fileSystem)
        try log.replaySegments(names: names, directory: directory, fileSystem: fileSystem)
        log.applyHintTombstones()
        log.index.finishLoading()
        try log.findUnreferencedBlobs(directory: blobDirectory, fileSystem: fileSystem)
        // Last, once nothing can refuse the open: a manifest that open refuses (a log start past
        // where the log really starts, say) must not cost the segments and tables it disowns.
        log.findLeftovers(names: names)
        if !deferringLeftovers {
            log.recovery.removedLeftovers = removeLeftovers(log.leftovers, directory: directory, fileSystem: fileSystem)
            log.leftovers = []
        }
        return log
    }

    /// Checks, before anything is removed, that every table the manifest lists and the segment it
    /// says the log resumes at are present: a manifest naming files that are not there (a partial
    /// restore, say) must not make open delete the files that are. Without a manifest, finished
    /// tables (or format-3 packs) beside a log that no longer starts at segment 1 mean the
    /// manifest itself was lost: those files hold the only copy of the flushed records, and must
    /// not be taken for leftovers of an unfinished flush (which never removes a segment).
    private func checkManifestFiles(names: [String], directory: String, manifestPresent: Bool) throws(EngineError) {
        let present = Set(names)
        if !manifestPresent, !present.contains(SegmentFile.name(1)),
            let file = names.sorted().first(where: { name in
                PackFile.number(fromName: name).map { PackFile.name($0) == name } ?? false
                    || StoreTable.number(fromName: name).map { TableFormat.name($0) == name } ?? false
            })
        {
            throw .corruption(
                "\(file) is present but \(LogFormat.manifestName) is missing and the log no longer starts at segment 1 (was the manifest lost?)",
                path: directory + "/" + LogFormat.manifestName, offset: 0)
        }
        for table in manifest.tables where !present.contains(TableFormat.name(table.number)) {
            throw .corruption(
                "table \(TableFormat.name(table.number)) is listed in the manifest but missing",
                path: directory + "/" + TableFormat.name(table.number), offset: 0)
        }
        let start = manifest.logStart
        if start > 1 || !manifest.tables.isEmpty, !present.contains(SegmentFile.name(start)) {
            throw .corruption(
                "segment \(start), where the log continues after the last flush, is missing",
                path: directory + "/" + SegmentFile.name(start), offset: 0)
        }
        // The segment a clean close recorded the end of held durable commits: gone altogether, it
        // is cut short as surely as one shorter than recorded (else a fresh log would replace it).
        let closed = manifest.closedSegment
        if closed >= start, !present.contains(SegmentFile.name(closed)) {
            throw .corruption(
                "segment is missing but its last clean close recorded \(manifest.closedLength) bytes in \(LogFormat.manifestName) (durable commits are gone)",
                path: directory + "/" + SegmentFile.name(closed), offset: 0)
        }
    }

    /// Lists as ``leftovers`` the temporary manifest, temporary tables, tables the manifest does not list
    /// (written by a flush or merge that did not finish, or replaced by one that did), the packs
    /// and pack hints of a format-3 store already upgraded, segments older than the manifest's
    /// log start (flushed into its tables), and segment hints that are temporary or describe no
    /// segment of the log; and sets ``nextTableNumber`` past every table number present.
    private mutating func findLeftovers(names: [String]) {
        let tables = Set(manifest.tables.map(\.number))
        let segments = Set(names.compactMap(SegmentFile.number(fromName:)))
        nextTableNumber = (manifest.tables.map(\.number).max() ?? 0) + 1
        for name in names {
            var leftover = name == LogFormat.manifestTemporaryName
            if let number = SegmentHint.number(fromName: name) {
                // Only a segment that is still part of the log has a hint.
                leftover =
                    name.hasSuffix(LogFormat.temporarySuffix) || number < manifest.logStart
                    || !segments.contains(number)
            } else if let number = StoreTable.number(fromName: name) {
                nextTableNumber = max(nextTableNumber, number + 1)
                leftover = name.hasSuffix(LogFormat.temporarySuffix) || !tables.contains(number)
            } else if PackFile.number(fromName: name) != nil {
                leftover = true
            } else if let number = SegmentFile.number(fromName: name) {
                leftover = number < manifest.logStart
            }
            if leftover { leftovers.append(name) }
        }
    }

    /// Removes the leftovers `names` from `directory` and returns how many went. Best effort: a
    /// file that cannot be removed is ignored by open all the same, and tried again next time.
    static func removeLeftovers(_ names: [String], directory: String, fileSystem: any FileSystem) -> Int {
        var removed = 0
        for name in names where (try? fileSystem.removeFile(directory + "/" + name)) != nil { removed += 1 }
        if removed > 0 { try? fileSystem.syncDirectory(directory) }
        return removed
    }

    /// Opens every table the manifest lists: its length checked against the manifest's (a cut
    /// table is corruption, even one cut at a block boundary), its footer read and verified (one
    /// read per table, whatever its number of keys; the rest is read on first use).
    private mutating func openTables(directory: String, fileSystem: any FileSystem) throws(EngineError) {
        for record in manifest.tables {
            tables.append(try StoreTable.open(record, directory: directory, fileSystem: fileSystem, cache: tableCache))
        }
        lastSequence = manifest.lastSequence
    }

    /// Replays the segments from the manifest's log start, in order, verifying each frame.
    private mutating func replaySegments(names: [String], directory: String, fileSystem: any FileSystem) throws(EngineError) {
        let start = manifest.logStart
        let numbers = names.compactMap(SegmentFile.number(fromName:)).filter { $0 >= start }.sorted()
        guard let newest = numbers.last else {
            assert(start == 1 && manifest.tables.isEmpty, "checkManifestFiles saw segment \(start)")
            // A new store (or a manifest naming no segment yet): the log starts where it says.
            let file = try SegmentFile.create(
                number: start, firstSequence: lastSequence + 1, in: directory, fileSystem: fileSystem)
            activeFirstSequence = lastSequence + 1
            activeFile = file
            files[start] = file
            index.noteSegment(start)
            activeNumber = start
            return
        }
        guard numbers[0] == start else {
            throw .corruption(
                "segment \(start) is missing (the oldest present is \(numbers[0]))",
                path: directory + "/" + SegmentFile.name(start), offset: 0)
        }
        if let gap = zip(numbers, numbers.dropFirst()).first(where: { $0.1 != $0.0 + 1 }) {
            throw .corruption(
                "segment \(gap.0 + 1) is missing between \(gap.0) and \(gap.1)",
                path: directory + "/" + SegmentFile.name(gap.0 + 1), offset: 0)
        }
        let present = Set(names)
        for number in numbers {
            let path = directory + "/" + SegmentFile.name(number)
            let file = try fileSystem.openFile(path, create: false)
            // Before anything reads or cuts it: a clean close recorded how long it was, and its
            // commits up to there were durable.
            if number == manifest.closedSegment, case let size = try file.size(), size < manifest.closedLength {
                // A file that is not ours under the segment's name is reported as such first.
                if size >= UInt64(LogFormat.segmentHeaderSize) {
                    try LogFormat.checkMagic(
                        try file.read(at: 0, count: LogFormat.segmentHeaderSize), LogFormat.segmentMagic,
                        checksumAt: LogFormat.segmentHeaderChecksumOffset, of: "segment", path: path)
                }
                throw .corruption(
                    "segment is \(size) bytes but its last clean close recorded \(manifest.closedLength) in \(LogFormat.manifestName) (cut short: durable commits are gone)",
                    path: path, offset: size)
            }
            files[number] = file
            index.noteSegment(number)
            let isNewest = number == newest
            let expectedFirst = lastSequence + 1
            // The header first, even where a hint spares the frames (one small read): a file that
            // is not ours, or of another version, is noticed before its hint is believed; and its
            // first sequence must continue the log.
            var newestReader: LogReader?
            if isNewest {
                var reader = try LogReader(file: file, segmentNumber: number, isNewest: true)
                guard let first = try reader.readHeader() else {
                    // A crash while the newest segment was being created: start it again. A hint
                    // beside it would mean it had durable frames: those are lost, not torn.
                    guard !present.contains(SegmentHint.name(number)) else {
                        throw .corruption(
                            "segment header is torn but its hint file \(SegmentHint.name(number)) records durable frames in it",
                            path: path, offset: 0)
                    }
                    recovery.truncatedBytes = reader.fileSize
                    recovery.reason = reader.tornTail?.reason
                    let fresh = try SegmentFile.create(
                        number: number, firstSequence: expectedFirst, in: directory, fileSystem: fileSystem)
                    files[number] = fresh
                    activeFile = fresh
                    activeFirstSequence = expectedFirst
                    writeOffset = UInt64(LogFormat.segmentHeaderSize)
                    allocatedEnd = writeOffset
                    break
                }
                try checkFirstSequence(first, expected: expectedFirst, path: path)
                activeFirstSequence = first
                newestReader = reader
            } else {
                try checkFirstSequence(try SegmentFile.checkHeader(of: file, number: number), expected: expectedFirst, path: path)
            }
            // A segment hint stands in for the frames it covers: all of a sealed segment's, or the
            // first ones of the newest (those written before its last clean close).
            let covered = try loadHint(of: number, file: file, isNewest: isNewest, present: present, directory: directory, fileSystem: fileSystem)
            var reader: LogReader
            if let newestReader {
                reader = newestReader
            } else {
                if covered != nil { continue }
                recovery.segmentsReplayed += 1
                reader = try LogReader(file: file, segmentNumber: number, isNewest: false)
                _ = try reader.readHeader()
            }
            if let covered { reader.resume(at: covered, sequence: lastSequence + 1) }
            var closeFrame: UInt64?
            while let frame = try reader.nextFrame() {
                try apply(frame, segment: number, path: path)
                if !frame.isClose { recovery.replayedBytes += UInt64(frame.bytes.count) }
                closeFrame = frame.isClose ? frame.offset : nil
            }
            allocatedEnd = reader.fileSize
            if let torn = reader.tornTail {
                // A clean close recorded where this segment's last commit ended, and every frame
                // before that was durable: one there that fails its checks is damage, which no
                // crash can tear (a commit after the reopen starts at that end, over the close
                // frame). Refused before anything is cut.
                if number == manifest.closedSegment, torn.offset < manifest.closedLength {
                    throw .corruption(
                        "a frame fails its checks (\(torn.reason)) before where the last clean close recorded the log's end (\(manifest.closedLength) in \(LogFormat.manifestName)): durable commits are damaged",
                        path: path, offset: torn.offset)
                }
                recovery.truncatedBytes = reader.fileSize - torn.offset
                recovery.reason = torn.reason
                recovery.discardedFrames = torn.discardedFrames
                try file.truncate(to: torn.offset)
                allocatedEnd = torn.offset
            }
            recovery.closedCleanly = closeFrame != nil && reader.tornTail == nil
            activeFile = file
            // The next commit overwrites a close frame: it is only ever the log's last.
            writeOffset = closeFrame ?? reader.validLength
        }
        // Frames recovered from the page cache of a crashed process (or cut off just now) must be
        // durable before any new frame follows them, in every sync mode: otherwise a power loss
        // could keep a later commit and lose these.
        try activeFile!.sync()
        activeNumber = newest
    }

    /// Loads the index entries of segment `number` from its hint file and returns how many of
    /// the segment's bytes the hint covers; nil when the hint is missing or unusable, and the
    /// segment must be replayed whole (a sealed segment's hint is then written again after open).
    /// A checksummed hint of another format
    /// version stops open with ``EngineError/Code/unsupportedFormat``, the store unchanged; a
    /// whole, checksummed hint that the segment contradicts (it is shorter, or lacks the frame the
    /// hint names last) stops it with ``EngineError/Code/corruption``: those frames were durable
    /// before the hint was written, so the segment lost them, and rewriting the hint from it would
    /// destroy the evidence.
    private mutating func loadHint(
        of number: UInt64, file: any StoreFile, isNewest: Bool, present: Set<String>, directory: String,
        fileSystem: any FileSystem
    ) throws(EngineError) -> UInt64? {
        let name = SegmentHint.name(number)
        guard present.contains(name) else {
            if !isNewest { segmentsNeedingHints.append(number) }
            return nil
        }
        let fileSize = try file.size()
        let hint: SegmentHint
        let putRecordBytes: Int
        do throws(SegmentHint.Unusable) {
            guard let hintFile = try? fileSystem.openFile(directory + "/" + name, create: false) else {
                throw .invalid("hint file cannot be opened")
            }
            let hintSize = (try? hintFile.size()) ?? 0
            // The puts go straight into the index, which takes them only once every check passed.
            let firstSequence = lastSequence + 1
            (hint, putRecordBytes) = try index.loadRun { (run: inout LoadedRun) throws(SegmentHint.Unusable) in
                let hint = try SegmentHint.load(
                    hintFile, number: number, fileSize: fileSize, isNewest: isNewest, firstSequence: firstSequence, into: &run)
                try hint.checkLastFrame(in: file)
                return (hint, run.recordBytes)
            }
            segmentHintBytes[number] = hintSize
        } catch {
            switch error {
            case .invalid:
                if !isNewest { segmentsNeedingHints.append(number) }
                return nil
            case .unsupportedVersion(let version):
                try LogFormat.checkVersion(version, of: "segment hint", path: directory + "/" + name)
                return nil
            case .contradicted(let message):
                throw .corruption(
                    "\(message): frames its hint file \(name) records are gone",
                    path: file.path, offset: 0)
            }
        }
        for delete in hint.deletes {
            hintTombstones.append((delete.key, delete.sequence, number, SegmentHint.deleteSize(delete)))
        }
        // Records the segment's later records replaced: dead in it from the start.
        index.countDead(hint.replacedRecordBytes(putRecordBytes: putRecordBytes), in: number)
        lastSequence = hint.firstSequence + hint.frameCount - 1
        recovery.segmentHintsLoaded += 1
        return hint.coveredLength
    }

    /// Applies the deletes of the segment hints loaded, after every file: a delete becomes the
    /// key's tombstone unless the version the index holds is newer (a later put wins, as in
    /// replay). Applying them as they were met would make the index merge its loaded runs once per
    /// segment instead of once.
    private mutating func applyHintTombstones() {
        for tombstone in hintTombstones {
            if (index[tombstone.key]?.sequence ?? 0) < tombstone.sequence {
                index.delete(tombstone.key, tombstoneIn: tombstone.segment, recordSize: tombstone.size, sequence: tombstone.sequence)
            } else {
                index.countDead(tombstone.size, in: tombstone.segment)
            }
        }
        hintTombstones = []
    }

    /// A segment's header names the sequence of its first frame: it must continue the log, or
    /// frames were lost at the end of the segment before (or the header is not this log's).
    private func checkFirstSequence(_ first: UInt64, expected: UInt64, path: String) throws(EngineError) {
        guard first == expected else {
            throw .corruption(
                "segment's first frame has sequence \(first) but the log before it ends at \(expected - 1) (frames were lost or cut off)",
                path: path, offset: 20)
        }
    }

    private mutating func apply(_ frame: LogReader.Frame, segment: UInt64, path: String) throws(EngineError) {
        // A close frame repeats the last commit's sequence.
        if frame.isClose {
            guard frame.sequence == lastSequence else {
                throw .corruption(
                    "close frame names sequence \(frame.sequence) where the log ends at \(lastSequence)", path: path,
                    offset: frame.offset)
            }
            return
        }
        // lastSequence < maxSequence: the manifest's, a hint's and every accepted frame's are.
        guard frame.sequence == lastSequence + 1, frame.sequence < LogFormat.maxSequence else {
            throw .corruption(
                "frame sequence \(frame.sequence) where \(lastSequence + 1) was expected", path: path, offset: frame.offset)
        }
        lastSequence = frame.sequence
        let records = try CommitDecoding.records(inPayload: frame.payload, frameOffset: frame.offset, path: path)
        for record in records {
            index.apply(record, segment: segment, frameOffset: frame.offset, sequence: frame.sequence)
        }
    }
}

extension IndexUpdate {
    /// The update of `record`, of the commit `sequence` whose frame is at `frameOffset` in
    /// `segment`.
    init(_ record: RecordPlacement, segment: UInt64, frameOffset: UInt64, sequence: UInt64) {
        if record.valueLength != nil {
            let location = Location(
                record, file: segment, blockOffset: frameOffset + UInt64(record.blockOffset),
                blockLength: record.blockLength, sequence: sequence)
            self.init(key: record.key, location: location, blob: record.blob)
        } else {
            self.init(key: record.key, location: .tombstone(in: segment, sequence: sequence), tombstoneSize: record.recordSize)
        }
    }
}

extension KeyDirectory {
    /// Applies one record of a commit frame at `frameOffset` in `segment`.
    mutating func apply(_ record: RecordPlacement, segment: UInt64, frameOffset: UInt64, sequence: UInt64) {
        if record.valueLength != nil {
            let location = Location(
                record, file: segment, blockOffset: frameOffset + UInt64(record.blockOffset),
                blockLength: record.blockLength, sequence: sequence)
            put(record.key, at: location, blob: record.blob)
        } else {
            delete(record.key, tombstoneIn: segment, recordSize: record.recordSize, sequence: sequence)
        }
    }
}
