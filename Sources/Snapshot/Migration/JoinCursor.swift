import Engine
import Foundation

/// The join records of one side of a to-many relationship, for the objects of one entity, read
/// in one streaming scan as a migration walks that entity's records in primary-key order.
///
/// A link key names its object right after the relationship's prefix — by its primary key's
/// 16 bytes (records format 2), or as `<Entity>_<UUID>` in upper-case hex (format 1) — so for
/// one entity the keys come in the order of the primary keys, the order of the record keys
/// (`R` root 0x00 pk). Asking for the targets of ever larger
/// primary keys therefore reads each key once, and holds no more than the scan's current batch.
struct JoinCursor {
    private var scan: RecordSpace.Scan
    private let prefixCount: Int
    private let mapper: RecordMapper
    /// The next key not yet returned: its object's primary key and the far end.
    private var pending: (primaryKey: UUID, target: (entity: String, primaryKey: UUID))?

    /// The keys under `relationshipPrefix` (``RecordKeys/joinRelationshipPrefix(mirror:entities:relationships:)``)
    /// in `mapper`'s generation whose near end may be an object of `entity` (in records format
    /// 1, the keys of `entity`'s objects; in format 2, whose keys start with the primary key,
    /// every key of the relationship side: those of other entities' objects are passed over).
    init(_ mapper: RecordMapper, relationshipPrefix: [UInt8], entity: String) throws {
        let prefix = mapper.format == .format1 ? relationshipPrefix + Array("\(entity)_".utf8) : relationshipPrefix
        self.mapper = mapper
        prefixCount = relationshipPrefix.count
        scan = try mapper.records.scan(prefix: prefix)
        try advance()
    }

    private mutating func advance() throws {
        guard let entry = try scan.next() else {
            pending = nil
            return
        }
        let (here, otherEntity, other) = try mapper.joinComponents(entry.key, prefixLength: prefixCount)
        pending = (here, (otherEntity, other))
    }

    /// The far ends of the keys of the object `primaryKey`, unsorted. Keys of smaller primary
    /// keys not asked for (objects without a record) are passed over.
    mutating func targets(of primaryKey: UUID) throws -> [(entity: String, primaryKey: UUID)] {
        var result: [(entity: String, primaryKey: UUID)] = []
        while let (here, target) = pending {
            let order = Self.compare(here, primaryKey)
            if order > 0 { break }
            if order == 0 { result.append(target) }
            try advance()
        }
        return result
    }

    /// The byte order of two primary keys (the order of record keys and of their upper-case hex).
    static func compare(_ a: UUID, _ b: UUID) -> Int {
        withUnsafeBytes(of: a.uuid) { x in
            withUnsafeBytes(of: b.uuid) { y in
                for i in 0..<16 where x[i] != y[i] { return x[i] < y[i] ? -1 : 1 }
                return 0
            }
        }
    }
}
