import Dispatch

extension LogStore {
    /// Writes the blobs of `operations` (values over ``LogStore/Options/blobThreshold`` and
    /// ``WriteBatch/putExternal(_:_:)`` values), each under its final name and synced, and syncs
    /// the blob directory once: after this, every blob the batch will reference is durable
    /// (FORMAT.md, "Writing a blob"). Returns the operations with references in place of the
    /// blobs, and the ids written, which stay pending until ``releaseBlobs(_:)``.
    ///
    /// Every file is created first; then the directory's sync (which makes their names durable)
    /// and each blob's write and sync run at once, since none of them needs another done first:
    /// the blobs on the engine's blob-writing threads (``IOThreads/blobWrites``), the directory's
    /// sync on the calling thread, which then waits for the blobs. A commit may itself be running
    /// on one of the engine's I/O threads; the blob threads are a pool of their own, whose jobs
    /// wait for nothing, so that wait always ends.
    ///
    /// On failure every blob written here is removed (best effort) and its id released.
    func writeBlobs(_ operations: [WriteBatch.Operation]) throws(EngineError) -> ([WriteBatch.Operation], [UInt64]) {
        var blobs: [(index: Int, key: [UInt8], source: BlobSource)] = []
        for (index, operation) in zip(operations.indices, operations) {
            switch operation {
            case .put(let key, let value) where value.count > options.blobThreshold: blobs.append((index, key, .bytes(value)))
            case .putBlob(let key, let source): blobs.append((index, key, source))
            default: continue
            }
        }
        guard !blobs.isEmpty else { return (operations, []) }
        try checkWritable()
        var ids: [UInt64] = []
        for _ in blobs { ids.append(reserveBlobID()) }
        do throws(EngineError) {
            var files: [any StoreFile] = []
            for id in ids { files.append(try BlobFile.create(id: id, directory: blobDirectory, fileSystem: fileSystem)) }
            let references = try writeConcurrently(files: files, ids: ids, sources: blobs.map(\.source))
            var operations = operations
            for (blob, reference) in zip(blobs, references) {
                operations[blob.index] = .blob(key: blob.key, reference: reference)
            }
            return (operations, ids)
        } catch {
            for id in ids { try? fileSystem.removeFile(blobDirectory + "/" + BlobFile.name(id)) }
            releaseBlobs(ids)
            throw error
        }
    }

    /// Writes and syncs each of `files` (created, empty) with its source, and syncs the blob
    /// directory, all at once; returns the references once every one of them is done, or throws
    /// the first failure (by blob, then the directory's).
    private func writeConcurrently(
        files: [any StoreFile], ids: [UInt64], sources: [BlobSource]
    ) throws(EngineError) -> [BlobReference] {
        let job = BlobWriteJob(
            files: files, ids: ids, sources: sources, level: min(options.compressionLevel, 1),
            hash: testHooks.blobVersion.flatMap(BlobChunkHash.init(version:)) ?? .current, directory: blobDirectory,
            fileSystem: fileSystem)
        let done = DispatchGroup()
        for task in 1...files.count {
            done.enter()
            IOThreads.blobWrites.submit {
                job.run(task)
                done.leave()
            }
        }
        job.run(0)
        done.wait()
        return try job.outcome()
    }

    /// Ends the pending state of blobs whose commit has returned. A blob of a failed commit is
    /// left in place: it is unreferenced unless its frame reached the disk after all (a failed
    /// sync), and the next compaction or open collects it only if no record names it.
    func releaseBlobs(_ ids: [UInt64]) {
        guard !ids.isEmpty else { return }
        blobIDs.withLock { b in
            for id in ids { b.pending.remove(id) }
        }
    }

    private func reserveBlobID() -> UInt64 {
        blobIDs.withLock { b in
            let id = b.next
            b.next += 1
            b.pending.insert(id)
            return id
        }
    }

    /// Throws when commits would be refused, so no blob is written for a commit that cannot land.
    private func checkWritable() throws(EngineError) {
        try writer.withLock { w throws(EngineError) in
            guard !w.closed else { throw Self.closedError }
            if let failure = w.failure { throw Self.readOnlyError(after: failure) }
        }
    }
}

extension RecoveredLog {
    /// Lists `blobs/` and finds the files no live key references (blobs of commits lost in a
    /// crash, or left by an interrupted collection) and the temporary blob files, for the
    /// collection that runs after open returns (``LogStore/collectBlobsFoundAtOpen()``), and sets
    /// ``nextBlobID`` past every id seen, so that no blob written from now on takes the name of a
    /// file found here. Removes nothing: open's cost does not grow with the garbage.
    mutating func findUnreferencedBlobs(directory: String, fileSystem: any FileSystem) throws(EngineError) {
        var referenced = Set(index.blobs.values.map(\.id))
        for table in manifest.tables { referenced.formUnion(table.blobIDs) }
        var highest = referenced.max() ?? 0
        for name in try fileSystem.listDirectory(directory) {
            guard let id = BlobFile.id(fromName: name) else { continue }
            highest = max(highest, id)
            if name.hasSuffix(LogFormat.blobTemporarySuffix) || !referenced.contains(id) { unreferencedBlobs.append(name) }
        }
        nextBlobID = highest + 1
    }
}

/// The tasks of one batch's blob writes: task 0 syncs the blob directory, task *i* writes and
/// syncs blob *i* − 1. Each task records its result; ``outcome()`` reads them once all have run.
private struct BlobWriteJob: Sendable {
    let files: [any StoreFile]
    let ids: [UInt64]
    let sources: [BlobSource]
    let level: Int
    let hash: BlobChunkHash
    let directory: String
    let fileSystem: any FileSystem
    let results: Locked<[Result<BlobReference?, EngineError>]>

    init(
        files: [any StoreFile], ids: [UInt64], sources: [BlobSource], level: Int, hash: BlobChunkHash, directory: String,
        fileSystem: any FileSystem
    ) {
        (self.files, self.ids, self.sources, self.level, self.hash) = (files, ids, sources, level, hash)
        (self.directory, self.fileSystem) = (directory, fileSystem)
        results = Locked(Array(repeating: .success(nil), count: files.count + 1))
    }

    func run(_ task: Int) {
        let result: Result<BlobReference?, EngineError>
        do throws(EngineError) {
            if task == 0 {
                try fileSystem.syncDirectory(directory)
                result = .success(nil)
            } else {
                let blob = task - 1
                result = .success(
                    try BlobFile.write(files[blob], id: ids[blob], source: sources[blob], level: level, hash: hash, fileSystem: fileSystem))
            }
        } catch {
            result = .failure(error)
        }
        results.withLock { $0[task] = result }
    }

    /// The blobs' references in order, or the first failure.
    func outcome() throws(EngineError) -> [BlobReference] {
        let results = results.withLock { $0 }
        var references: [BlobReference] = []
        for result in results.dropFirst() + results.prefix(1) {
            if let reference = try result.get() { references.append(reference) }
        }
        return references
    }
}
