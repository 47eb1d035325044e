extension LogStore {
    /// Commits `batch` atomically and returns its sequence number.
    ///
    /// The batch is checked before a byte is written (an invalid one throws
    /// ``EngineError/Code/invalidArgument`` and changes nothing), encoded and compressed on the
    /// calling thread, then appended to the log as one frame. When this returns in
    /// ``SyncMode/durable`` mode the commit survives power loss; see ``SyncMode`` for the others.
    /// An empty batch writes nothing and returns the last sequence number.
    ///
    /// - Throws: ``EngineError``. A failed write is cut off the log and the store stays usable. A
    ///   failed sync makes the store read-only (``EngineError/Code/readOnly`` from then on): the
    ///   commit was not acknowledged, its frame is cut off the log (best effort), and reads keep
    ///   showing every acknowledged commit. Reopen the store to write again.
    @discardableResult
    public func commit(_ batch: WriteBatch) throws(EngineError) -> UInt64 {
        try batch.validate()
        guard !batch.isEmpty else {
            return try writer.withLock { w throws(EngineError) in
                guard !w.closed else { throw Self.closedError }
                return w.nextSequence - 1
            }
        }
        var encoded = EncodedCommit(batch.operations, level: options.compressionLevel, blockSize: options.blockSize)
        return try writer.withLock { w throws(EngineError) in
            try append(&encoded, &w)
        }
    }

    /// Builds a batch in `body` and commits it; see ``commit(_:)``. Nothing is written if `body`
    /// throws.
    @discardableResult
    public func write(_ body: (inout WriteBatch) throws -> Void) throws -> UInt64 {
        var batch = WriteBatch()
        try body(&batch)
        return try commit(batch)
    }

    /// Appends one encoded commit under the writer lock: roll the segment over if it is full,
    /// write the frame, sync it (durable mode), then publish its records to readers.
    private func append(_ encoded: inout EncodedCommit, _ w: inout WriterState) throws(EngineError) -> UInt64 {
        guard !w.closed else { throw Self.closedError }
        if let failure = w.failure { throw Self.readOnlyError(after: failure) }
        if w.writeOffset >= UInt64(options.segmentSize) { try rollOver(&w) }

        let sequence = w.nextSequence
        encoded.seal(sequence: sequence)
        let frameOffset = w.writeOffset
        do {
            try w.active.write(encoded.frame, at: frameOffset)
        } catch {
            // Cut the partial frame off so the next commit starts on a clean boundary. If even
            // that fails, the log's end is unknown: refuse further writes (a reopen repairs it).
            do {
                try w.active.truncate(to: frameOffset)
            } catch let truncateError {
                w.failure = truncateError
            }
            throw error
        }
        w.writeOffset = frameOffset + UInt64(encoded.frame.count)
        w.nextSequence = sequence + 1
        w.unsynced = true
        if options.syncMode == .durable { try syncIfNeeded(&w) }

        let segment = w.activeNumber
        state.withLock { s in
            for record in encoded.records {
                s.cache.remove(record.key)
                s.index.apply(record, segment: segment, frameOffset: frameOffset, sequence: sequence)
            }
            s.lastSequence = sequence
        }
        return sequence
    }

    /// Starts the next segment. The finished one is synced first, in every sync mode, so that a
    /// power loss can never keep a later segment's frames while dropping an earlier one's tail.
    private func rollOver(_ w: inout WriterState) throws(EngineError) {
        try syncIfNeeded(&w)
        let number = w.activeNumber + 1
        let file = try SegmentFile.start(number: number, in: path, fileSystem: fileSystem)
        do {
            try SegmentFile.makeDurable(file, in: path, fileSystem: fileSystem)
        } catch {
            w.failure = error
            throw error
        }
        w.active = file
        w.activeNumber = number
        w.writeOffset = UInt64(LogFormat.segmentHeaderSize)
        w.syncedOffset = w.writeOffset
        state.withLock { s in
            s.files[number] = file
            s.index.noteSegment(number)
        }
    }
}
