import Synchronization

extension LogStore {
    /// Commits `batch` atomically and returns its sequence number.
    ///
    /// The batch is checked before a byte is written (an invalid one throws
    /// ``EngineError/Code/invalidArgument`` and changes nothing), its blobs written and synced and
    /// the batch encoded and compressed on the calling thread, then appended to the log as one
    /// frame by group commit: the calling thread either waits for the leader of its group or,
    /// as leader, performs the group's `pwrite` and sync itself. When this returns in
    /// ``LogStore/SyncMode/durable`` mode the commit survives power loss; see
    /// ``LogStore/SyncMode`` for the others. An empty batch writes nothing and returns the last
    /// sequence number.
    ///
    /// - Throws: ``EngineError``. A failed write is cut off the log and the store stays usable. A
    ///   failed sync makes the store read-only (``EngineError/Code/readOnly`` from then on): the
    ///   commit was not acknowledged, its frame is cut off the log (best effort), and reads keep
    ///   showing every acknowledged commit. Reopen the store to write again.
    @discardableResult
    public func commit(_ batch: WriteBatch) throws(EngineError) -> UInt64 {
        try batch.validate(blobThreshold: options.blobThreshold)
        guard !batch.isEmpty else { return try lastCommittedSequence() }
        tailStall.waitWhileStalled()
        let (encoded, blobs) = try encode(batch)
        defer { releaseBlobs(blobs) }
        let ticket = CommitTicket(encoded)
        if !queue.enqueue(ticket), case .done(let result) = ticket.waitBlocking() {
            return try result.get()
        }
        return try lead(ticket)
    }

    /// Commits `batch` like ``commit(_:)``, without blocking the calling task's thread.
    ///
    /// Only the batch's validation, which takes no lock, runs on the caller's thread (an invalid
    /// batch throws ``EngineError/Code/invalidArgument`` before anything is handed over).
    /// Everything that touches files, locks or takes long — writing and syncing its blobs,
    /// encoding and compressing the batch, and, should this commit lead its group, the group's
    /// `pwrite` and sync — runs on the engine's own I/O threads, never on a Swift-concurrency
    /// cooperative thread. While it waits for its group to be written the task is suspended,
    /// and holds no thread at all.
    ///
    /// When this returns, the commit is as durable as ``commit(_:)`` would have made it: in
    /// ``LogStore/SyncMode/durable`` mode it survives power loss. The commit runs to completion
    /// even if the task is cancelled meanwhile.
    ///
    /// - Throws: ``EngineError``, as ``commit(_:)`` does.
    @discardableResult
    public func commit(_ batch: WriteBatch) async throws(EngineError) -> UInt64 {
        try batch.validate(blobThreshold: options.blobThreshold)
        guard !batch.isEmpty else {
            // The writer lock can be held across a group's sync: not to be waited for here.
            return try await IOThreads.shared.run { () throws(EngineError) in try self.lastCommittedSequence() }
        }
        return try await IOThreads.shared.start { finish in self.commitOnIOThread(batch, finish: finish) }
    }

    /// Builds a batch in `body` and commits it; see ``commit(_:)``. Nothing is written if `body`
    /// throws: its error is rethrown as it is.
    @discardableResult
    public func write(_ body: (inout WriteBatch) throws -> Void) throws -> UInt64 {
        var batch = WriteBatch()
        try body(&batch)
        return try commit(batch)
    }

    /// Builds a batch in `body`, which cannot fail, and commits it; see ``commit(_:)``. The only
    /// errors are the commit's own, typed.
    @discardableResult
    public func write(_ body: (inout WriteBatch) -> Void) throws(EngineError) -> UInt64 {
        var batch = WriteBatch()
        body(&batch)
        return try commit(batch)
    }

    /// Writes a validated, non-empty batch's blobs (durably) and encodes (compresses) it, on the
    /// calling thread, outside every lock. Returns the encoded commit and the ids of the blobs
    /// written, pending until the commit returns.
    private func encode(_ batch: WriteBatch) throws(EngineError) -> (EncodedCommit, [UInt64]) {
        let (operations, blobs) = try writeBlobs(batch.operations)
        return (EncodedCommit(operations, level: options.compressionLevel, blockSize: options.blockSize), blobs)
    }

    /// The `async` commit's work, on an I/O thread: encode `batch`, queue it, and lead its group
    /// now or wait for the group's leader without holding the thread. `finish` gets the outcome,
    /// once: here, on the leader's thread (which resolves the ticket), or on the I/O thread that
    /// leads a later group when leadership is handed to this commit.
    private func commitOnIOThread(_ batch: WriteBatch, finish: @escaping @Sendable (Result<UInt64, EngineError>) -> Void) {
        let encoded: EncodedCommit
        let blobs: [UInt64]
        // (An I/O thread may wait here: the flush it waits for runs on no I/O thread.)
        tailStall.waitWhileStalled()
        do throws(EngineError) {
            (encoded, blobs) = try encode(batch)
        } catch {
            return finish(.failure(error))
        }
        let done = { @Sendable (result: Result<UInt64, EngineError>) in
            self.releaseBlobs(blobs)
            finish(result)
        }
        let ticket = CommitTicket(encoded) { ticket, outcome in
            switch outcome {
            case .done(let result):
                done(result)
            case .lead:
                // Called by the previous leader on its way out: lead on an I/O thread, not on its.
                IOThreads.shared.submit { done(Result { () throws(EngineError) in try self.lead(ticket) }) }
            }
        }
        if queue.enqueue(ticket) { done(Result { () throws(EngineError) in try self.lead(ticket) }) }
    }

    private func lastCommittedSequence() throws(EngineError) -> UInt64 {
        try writer.withLock { w throws(EngineError) in
            guard !w.closed else { throw Self.closedError }
            return w.nextSequence - 1
        }
    }

    /// Writes the group that starts with `ticket`, wakes its other members with their results,
    /// passes leadership on, and returns `ticket`'s own result.
    private func lead(_ ticket: CommitTicket) throws(EngineError) -> UInt64 {
        let group = queue.takeGroup()
        let result: Result<UInt64, EngineError>
        do throws(EngineError) {
            let first = try writer.withLock { w throws(EngineError) in try append(group, &w) }
            result = .success(first)
            for (index, member) in group.enumerated().dropFirst() {
                member.resolve(.done(.success(first + UInt64(index))))
            }
        } catch {
            result = .failure(error)
            for member in group.dropFirst() { member.resolve(.done(.failure(error))) }
        }
        queue.handOver()
        return try result.get()
    }

    /// Appends a group of encoded commits under the writer lock: roll the segment over if it is
    /// full, write every frame with one `pwrite`, sync once (durable mode), then publish the
    /// records to readers. Returns the first commit's sequence number; the others follow it.
    /// All or none: on failure no commit of the group is published.
    private func append(_ group: [CommitTicket], _ w: inout WriterState) throws(EngineError) -> UInt64 {
        guard !w.closed else { throw Self.closedError }
        if let failure = w.failure { throw Self.readOnlyError(after: failure) }
        if w.writeOffset >= UInt64(options.segmentSize) { try rollOver(&w) }

        let first = w.nextSequence
        let groupOffset = w.writeOffset
        var bytes: [UInt8] = []
        let frameBytes = group.reduce(0) { $0 + $1.encoded.frame.count }
        // Preallocate: when the group would grow the file, zero-fill the next chunk in the same
        // write, so the syncs of the commits after it find their blocks already allocated.
        let end = groupOffset + UInt64(frameBytes)
        var padding =
            !w.preallocationSuspended && end > w.allocatedEnd && frameBytes < options.preallocationSize
            ? options.preallocationSize : 0
        bytes.reserveCapacity(frameBytes + padding)
        var frameOffsets: [UInt64] = []
        for (index, member) in group.enumerated() {
            frameOffsets.append(groupOffset + UInt64(bytes.count))
            member.encoded.append(to: &bytes, sequence: first + UInt64(index), durableSequence: w.syncedSequence)
        }
        if padding > 0 { bytes += [UInt8](repeating: 0, count: padding) }
        while true {
            do {
                try w.active.write(bytes, at: groupOffset)
                break
            } catch {
                // Cut the partial frames off so the next commit starts on a clean boundary. If even
                // that fails, the log's end is unknown: refuse further writes (a reopen repairs it).
                do {
                    try w.active.truncate(to: groupOffset)
                    w.allocatedEnd = groupOffset
                } catch let truncateError {
                    w.failure = truncateError
                }
                // Near a full disk the zeros may be what does not fit: write the frames alone,
                // and preallocate no more in this segment (statistics.preallocationSuspended).
                if error.errno == Syscall.noSpace, padding > 0, w.failure == nil {
                    bytes.removeLast(padding)
                    padding = 0
                    w.preallocationSuspended = true
                    publishPreallocation(w)
                    continue
                }
                publishPreallocation(w)
                throw error
            }
        }
        w.allocatedEnd = max(w.allocatedEnd, groupOffset + UInt64(bytes.count))
        bytes.removeLast(padding)
        w.writeOffset = groupOffset + UInt64(bytes.count)
        logBytesWritten.add(bytes.count, ordering: .relaxed)
        w.nextSequence = first + UInt64(group.count)
        w.unsynced = true
        if options.syncMode == .durable { try syncIfNeeded(&w) }

        let segment = w.activeNumber
        // The group's records as index updates, built outside the index lock; a group of one
        // record (a commit of one key) is applied as it is.
        let recordCount = group.reduce(0) { $0 + $1.encoded.records.count }
        var updates: [IndexUpdate] = []
        if recordCount > 1 {
            updates.reserveCapacity(recordCount)
            for (index, member) in group.enumerated() {
                let sequence = first + UInt64(index)
                for record in member.encoded.records {
                    updates.append(IndexUpdate(record, segment: segment, frameOffset: frameOffsets[index], sequence: sequence))
                }
            }
        }
        state.withLock { s in
            // An empty cache (a bulk load, a migration) need not hash every key.
            if s.cache.count > 0 {
                for member in group {
                    for record in member.encoded.records { s.cache.remove(HashedKey(record.key)) }
                }
            }
            if recordCount > 1 {
                s.index.apply(updates)
            } else if let record = group.first?.encoded.records.first {
                // Every commit holds a record: a group of one record is one commit.
                s.index.apply(record, segment: segment, frameOffset: frameOffsets[0], sequence: first)
            }
            s.lastSequence = first + UInt64(group.count - 1)
            s.preallocatedBytes = w.allocatedEnd - w.writeOffset
        }
        return first
    }

    /// Starts the next segment. The finished one is synced first, in every sync mode, so that a
    /// power loss can never keep a later segment's frames while dropping an earlier one's tail;
    /// its hint file is then written in the background (``scheduleSegmentHints()``).
    func rollOver(_ w: inout WriterState) throws(EngineError) {
        try trimPreallocation(&w)
        try syncIfNeeded(&w)
        let number = w.activeNumber + 1
        let file = try SegmentFile.start(number: number, firstSequence: w.nextSequence, in: path, fileSystem: fileSystem)
        do {
            try SegmentFile.makeDurable(file, in: path, fileSystem: fileSystem)
        } catch {
            w.failure = error
            throw error
        }
        w.active = file
        w.activeNumber = number
        w.activeFirstSequence = w.nextSequence
        w.preallocationSuspended = false  // a new segment tries again
        w.writeOffset = UInt64(LogFormat.segmentHeaderSize)
        w.syncedOffset = w.writeOffset
        w.allocatedEnd = w.writeOffset
        state.withLock { s in
            s.files[number] = file
            s.activeSegment = number
            s.index.noteSegment(number)
        }
        catalog.withLock { $0.pendingSegmentHints.append(number - 1) }
        scheduleSegmentHints()
        scheduleFlushIfDue()
    }
}
