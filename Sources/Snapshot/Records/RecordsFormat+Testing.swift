import Engine

extension WALDataStore {
    /// Test hook: rewrites the live generation's records and links in records format 1 and the
    /// header under the version byte `headerVersion` (1 to 3's layout of version 2 and 3: the
    /// bytes an older build wrote), so a test can reopen the store and check its upgrade. Assets,
    /// back references, index and uniqueness entries are the same in both formats and stay.
    /// Close the store afterwards; it must not be used again.
    package func rewriteInRecordsFormat1(headerVersion: UInt8 = 3) throws {
        let mapper = self.mapper
        var batch = WriteBatch()
        for tag in [RecordKeys.joinTag, RecordKeys.joinMirrorTag] {
            var links = try space.scan(prefix: [tag])
            while let entry = try links.next() { batch.delete(entry.key) }
        }
        for root in schema.entities where root.superentityName == nil {
            let prefix = RecordKeys.recordPrefix(root: root.name)
            var records = try space.scan(prefix: prefix)
            while let entry = try records.next() {
                let pk = RecordKeys.uuid(from: Array(entry.key.suffix(16)))
                let snapshot = try mapper.snapshot(ofRecord: try entry.value(), key: entry.key, primaryKey: pk, root: root.name, toMany: true)
                for (key, stored) in mapper.format1Entries(of: snapshot) {
                    guard case .inline(let value) = stored, [RecordKeys.recordTag, RecordKeys.joinTag, RecordKeys.joinMirrorTag].contains(key.first)
                    else { continue }
                    batch.put(key, value)
                }
            }
        }
        if let header = try engine.value(forKey: RecordKeys.meta) {
            batch.put(RecordKeys.meta, [headerVersion] + header.dropFirst())
        }
        try space.commit(batch)
    }
}

extension WALDataStore {
    /// Test hook: the live generation's record-layer entries under `prefix` (an unprefixed
    /// record key prefix), with their keys as the generation names them (without its prefix).
    package func liveEntries(prefix: [UInt8]) throws -> [(key: [UInt8], value: [UInt8])] {
        var result: [(key: [UInt8], value: [UInt8])] = []
        var cursor = try space.scan(prefix: prefix)
        while let entry = try cursor.next() { result.append((entry.key, try entry.value())) }
        return result
    }
}
