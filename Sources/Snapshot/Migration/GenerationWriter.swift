import Engine
import Foundation

/// Writes objects a ``GenerationRewriter`` has mapped into the new schema into its destination
/// generation: every entry of each, derived as a save writes it, in commits of at most
/// ``GenerationRewriter/chunkOperations`` operations or ``GenerationRewriter/chunkBytes``
/// bytes. It runs on the committing thread of ``PipelinedCommits``, so it holds only what is
/// safe to share across threads (a record mapper is made per call).
struct GenerationWriter: Sendable {
    /// One object in the new schema, with its new asset keys → the old ones their bytes were
    /// read from (same bytes: values do not change type).
    struct Object: Sendable {
        let state: ObjectState
        let carried: [[UInt8]: [UInt8]]
    }

    let layout: RecordLayout
    let source: RecordSpace
    let destination: RecordSpace
    let storeIdentifier: String
    let assetThreshold: Int
    let operationsPerCommit: Int

    /// Commits every entry of `objects`, then the count key of each of `counts` (the last group's).
    func write(_ objects: [Object], counts: [(entity: String, count: UInt64)]) throws {
        let mapper = RecordMapper(
            layout: layout, records: destination, storeIdentifier: storeIdentifier, assetThreshold: assetThreshold, countRecordRead: {})
        var batch = WriteBatch()
        var bytes = 0
        for object in objects {
            for (key, stored) in mapper.entries(of: object.state) {
                if key.count > RecordKeys.maxKeyLength,
                    let refusal = layout.encoder(of: object.state.persistentIdentifier.entityName).refusal(
                        ofLongKey: key, in: object.state, reportedAs: object.state.persistentIdentifier)
                {
                    throw refusal
                }
                switch stored {
                case .inline(let value):
                    batch.put(key, value)
                    bytes += key.count + value.count
                case .external(let value):
                    if let blob = try carriedBlob(key, of: value, from: object.carried) {
                        batch.put(key, storedBlob: blob)
                        bytes += key.count
                    } else {
                        batch.putExternal(key, value)
                        bytes += key.count + value.count
                    }
                }
            }
            if batch.count >= operationsPerCommit || bytes >= GenerationRewriter.chunkBytes {
                try destination.commit(batch)
                batch = WriteBatch()
                bytes = 0
            }
        }
        for (entity, count) in counts { batch.put(RecordKeys.count(entity: entity), EntityCounts.encode(count)) }
        if !batch.isEmpty { try destination.commit(batch) }
    }

    /// The blob file the source generation holds `value` in for the new asset key `key`, when
    /// `carried` names the old key it was read from and that key's value is a blob of the same
    /// length: the new key is pointed at that file rather than written anew (FORMAT.md,
    /// "Migrations"). The old key still references the blob when the commit applies, since the
    /// old generation is only swept after the switch.
    private func carriedBlob(_ key: [UInt8], of value: [UInt8], from carried: [[UInt8]: [UInt8]]) throws -> StoredBlob? {
        guard let old = carried[key], let blob = try source.engine.storedBlob(forKey: source.engineKey(old)),
            blob.length == UInt64(value.count)
        else { return nil }
        return blob
    }
}
