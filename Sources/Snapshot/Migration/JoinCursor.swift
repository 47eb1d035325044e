import Engine
import Foundation

/// The join records of one side of a to-many relationship, for the objects of one entity, read
/// in one streaming scan as a migration walks that entity's records in primary-key order.
///
/// A join key names its object as `<Entity>_<UUID>` (upper-case hex) right after the
/// relationship's prefix, so for one entity the keys come in the order of the primary keys —
/// the order of the record keys (`R` root 0x00 pk). Asking for the targets of ever larger
/// primary keys therefore reads each key once, and holds no more than the scan's current batch.
struct JoinCursor {
    private var scan: RecordSpace.Scan
    private let prefixCount: Int
    /// The next key not yet returned: its object's primary key and the far end.
    private var pending: (primaryKey: UUID, target: (entity: String, primaryKey: UUID))?

    /// The keys under `relationshipPrefix` (``RecordKeys/joinRelationshipPrefix(mirror:entities:relationships:)``)
    /// whose near end is an object of `entity`.
    init(_ space: RecordSpace, relationshipPrefix: [UInt8], entity: String) throws {
        let prefix = relationshipPrefix + Array("\(entity)_".utf8)
        prefixCount = relationshipPrefix.count
        scan = try space.scan(prefix: prefix)
        try advance()
    }

    private mutating func advance() throws {
        guard let entry = try scan.next() else {
            pending = nil
            return
        }
        let rest = entry.key[prefixCount...]
        guard let zero = rest.firstIndex(of: 0), let (_, here) = RecordName.parse(utf8: rest[..<zero]),
            let (otherEntity, other) = RecordName.parse(utf8: rest[(zero + 1)...])
        else { throw RecordDecodingError("a join key whose components are not record names", key: entry.key) }
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
