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
    var recovery = Statistics.Recovery(truncatedBytes: 0, reason: nil)

    /// Replays every segment in order, verifying each frame, and leaves the newest one ready for
    /// appends: a torn tail cut off (and the cut synced), a torn header rewritten.
    static func recover(directory: String, fileSystem: any FileSystem) throws(EngineError) -> RecoveredLog {
        var log = RecoveredLog()
        let numbers = try fileSystem.listDirectory(directory).compactMap(SegmentFile.number(fromName:)).sorted()
        guard let newest = numbers.last else {
            let file = try SegmentFile.create(number: 1, in: directory, fileSystem: fileSystem)
            log.activeFile = file
            log.files[1] = file
            log.index.noteSegment(1)
            log.index.finishLoading()
            return log
        }
        guard numbers[0] == 1 else {
            throw .corruption(
                "segment 1 is missing (the oldest present is \(numbers[0]))",
                path: directory + "/" + SegmentFile.name(1), offset: 0)
        }
        if let gap = zip(numbers, numbers.dropFirst()).first(where: { $0.1 != $0.0 + 1 }) {
            throw .corruption(
                "segment \(gap.0 + 1) is missing between \(gap.0) and \(gap.1)",
                path: directory + "/" + SegmentFile.name(gap.0 + 1), offset: 0)
        }
        for number in numbers {
            let path = directory + "/" + SegmentFile.name(number)
            let file = try fileSystem.openFile(path, create: false)
            var reader = try LogReader(file: file, segmentNumber: number, isNewest: number == newest)
            log.files[number] = file
            log.index.noteSegment(number)
            guard try reader.readHeader() else {
                // A crash while the newest segment was being created: start it again.
                log.recovery = Statistics.Recovery(truncatedBytes: reader.fileSize, reason: reader.tornTail?.reason)
                let fresh = try SegmentFile.create(number: number, in: directory, fileSystem: fileSystem)
                log.files[number] = fresh
                log.activeFile = fresh
                log.writeOffset = UInt64(LogFormat.segmentHeaderSize)
                log.allocatedEnd = log.writeOffset
                break
            }
            while let frame = try reader.nextFrame() {
                try log.apply(frame, segment: number, path: path)
            }
            log.allocatedEnd = reader.fileSize
            if let torn = reader.tornTail {
                log.recovery = Statistics.Recovery(truncatedBytes: reader.fileSize - torn.offset, reason: torn.reason)
                try file.truncate(to: torn.offset)
                log.allocatedEnd = torn.offset
            }
            log.activeFile = file
            log.writeOffset = reader.validLength
        }
        // Frames recovered from the page cache of a crashed process (or cut off just now) must be
        // durable before any new frame follows them, in every sync mode: otherwise a power loss
        // could keep a later commit and lose these.
        try log.activeFile!.sync()
        log.activeNumber = newest
        log.index.finishLoading()
        return log
    }

    private mutating func apply(_ frame: LogReader.Frame, segment: UInt64, path: String) throws(EngineError) {
        guard frame.sequence == lastSequence + 1 else {
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

extension KeyDirectory {
    /// Applies one record of a commit frame at `frameOffset` in `segment`.
    mutating func apply(_ record: RecordPlacement, segment: UInt64, frameOffset: UInt64, sequence: UInt64) {
        if let valueLength = record.valueLength {
            put(record.key, at: Location(
                segment: segment, blockOffset: frameOffset + UInt64(record.blockOffset),
                blockLength: UInt32(record.blockLength), valueOffset: UInt32(record.valueOffset),
                valueLength: UInt32(valueLength), recordSize: UInt32(record.recordSize), sequence: sequence))
        } else {
            delete(record.key, tombstoneIn: segment, recordSize: record.recordSize)
        }
    }
}
