extension LogStore {
    /// Writes the blobs of `operations` (values over ``LogStore/Options/blobThreshold`` and
    /// ``WriteBatch/putExternal(_:_:)`` values), each synced and renamed into place, then syncs the
    /// blob directory once: after this, every blob the batch will reference is durable
    /// (FORMAT.md, "Blob before reference"). Returns the operations with references in place of
    /// the blobs, and the ids written, which stay pending until ``releaseBlobs(_:)``.
    ///
    /// On failure every blob written here is removed (best effort) and its id released.
    func writeBlobs(_ operations: [WriteBatch.Operation]) throws(EngineError) -> ([WriteBatch.Operation], [UInt64]) {
        let threshold = options.blobThreshold
        var operations = operations
        var ids: [UInt64] = []
        do throws(EngineError) {
            for index in operations.indices {
                let key: [UInt8]
                let source: BlobSource
                switch operations[index] {
                case .put(let k, let value) where value.count > threshold:
                    (key, source) = (k, .bytes(value))
                case .putBlob(let k, let s):
                    (key, source) = (k, s)
                default:
                    continue
                }
                if ids.isEmpty { try checkWritable() }
                let id = reserveBlobID()
                ids.append(id)
                let reference = try BlobFile.write(
                    id: id, source: source, directory: blobDirectory, level: min(options.compressionLevel, 1),
                    fileSystem: fileSystem)
                operations[index] = .blob(key: key, reference: reference)
            }
            if !ids.isEmpty { try fileSystem.syncDirectory(blobDirectory) }
        } catch {
            for id in ids {
                try? fileSystem.removeFile(blobDirectory + "/" + BlobFile.temporaryName(id))
                try? fileSystem.removeFile(blobDirectory + "/" + BlobFile.name(id))
            }
            releaseBlobs(ids)
            throw error
        }
        return (operations, ids)
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
