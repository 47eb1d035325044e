import Engine

/// Copies every key of one generation into another unchanged, in commits of bounded size: what
/// a custom stage's closure works on when the data is still the live generation (so that what
/// it saves never reaches the live data before the migration switches).
enum GenerationCopier {
    static func copy(from source: RecordSpace, to destination: RecordSpace) throws {
        var batch = WriteBatch()
        var bytes = 0
        for tag in RecordSpace.recordTags {
            var cursor = try source.scan(prefix: [tag])
            while let entry = try cursor.next() {
                let value = try entry.value()
                if entry.isBlob { batch.putExternal(entry.key, value) } else { batch.put(entry.key, value) }
                bytes += entry.key.count + value.count
                if batch.count >= GenerationRewriter.chunkOperations || bytes >= GenerationRewriter.chunkBytes {
                    try destination.commit(batch)
                    batch = WriteBatch()
                    bytes = 0
                }
            }
        }
        if !batch.isEmpty { try destination.commit(batch) }
    }
}
