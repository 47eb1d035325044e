import Engine
import Foundation

extension StoreInspector {
    /// The first pass of ``checkRecords(limit:progress:)``, which holds no entry in memory: a
    /// digest of every stored entry but the records (summed as the scan lends each one), against
    /// a digest of every entry the records derive. The records are decoded in batches, whose
    /// to-many links are read with one scan a batch. Returns the report when the digests and the
    /// counts agree (every problem then is a record that does not decode or a reference to an
    /// object the store does not hold, both found here), nil when they disagree: then some entry
    /// is missing, different or extra, and only a comparison entry by entry can say which.
    func checkRecordsByDigest(limit: Int, progress: (Int, Int) -> Void) throws -> RecordCheckReport? {
        var report = RecordCheckReport()
        report.skippedIndexes = headerVersion < 3
        func problem(_ kind: RecordProblem.Kind, _ key: [UInt8], _ message: String) { report.note(kind, key, message, limit: limit) }
        let skippedIndexes = report.skippedIndexes
        // The stored side, and which objects exist (primary keys by root).
        var stored = EntryDigest()
        var counts: [CheckedKey: [UInt8]] = [:]
        let rootPrefixes = roots.map { (name: $0.name, prefix: RecordKeys.recordPrefix(root: $0.name)) }
        var existing: [String: Set<UUID>] = [:]
        for tag in RecordSpace.recordTags {
            var scan = try space.scan(prefix: [tag])
            while try scan.withNext({ key, entry throws(EngineError) -> Void in
                report.entries += 1
                switch tag {
                case RecordKeys.recordTag:
                    for (name, prefix) in rootPrefixes where key.count == prefix.count + 16 && key.starts(with: prefix) {
                        existing[name, default: []].insert(RecordKeys.uuid(from: UnsafeRawBufferPointer(rebasing: key[prefix.count...])))
                    }
                case RecordKeys.assetTag:
                    stored.add(key: key, value: nil)
                case RecordKeys.indexTag where skippedIndexes, RecordKeys.uniqueTag where skippedIndexes:
                    break
                case RecordKeys.countTag:
                    counts[CheckedKey(Array(key))] = try entry.value()
                default:
                    try entry.withValue { value throws(EngineError) in stored.add(key: key, value: value) }
                }
            }) != nil {}
        }
        let total = existing.values.reduce(0) { $0 + $1.count }
        func exists(_ id: PersistentIdentifier) -> Bool {
            guard let pk = RecordMapper.primaryKey(of: id) else { return false }
            return existing[root(of: id.entityName)]?.contains(pk) ?? false
        }
        // The derived side, a batch of decoded records at a time.
        let joinRelationships = joinWritingRelationships()
        var derived = EntryDigest()
        var tallies: [String: UInt64] = [:]
        var batch: [(key: [UInt8], snapshot: DefaultSnapshot)] = []
        func checkBatch() throws {
            var byEntity: [String: [Int]] = [:]
            for (i, item) in batch.enumerated() { byEntity[item.snapshot.persistentIdentifier.entityName, default: []].append(i) }
            for (entity, positions) in byEntity {
                for relationship in joinRelationships[entity] ?? [] {
                    let ids = positions.map { batch[$0].snapshot.persistentIdentifier }
                    let targets = try mapper.targets(of: ids, through: relationship, entity: entity)
                    for (position, found) in zip(positions, targets) {
                        batch[position].snapshot.values[relationship.name] = .toMany(found)
                        let id = batch[position].snapshot.persistentIdentifier
                        for target in found where !exists(target) {
                            problem(
                                .danglingReference, batch[position].key,
                                "\(RecordName.of(id)).\(relationship.name) links to \(RecordName.of(target)), which the store does not hold")
                        }
                    }
                }
            }
            for (key, snapshot) in batch {
                let id = snapshot.persistentIdentifier
                tallies[id.entityName, default: 0] += 1
                for (name, value) in snapshot.values {
                    if case .toOne(let target?) = value, !exists(target) {
                        problem(
                            .danglingReference, key, "\(RecordName.of(id)).\(name) refers to \(RecordName.of(target)), which the store does not hold")
                    }
                }
                for (derivedKey, entry) in mapper.entries(of: snapshot) {
                    switch derivedKey.first {
                    case RecordKeys.recordTag?:
                        continue
                    case RecordKeys.assetTag?:
                        derivedKey.withUnsafeBytes { derived.add(key: $0, value: nil) }
                    case RecordKeys.indexTag? where skippedIndexes, RecordKeys.uniqueTag? where skippedIndexes:
                        continue
                    default:
                        guard case .inline(let value) = entry else { continue }
                        derivedKey.withUnsafeBytes { k in value.withUnsafeBytes { v in derived.add(key: k, value: v) } }
                    }
                }
            }
            batch.removeAll(keepingCapacity: true)
        }
        for root in roots {
            try forEachObject(root: root.name, toMany: false) { key, object in
                report.records += 1
                if report.records % 4096 == 0 { progress(report.records, total) }
                switch object {
                case .success(let snapshot):
                    batch.append((key, snapshot))
                    if batch.count == Self.checkBatchSize { try checkBatch() }
                case .failure(let error):
                    problem(.undecodableRecord, key, "the record does not decode: \(error)")
                }
            }
            try checkBatch()
        }
        progress(report.records, total)
        checkCounts(tallies: tallies, found: &counts, hasCounts: !counts.isEmpty, limit: limit, report: &report)
        guard counts.isEmpty, stored == derived else { return nil }
        return report
    }

    /// Decoded records whose to-many links one scan reads.
    static let checkBatchSize = 512

    /// An order-free digest of a multiset of entries (key and value; a key alone for an asset):
    /// how many, and two sums of a seeded hash of each. Two multisets that differ give equal
    /// digests only by chance (the seed is the process's, so no stored bytes can aim at it).
    struct EntryDigest: Equatable {
        var count = 0
        var sum: UInt64 = 0
        var squares: UInt64 = 0

        mutating func add(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) {
            var hasher = Hasher()
            hasher.combine(key.count)
            hasher.combine(bytes: key)
            if let value {
                hasher.combine(value.count)
                hasher.combine(bytes: value)
            }
            let h = UInt64(truncatingIfNeeded: hasher.finalize())
            count += 1
            sum &+= h
            squares &+= h &* h
        }
    }
}
