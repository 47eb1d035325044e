import Engine

extension WALStoreContender {
    /// `assets`: every ``AssetGroup`` written into one store, one blob per durable commit
    /// (`WriteBatch.putExternal`), then read back twice with the files in the OS page cache:
    /// streamed (`valueStream(forKey:)`, chunks of at most 1 MiB) and mapped
    /// (`withValue(forKey:)`), and streamed again with the page cache dropped before each blob
    /// (not timed). Only the commits and the reads are timed, not making the bytes;
    /// every read compares the bytes with what was written (`memcmp`, timed, as the plain files do).
    func measureAssets(in context: RunContext) throws -> [Measurement] {
        let path = context.scratch.newStorePath(name + "-assets")
        defer { ScratchDirectory.delete(path) }
        try ScratchDirectory.create(path)
        try ScratchDirectory.prewarm(path, bytes: AssetGroup.all(context.sizes).reduce(0) { $0 + $1.totalBytes })
        let store = try LogStore.open(at: path, options: options)
        defer { try? store.close() }
        var parts: [Measurement] = []
        for group in AssetGroup.all(context.sizes) {
            let before = store.statistics
            var seconds = 0.0
            for index in 0..<group.count {
                var batch = WriteBatch()
                batch.putExternal(group.key(index), group.blob(index))
                seconds += try Stopwatch.time { _ = try store.commit(batch) }.seconds
            }
            let after = store.statistics
            // The store's growth: the blob files (which `bytesOnDisk` counts) and the log's (a
            // reference per blob).
            let stored = after.bytesOnDisk - min(after.bytesOnDisk, before.bytesOnDisk)
            parts.append(Measurement(part: group.part(.write), group.sample(seconds: seconds, bytesOnDisk: stored)))

            for step in [AssetGroup.Step.stream, .map, .streamCold] {
                var seconds = 0.0
                for index in 0..<group.count {
                    let expected = group.blob(index)
                    let key = group.key(index)
                    if step == .streamCold { try StoreFiles.dropPageCache(path) }
                    seconds += try Stopwatch.time {
                        step == .map ? try readMapped(store, key, expected) : try readStreamed(store, key, expected)
                    }.seconds
                }
                parts.append(Measurement(part: group.part(step), group.sample(seconds: seconds, bytesOnDisk: stored)))
            }
        }
        return parts
    }

    /// Reads `key` chunk by chunk, comparing each with `expected`.
    private func readStreamed(_ store: LogStore, _ key: [UInt8], _ expected: [UInt8]) throws {
        guard var stream = try store.valueStream(forKey: key) else {
            throw BenchError("\(name): blob \(String(decoding: key, as: UTF8.self)) is missing")
        }
        guard stream.length == UInt64(expected.count) else {
            throw BenchError("\(name): blob \(String(decoding: key, as: UTF8.self)) has \(stream.length) bytes, not \(expected.count)")
        }
        var offset = 0
        while let chunk = try stream.next() {
            guard chunk.withUnsafeBytes({ AssetGroup.matches($0, expected, at: offset) }) else {
                throw BenchError("\(name): blob \(String(decoding: key, as: UTF8.self)) reads back other bytes at \(offset)")
            }
            offset += chunk.count
        }
        guard offset == expected.count else {
            throw BenchError("\(name): blob \(String(decoding: key, as: UTF8.self)) streamed \(offset) bytes, not \(expected.count)")
        }
    }

    /// Reads `key` through `withValue` (mapped when stored raw) and compares it with `expected`.
    private func readMapped(_ store: LogStore, _ key: [UInt8], _ expected: [UInt8]) throws {
        let same = try store.withValue(forKey: key) { bytes in
            bytes.count == expected.count && AssetGroup.matches(bytes, expected, at: 0)
        }
        guard same == true else {
            throw BenchError("\(name): blob \(String(decoding: key, as: UTF8.self)) is missing or reads back other bytes")
        }
    }
}

extension AssetGroup {
    /// The sample of one step over the whole group: one operation per blob, the blobs' bytes.
    public func sample(seconds: Double, bytesOnDisk: UInt64) -> Sample {
        Sample(seconds: seconds, operations: count, rawBytes: totalBytes, bytesOnDisk: bytesOnDisk)
    }
}
