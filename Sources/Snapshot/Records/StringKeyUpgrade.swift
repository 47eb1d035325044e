import Engine
import Foundation

/// The one-time upgrade of a store whose header is of version 1 or 2 (FORMAT.md, "Version
/// rule"): its index and uniqueness keys hold strings normalized by Foundation's
/// `precomposedStringWithCanonicalMapping` (``OrderedValueEncoding/Normalization/legacy``),
/// which for a few strings (combining marks newer than Foundation's Unicode data, some old
/// Hangul jamo) differs from the standard library's NFC that `String`'s `==` and this store's
/// order use. For an ASCII or ordinary NFC string the two encodings are the same bytes, so most
/// stores have nothing to rewrite.
///
/// The upgrade reads the records of every root whose entities have an index or uniqueness
/// rule over a string, URL, array or Codable attribute, derives each object's keys both ways,
/// and replaces the keys that differ; then it writes the header in the current version, in the
/// last commit. It first checks, writing nothing, that no two objects now share the values of a
/// uniqueness rule (spellings that were told apart and are canonically equivalent): that is
/// refused with ``DataStoreError/Code/uniqueness`` naming both, and the files are unchanged.
/// A crash part way leaves the old header: the next open derives the same changes again (each
/// delete and put is idempotent) and finishes.
struct StringKeyUpgrade {
    let mapper: RecordMapper

    /// Commits of at most this many operations.
    static let chunkOperations = 65536

    init(schema: Schema, space: RecordSpace, storeIdentifier: String, assetThreshold: Int) {
        // Only stores of records format 1 have header versions 1 and 2.
        mapper = RecordMapper(
            layout: RecordLayout(schema: schema), records: space, storeIdentifier: storeIdentifier, assetThreshold: assetThreshold,
            countRecordRead: {},
            format: .format1)
    }

    /// The keys to delete and the entries to put.
    struct Changes {
        var deletes: [[UInt8]] = []
        var puts: [(key: [UInt8], value: [UInt8])] = []
        var isEmpty: Bool { deletes.isEmpty && puts.isEmpty }
    }

    /// Derives and checks the changes, then commits them with `header` (the header's bytes in
    /// the current version) in the last commit.
    func run(header: [UInt8]) throws {
        let changes = try derive()
        var batch = WriteBatch()
        func flushIfFull() throws {
            if batch.count >= Self.chunkOperations {
                try mapper.records.commit(batch)
                batch = WriteBatch()
            }
        }
        // Deletes first: a key one object gives up may be the key another object now takes.
        for key in changes.deletes {
            batch.delete(key)
            try flushIfFull()
        }
        for (key, value) in changes.puts {
            batch.put(key, value)
            try flushIfFull()
        }
        batch.put(RecordKeys.meta, header)
        try mapper.records.commit(batch)
    }

    /// The properties whose values may encode differently: attributes of an index or uniqueness
    /// rule whose type holds strings, by entity.
    private func affectedProperties() -> [String: Set<String>] {
        let layout = mapper.layout
        var result: [String: Set<String>] = [:]
        for entity in mapper.schema.entities {
            let rules = layout.indexes(of: entity.name).map(\.properties) + layout.uniquenessConstraints(of: entity.name).map(\.properties)
            let properties = Set(rules.joined())
            let stringy = properties.contains { name in
                guard case .attribute(let a)? = mapper.schema.property(named: name, in: entity.name) else { return false }
                switch a.valueType {
                case .string, .url, .array, .codable: return true
                default: return false
                }
            }
            if stringy { result[entity.name] = properties }
        }
        return result
    }

    /// Every key that differs between the encodings, with the uniqueness check.
    func derive() throws -> Changes {
        let affected = affectedProperties()
        guard !affected.isEmpty else { return Changes() }
        let roots = Set(affected.keys.map { mapper.layout.root(of: $0) })
        let properties = Set(affected.values.joined())
        var changes = Changes()
        /// Uniqueness keys the upgrade gives up, and those it takes (with their new owner).
        var released: Set<[UInt8]> = []
        var claimed: [[UInt8]: PersistentIdentifier] = [:]
        for root in roots.sorted() {
            let prefix = RecordKeys.recordPrefix(root: root)
            var cursor = try mapper.records.scan(prefix: prefix)
            while let entry = try cursor.next() {
                guard entry.key.count == prefix.count + 16 else { throw RecordDecodingError("a record key of the wrong length", key: entry.key) }
                let pk = RecordKeys.uuid(from: Array(entry.key.suffix(16)))
                let snapshot = try mapper.snapshot(
                    ofRecord: try entry.value(), key: entry.key, primaryKey: pk, root: root, toMany: false, only: properties)
                let id = snapshot.persistentIdentifier
                guard affected[id.entityName] != nil else { continue }
                let owner = RecordKeys.bytes(of: pk) + Array(id.entityName.utf8)
                for (old, new) in zip(mapper.indexKeys(of: snapshot, primaryKey: pk, .legacy), mapper.indexKeys(of: snapshot, primaryKey: pk))
                where old != new {
                    changes.deletes.append(old)
                    changes.puts.append((new, Array(id.entityName.utf8)))
                }
                for ((old, _), (new, rule)) in zip(mapper.uniqueKeys(of: snapshot, .legacy), mapper.uniqueKeys(of: snapshot)) where old != new {
                    if let other = claimed[new], other != id { throw collision(other, id, rule) }
                    claimed[new] = id
                    released.insert(old)
                    changes.deletes.append(old)
                    changes.puts.append((new, owner))
                }
            }
        }
        // A key taken now that another object holds and keeps: two objects, one value.
        for (key, id) in claimed.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) where !released.contains(key) {
            guard let bytes = try mapper.records.value(forKey: key) else { continue }
            guard bytes.count > 16, let entity = String(validating: bytes[16...], as: UTF8.self) else {
                throw RecordDecodingError("a malformed uniqueness entry", key: key)
            }
            let holder = try mapper.identifier(entity: entity, primaryKey: RecordKeys.uuid(from: Array(bytes[..<16])))
            if holder != id { throw collision(holder, id, ruleName(of: key, entity: id.entityName)) }
        }
        return changes
    }

    /// The properties of the uniqueness rule whose key `key` is, for the message.
    private func ruleName(of key: [UInt8], entity: String) -> [String] {
        mapper.layout.uniquenessConstraints(of: entity).first { constraint in
            key.starts(with: RecordKeys.unique(entity: constraint.declaredBy, constraint: RecordKeys.listName(constraint.properties), values: []))
        }?.properties ?? []
    }

    private func collision(_ a: PersistentIdentifier, _ b: PersistentIdentifier, _ rule: [String]) -> DataStoreError {
        DataStoreError(
            .uniqueness,
            "\(a) and \(b) hold canonically equivalent spellings of the same values of the uniqueness rule (\(rule.joined(separator: ", "))) of \(b.entityName), which this version of the store compares as equal; open the store with the previous version and change or delete one of them. The store is unchanged.",
            entityName: b.entityName, propertyName: rule.first, identifier: b, constraint: rule, relatedIdentifiers: [a])
    }
}
