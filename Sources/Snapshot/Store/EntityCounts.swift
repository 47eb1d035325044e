import Engine

/// How many objects of each concrete entity a generation holds (FORMAT.md, "Per-entity
/// counts"): the generation's `C` keys, held in memory once read at open. Each save's commit
/// puts the new count of every entity it inserted into or deleted from, so a count without
/// predicate reads no record.
///
/// `@unchecked Sendable`: its state is read and changed only under the owning store's lock
/// (``WALDataStore/gate``); a planned change is installed (``install(_:)``) only once the commit
/// that writes it has returned.
final class EntityCounts: @unchecked Sendable {
    private let space: RecordSpace
    private let schema: Schema
    /// Count per concrete entity name (an entity absent here holds no object); `nil` until
    /// read, or after a commit this store did not plan.
    private var counts: [String: UInt64]?
    /// How many times ``load()`` counted the records (read by a test hook).
    private(set) var countingScans = 0

    init(space: RecordSpace, schema: Schema) {
        self.space = space
        self.schema = schema
    }

    /// Reads the generation's `C` keys, unless they were read already. A generation that holds
    /// records but no count key (written before counts were kept) is counted by one scan of its
    /// records, and the counts written in one commit, so later opens read only the keys.
    func load() throws {
        guard counts == nil else { return }
        var loaded: [String: UInt64] = [:]
        var cursor = try space.scan(prefix: RecordKeys.countPrefix)
        var found = false
        while let entry = try cursor.next() {
            found = true
            guard let entity = Self.entity(in: entry.key) else { throw RecordDecodingError("a malformed count key", key: entry.key) }
            loaded[entity] = try Self.decode(try entry.value(), key: entry.key)
        }
        // Only a generation without any count key needs to know whether it holds a record.
        var records: RecordSpace.Scan? = found ? nil : try space.scan(.prefix([RecordKeys.recordTag]), limit: 1)
        if try records?.next() != nil {
            countingScans += 1
            loaded = try Self.countingRecords(in: space, schema: schema)
            var batch = WriteBatch()
            for (entity, count) in loaded.sorted(by: { $0.key < $1.key }) { batch.put(RecordKeys.count(entity: entity), Self.encode(count)) }
            try space.commit(batch)
        }
        counts = loaded
    }

    /// How many objects of exactly `entity` the generation holds.
    func count(of entity: String) throws -> UInt64 {
        try load()
        return counts?[entity] ?? 0
    }

    /// The counts once a save that inserts and deletes `changes` (objects per concrete
    /// entity: positive for inserts, negative for deletes) is committed; the keys that store
    /// them are put into `batch`. Nothing changes in memory until ``install(_:)``.
    ///
    /// A count that `pending` (a shared commit's earlier saves, planned and not yet committed)
    /// writes is read from there: those saves' changes are not installed yet.
    func planned(_ changes: [String: Int], over pending: PendingWrites = .none, into batch: inout WriteBatch) throws -> [String: UInt64] {
        var result: [String: UInt64] = [:]
        for (entity, change) in changes.sorted(by: { $0.key < $1.key }) where change != 0 {
            let key = RecordKeys.count(entity: entity)
            let old: UInt64
            switch pending.value(forKey: space.engineKey(key)) {
            case .put(let bytes, _)?: old = try Self.decode(bytes, key: key)
            case .deleted?: old = 0
            case nil: old = try count(of: entity)
            }
            let magnitude = UInt64(change.magnitude)
            let (new, overflow) = change > 0 ? old.addingReportingOverflow(magnitude) : old.subtractingReportingOverflow(magnitude)
            guard !overflow else {
                throw RecordDecodingError("a count of \(old) \(entity) objects, from which a save deletes \(change.magnitude)", key: key)
            }
            result[entity] = new
            batch.put(key, Self.encode(new))
        }
        return result
    }

    /// Makes counts ``planned(_:into:)`` returned the current ones (their commit returned).
    func install(_ planned: [String: UInt64]) {
        guard counts != nil else { return }
        for (entity, count) in planned { counts?[entity] = count }
    }

    /// Every count 0 (the generation was erased).
    func removeAll() { counts = [:] }

    /// Forgets the counts read, to read them again at the next use (after a commit this store
    /// did not plan).
    func invalidate() { counts = nil }

    // MARK: Encoding

    static func encode(_ count: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: count >> (56 - 8 * UInt64($0))) }
    }

    static func decode(_ bytes: [UInt8], key: [UInt8]) throws(RecordDecodingError) -> UInt64 {
        guard bytes.count == 8 else { throw RecordDecodingError("a count value of \(bytes.count) bytes, not 8", key: key) }
        return bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The entity name of a `C` key, when the key is well formed.
    private static func entity(in key: [UInt8]) -> String? {
        guard key.count > 2, key.last == 0, !key.dropFirst().dropLast().contains(0) else { return nil }
        return String(validating: key.dropFirst().dropLast(), as: UTF8.self)
    }

    /// The count of each concrete entity, from the entity name of every record.
    private static func countingRecords(in space: RecordSpace, schema: Schema) throws -> [String: UInt64] {
        var counts: [String: UInt64] = [:]
        var cursor = try space.scan(prefix: [RecordKeys.recordTag])
        while let entry = try cursor.next() {
            let bytes = try entry.value()
            // A generation of either records format (an upgrade reads the old one).
            let entity =
                bytes.first == RecordReader.version
                ? try RecordReader(bytes, key: entry.key).entityName : try Format1Record.entityName(in: bytes, key: entry.key)
            guard schema.entity(named: entity) != nil else {
                throw RecordDecodingError("a record of \(entity), which is not an entity of the schema", key: entry.key)
            }
            counts[entity, default: 0] += 1
        }
        return counts
    }
}
