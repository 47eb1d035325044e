import Engine
import Foundation

/// One disagreement between a `WALDataStore`'s records and the other entries of its key space.
package struct RecordProblem: Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable {
        /// A record that does not decode under the stored schema (or names an asset that is gone).
        case undecodableRecord
        /// An entry a record derives (index, uniqueness, back reference, join record or its
        /// mirror, asset) that the store does not hold.
        case missingEntry
        /// An entry a record derives that the store holds with another value.
        case wrongValue
        /// An entry no record derives: an index, uniqueness, back-reference or link entry (or
        /// an asset) left behind.
        case extraEntry
        /// A to-one reference or a link to an object the store does not hold.
        case danglingReference
    }
    package var kind: Kind
    /// The engine key concerned (without the generation prefix).
    package var key: [UInt8]
    package var message: String
}

/// What ``StoreInspector/checkRecords(limit:progress:)`` found.
package struct RecordCheckReport: Sendable {
    /// Records read.
    package var records = 0
    /// Entries of the live generation read (records included).
    package var entries = 0
    /// The first `limit` problems, in the order found.
    package var problems: [RecordProblem] = []
    /// Every problem found, including those past `limit`.
    package var problemCount = 0
    /// Index and uniqueness entries were not compared (a header of version 2 keeps strings in
    /// the legacy normalization until the store's next open rewrites them).
    package var skippedIndexes = false
    /// What would make the derived entries agree with the records, one write per problem that
    /// the records alone can settle (an entry missing or with another value: the value the
    /// records derive; an entry or asset no record derives: removed; a count: the records'
    /// tally). Undecodable records, missing assets and dangling references have none.
    package var repairs: [DerivedEntryRepair] = []

    /// Counts a problem, and keeps it when fewer than `limit` are kept.
    mutating func note(_ kind: RecordProblem.Kind, _ key: [UInt8], _ message: String, limit: Int) {
        problemCount += 1
        if problems.count < limit { problems.append(RecordProblem(kind: kind, key: key, message: message)) }
    }
}

/// One write that makes a derived entry agree with the records: `value` nil removes the key.
package struct DerivedEntryRepair: Sendable, Equatable {
    /// The engine key without the generation prefix.
    package var key: [UInt8]
    package var value: [UInt8]?
}

extension StoreInspector {
    /// Checks that every record decodes under the stored schema and that the store's other
    /// entries are exactly those the records derive (``RecordMapper/entries(of:)``): no index,
    /// uniqueness, back-reference, link or asset entry missing, different or extra, and no
    /// reference to an object that is not there. Reads every key of the live generation once;
    /// writes nothing. `progress` gets (records done, records in all).
    ///
    /// It runs in two passes at most. The first holds no entry in memory: it sums a digest of
    /// every stored entry as the scan lends it and a digest of every entry the records derive,
    /// and when the two agree (with the counts) nothing is missing, different or extra. Only
    /// when they disagree does the second pass keep the stored entries in a table, to name each
    /// disagreement.
    package func checkRecords(limit: Int = 1000, progress: (Int, Int) -> Void = { _, _ in }) throws -> RecordCheckReport {
        guard mapper.format == .format2 else {
            throw StoreInspectionError(
                .olderRecordsFormat,
                "the store's records are of records format 1 (header version \(headerVersion)): open it once with this version's WALDataStore to upgrade it, then verify"
            )
        }
        if let report = try checkRecordsByDigest(limit: limit, progress: progress) { return report }
        return try checkRecordsEntryByEntry(limit: limit, progress: progress)
    }

    /// The full comparison: every stored entry but the records is held in a table, and each
    /// entry a record derives is looked up and removed; what is left is extra.
    func checkRecordsEntryByEntry(limit: Int, progress: (Int, Int) -> Void) throws -> RecordCheckReport {
        var report = RecordCheckReport()
        func problem(_ kind: RecordProblem.Kind, _ key: [UInt8], _ message: String) { report.note(kind, key, message, limit: limit) }
        report.skippedIndexes = headerVersion < 3
        // Every entry but the records (small values) and the assets (keys only).
        var stored: [CheckedKey: [UInt8]] = [:]
        var assets = Set<CheckedKey>()
        var records = Set<CheckedKey>()
        for tag in RecordSpace.recordTags {
            var scan = try space.scan(prefix: [tag])
            while let entry = try scan.next() {
                report.entries += 1
                switch tag {
                case RecordKeys.recordTag: records.insert(CheckedKey(entry.key))
                case RecordKeys.assetTag: assets.insert(CheckedKey(entry.key))
                case RecordKeys.indexTag where report.skippedIndexes, RecordKeys.uniqueTag where report.skippedIndexes: continue
                default: stored[CheckedKey(entry.key)] = try entry.value()
                }
            }
        }
        let total = records.count
        // Join-writing to-many relationships per entity: the only to-many arrays whose entries
        // a record derives.
        let joinRelationships = joinWritingRelationships()
        func exists(_ id: PersistentIdentifier) -> Bool { mapper.recordKey(id).map { records.contains(CheckedKey($0)) } ?? false }
        // Objects per concrete entity, as the records say: what the count keys must hold.
        var tallies: [String: UInt64] = [:]
        let hasCounts = stored.keys.contains { $0.bytes.first == RecordKeys.countTag }
        for root in roots {
            try forEachObject(root: root.name, toMany: false) { key, object in
                report.records += 1
                if report.records % 4096 == 0 { progress(report.records, total) }
                guard case .success(var snapshot) = object else {
                    if case .failure(let error) = object { problem(.undecodableRecord, key, "the record does not decode: \(error)") }
                    return
                }
                let id = snapshot.persistentIdentifier
                tallies[id.entityName, default: 0] += 1
                for relationship in joinRelationships[id.entityName] ?? [] {
                    let targets = try targets(of: id, through: relationship)
                    snapshot.values[relationship.name] = .toMany(targets)
                    for target in targets where !exists(target) {
                        problem(
                            .danglingReference, key,
                            "\(RecordName.of(id)).\(relationship.name) links to \(RecordName.of(target)), which the store does not hold")
                    }
                }
                for (name, value) in snapshot.values {
                    if case .toOne(let target?) = value, !exists(target) {
                        problem(
                            .danglingReference, key, "\(RecordName.of(id)).\(name) refers to \(RecordName.of(target)), which the store does not hold")
                    }
                }
                for (derived, entry) in mapper.entries(of: snapshot) {
                    guard let tag = derived.first else { continue }
                    switch tag {
                    case RecordKeys.recordTag:
                        continue
                    case RecordKeys.assetTag:
                        if assets.remove(CheckedKey(derived)) == nil {
                            problem(.missingEntry, derived, "the asset of \(RecordName.of(id)) is missing")
                        }
                    case RecordKeys.indexTag where report.skippedIndexes, RecordKeys.uniqueTag where report.skippedIndexes:
                        continue
                    default:
                        guard case .inline(let expected) = entry else { continue }
                        guard let found = stored.removeValue(forKey: CheckedKey(derived)) else {
                            problem(.missingEntry, derived, "\(Self.kindName(tag)) of \(RecordName.of(id)) is missing")
                            report.repairs.append(DerivedEntryRepair(key: derived, value: expected))
                            continue
                        }
                        if found != expected {
                            problem(.wrongValue, derived, "\(Self.kindName(tag)) of \(RecordName.of(id)) holds another value than its record derives")
                            report.repairs.append(DerivedEntryRepair(key: derived, value: expected))
                        }
                    }
                }
            }
        }
        progress(report.records, total)
        checkCounts(tallies: tallies, found: &stored, hasCounts: hasCounts, limit: limit, report: &report)
        for key in stored.keys.map(\.bytes).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            problem(.extraEntry, key, "\(Self.kindName(key.first ?? 0)) that no record derives")
            report.repairs.append(DerivedEntryRepair(key: key, value: nil))
        }
        for key in assets.map(\.bytes).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            problem(.extraEntry, key, "an asset that no record names")
            report.repairs.append(DerivedEntryRepair(key: key, value: nil))
        }
        return report
    }

    /// Checks each entity's count key, taken out of `found`, against the objects the records
    /// hold (`tallies`), noting a count that says another number or is missing, with the repair
    /// that writes the records' tally. A generation with no count key at all (`hasCounts`
    /// false) is counted from its records at the next open (FORMAT.md §18): nothing is missing
    /// then.
    func checkCounts(
        tallies: [String: UInt64], found: inout [CheckedKey: [UInt8]], hasCounts: Bool, limit: Int, report: inout RecordCheckReport
    ) {
        for entity in schema.entities {
            let key = RecordKeys.count(entity: entity.name)
            let expected = tallies[entity.name] ?? 0
            if let value = found.removeValue(forKey: CheckedKey(key)) {
                if value != EntityCounts.encode(expected) {
                    let said = (try? EntityCounts.decode(value, key: key)).map(String.init) ?? "an undecodable count"
                    report.note(.wrongValue, key, "the count of \(entity.name) says \(said), the records hold \(expected)", limit: limit)
                    report.repairs.append(DerivedEntryRepair(key: key, value: EntityCounts.encode(expected)))
                }
            } else if hasCounts && expected > 0 {
                report.note(.missingEntry, key, "the count of \(entity.name) is missing (the records hold \(expected))", limit: limit)
                report.repairs.append(DerivedEntryRepair(key: key, value: EntityCounts.encode(expected)))
            }
        }
    }

    /// The to-many relationships whose join records each entity writes: the only to-many
    /// arrays whose entries a record derives.
    func joinWritingRelationships() -> [String: [Schema.Relationship]] {
        var result: [String: [Schema.Relationship]] = [:]
        for entity in schema.entities {
            result[entity.name] = schema.allProperties(of: entity.name).compactMap { property in
                guard case .relationship(let r) = property, r.isToMany, writesJoinRecords(r, of: entity.name) else { return nil }
                return r
            }
        }
        return result
    }

    /// A key hashed as one run of bytes (an array's own hashing feeds the hasher byte by byte).
    struct CheckedKey: Hashable {
        let bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
    }

    static func kindName(_ tag: UInt8) -> String {
        switch tag {
        case RecordKeys.indexTag: "the index entry"
        case RecordKeys.uniqueTag: "the uniqueness entry"
        case RecordKeys.backReferenceTag: "the back reference"
        case RecordKeys.joinTag: "the join record (CDMR)"
        case RecordKeys.joinMirrorTag: "the join record's mirror"
        case RecordKeys.countTag: "the count"
        case RecordKeys.assetTag: "the asset"
        default: "the entry"
        }
    }
}

/// What ``StoreInspector/rebuildDerivedEntries(progress:)`` did.
package struct DerivedEntryRebuild: Sendable {
    /// The check before: every problem found.
    package var before: RecordCheckReport
    /// Entries written (missing ones, or ones that held another value than their record derives).
    package var written = 0
    /// Entries removed (no record derives them).
    package var removed = 0
    /// The check after the writes: what the records alone cannot settle (a record that does not
    /// decode, an asset that is gone, a reference to an object the store does not hold).
    package var after: RecordCheckReport
}

extension StoreInspector {
    /// Makes every derived entry of the live generation — index, uniqueness, back reference,
    /// join record and its mirror, asset entry, per-entity count — agree with the records that are
    /// there (``checkRecords(limit:progress:)``'s repairs, written in one commit), then checks
    /// again. For a store whose records survived a salvage that lost commits: the entries the lost
    /// commits wrote or removed are made to follow the surviving records. Records are never
    /// changed: an undecodable record or a dangling reference is left, and reported by the second
    /// check. Throws what the check throws (records format 1 is refused).
    package func rebuildDerivedEntries(limit: Int = 1000, progress: (Int, Int) -> Void = { _, _ in }) throws -> DerivedEntryRebuild {
        let before = try checkRecords(limit: limit, progress: progress)
        var rebuild = DerivedEntryRebuild(before: before, after: before)
        guard !before.repairs.isEmpty else { return rebuild }
        var batch = WriteBatch()
        for repair in before.repairs {
            if let value = repair.value {
                batch.put(repair.key, value)
                rebuild.written += 1
            } else {
                batch.delete(repair.key)
                rebuild.removed += 1
            }
        }
        try space.commit(batch)
        rebuild.after = try checkRecords(limit: limit, progress: progress)
        return rebuild
    }
}
