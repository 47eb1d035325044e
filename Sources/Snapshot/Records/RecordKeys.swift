import Foundation

/// The keys of the record layer in the engine's ordered key space (FORMAT.md, "Records (the
/// Snapshot layer)"): one tag byte per kind, then components. Names in keys (entities,
/// relationships, index and constraint names, record names) are schema identifiers or record
/// names, which hold no 0x00 byte; each is terminated by 0x00, so a prefix ending in a
/// terminator selects exactly one name. Primary keys are the 16 bytes of a UUID.
enum RecordKeys {
    /// The store's header: its identifier and the schema's fingerprint.
    static let meta: [UInt8] = [0x00] + Array("store".utf8)
    static let recordTag: UInt8 = 0x52  // R
    static let assetTag: UInt8 = 0x41  // A
    static let backReferenceTag: UInt8 = 0x42  // B
    static let joinTag: UInt8 = 0x4D  // M
    static let joinMirrorTag: UInt8 = 0x4E  // N
    static let indexTag: UInt8 = 0x49  // I
    static let uniqueTag: UInt8 = 0x55  // U
    static let countTag: UInt8 = 0x43  // C
    /// The longest key of the record layer, before its generation prefix: the engine's limit
    /// (65,535 bytes) less the longest generation prefix (`01` and 4 bytes).
    static let maxKeyLength = 65_535 - 5

    static func bytes(of uuid: UUID) -> [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }

    /// A UUID from exactly 16 bytes (the first 16; zeros for missing ones).
    /// The UUID whose 16 bytes start `bytes` (at least 16 long), copied at once.
    static func uuid(from bytes: UnsafeRawBufferPointer) -> UUID {
        precondition(bytes.count >= 16, "a primary key is 16 bytes")
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[..<16])) }
        return UUID(uuid: raw)
    }

    static func uuid(from bytes: some Collection<UInt8>) -> UUID {
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { dst in
            for (i, b) in bytes.prefix(16).enumerated() { dst[i] = b }
        }
        return UUID(uuid: raw)
    }

    static func name(_ s: String) -> [UInt8] { Array(s.utf8) + [0x00] }

    /// `R` root 0x00 — every record of a root entity.
    static func recordPrefix(root: String) -> [UInt8] { [recordTag] + name(root) }
    /// `R` root 0x00 pk(16).
    static func record(root: String, primaryKey: UUID) -> [UInt8] { recordPrefix(root: root) + bytes(of: primaryKey) }
    /// `A` root 0x00 pk(16) attribute — one asset (a blob) of a record.
    static func asset(root: String, primaryKey: UUID, attribute: String) -> [UInt8] {
        [assetTag] + name(root) + bytes(of: primaryKey) + Array(attribute.utf8)
    }
    /// `B` destRoot 0x00 destPK(16) relationship 0x00 — every source pointing at the
    /// destination through the to-one `relationship` (named `<DeclaringEntity>.<name>`).
    static func backReferencePrefix(destinationRoot: String, destination: UUID, relationship: String) -> [UInt8] {
        [backReferenceTag] + name(destinationRoot) + bytes(of: destination) + name(relationship)
    }
    /// `B` destRoot 0x00 — every to-one reference pointing at an object of the root.
    static func backReferenceRootPrefix(destinationRoot: String) -> [UInt8] { [backReferenceTag] + name(destinationRoot) }
    /// `B` destRoot 0x00 destPK(16) — every to-one reference pointing at the destination.
    static func backReferencePrefix(destinationRoot: String, destination: UUID) -> [UInt8] {
        [backReferenceTag] + name(destinationRoot) + bytes(of: destination)
    }
    /// `B` destRoot 0x00 destPK relationship 0x00 sourceEntity 0x00 sourcePK.
    static func backReference(destinationRoot: String, destination: UUID, relationship: String, sourceEntity: String, source: UUID) -> [UInt8] {
        backReferencePrefix(destinationRoot: destinationRoot, destination: destination, relationship: relationship) + name(sourceEntity)
            + bytes(of: source)
    }
    /// `M` (or `N`) "EntityA:EntityB" 0x00 "relA:relB" 0x00 — every link of one relationship
    /// (every mirror, for `N`).
    static func joinRelationshipPrefix(mirror: Bool, entities: String, relationships: String) -> [UInt8] {
        [mirror ? joinMirrorTag : joinTag] + name(entities) + name(relationships)
    }
    /// `M` (or `N`) "EntityA:EntityB" 0x00 "relA:relB" 0x00 pk(16) — every link of one object
    /// on side A (on side B, for `N`).
    static func joinPrefix(mirror: Bool, entities: String, relationships: String, primaryKey: UUID) -> [UInt8] {
        joinRelationshipPrefix(mirror: mirror, entities: entities, relationships: relationships) + bytes(of: primaryKey)
    }
    /// `M` (or `N`) "EntityA:EntityB" 0x00 "relA:relB" 0x00 pk(16) otherEntity 0x00 otherPK(16):
    /// one link (records format 2), a key with an empty value.
    static func join(mirror: Bool, entities: String, relationships: String, primaryKey: UUID, otherEntity: String, otherPrimaryKey: UUID) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(36 + entities.utf8.count + relationships.utf8.count + otherEntity.utf8.count)
        key.append(mirror ? joinMirrorTag : joinTag)
        key.append(contentsOf: entities.utf8)
        key.append(0)
        key.append(contentsOf: relationships.utf8)
        key.append(0)
        withUnsafeBytes(of: primaryKey.uuid) { key.append(contentsOf: $0) }
        key.append(contentsOf: otherEntity.utf8)
        key.append(0)
        withUnsafeBytes(of: otherPrimaryKey.uuid) { key.append(contentsOf: $0) }
        return key
    }
    /// The components of a format-2 link key after its relationship prefix: the near end's
    /// primary key, the far end's concrete entity and primary key.
    static func parseJoinSuffix(_ key: [UInt8], prefixLength: Int) throws(RecordDecodingError) -> (primaryKey: UUID, otherEntity: String, other: UUID)
    {
        let nameStart = prefixLength + 16
        guard prefixLength >= 0, key.count >= nameStart + 18, let zero = key[nameStart...].firstIndex(of: 0), key.count - zero - 1 == 16,
            zero > nameStart,
            let entity = String(validating: key[nameStart..<zero], as: UTF8.self)
        else { throw RecordDecodingError("a malformed link key", key: key) }
        return (uuid(from: key[prefixLength..<nameStart]), entity, uuid(from: key[(zero + 1)...]))
    }
    /// As ``parseJoinSuffix(_:prefixLength:)`` for a key under an object's prefix
    /// (``joinPrefix(mirror:entities:relationships:primaryKey:)``): the far end.
    static func parseJoinTarget(_ key: [UInt8], objectPrefixLength: Int) throws(RecordDecodingError) -> (entity: String, primaryKey: UUID) {
        let parsed = try parseJoinSuffix(key, prefixLength: objectPrefixLength - 16)
        return (parsed.otherEntity, parsed.other)
    }

    /// `I` entity 0x00 indexName 0x00 — one declared index.
    static func indexPrefix(entity: String, index: String) -> [UInt8] { [indexTag] + name(entity) + name(index) }
    /// `U` entity 0x00 constraintName 0x00 encodedValues.
    static func unique(entity: String, constraint: String, values: [UInt8]) -> [UInt8] {
        unique(prefix: [uniqueTag] + name(entity) + name(constraint), values: values)
    }

    /// The tag that opens the values of a uniqueness key in its long form: no value encoding
    /// starts with it.
    static let hashedValuesTag: UInt8 = 0xFE

    /// The uniqueness key of `prefix` (`U` entity 0x00 constraint 0x00) and the values'
    /// order-preserving encoding `values`: the two together, or, when that would pass
    /// ``maxKeyLength``, `prefix`, ``hashedValuesTag`` and the SHA-256 digest of `values` (no store
    /// written before held so long a key, so the short form of every key they hold is unchanged).
    static func unique(prefix: [UInt8], values: [UInt8]) -> [UInt8] {
        guard prefix.count + values.count > maxKeyLength else { return prefix + values }
        return prefix + [hashedValuesTag] + SHA256.digest(values)
    }

    /// Whether the uniqueness key `key`, of a rule whose prefix is `prefixLength` bytes, holds
    /// its values' digest rather than the values.
    static func isHashedUnique(_ key: [UInt8], prefixLength: Int) -> Bool {
        key.count > prefixLength && key[prefixLength] == hashedValuesTag
    }

    /// `C` entity 0x00 — how many objects of exactly that (concrete) entity the generation holds.
    static func count(entity: String) -> [UInt8] { [countTag] + name(entity) }
    /// `C` — every count key.
    static let countPrefix: [UInt8] = [countTag]

    /// The name an index or constraint is stored under: its properties joined by `,`.
    static func listName(_ properties: [String]) -> String { properties.joined(separator: ",") }

    /// The components of a `B` key after its prefix: (source entity, source primary key).
    static func parseBackReferenceSuffix(_ key: [UInt8], prefixLength: Int) throws(RecordDecodingError) -> (String, UUID) {
        let rest = key.dropFirst(prefixLength)
        guard rest.count > 17, let zero = rest.firstIndex(of: 0), key.endIndex - zero - 1 == 16,
            let entity = String(validating: key[prefixLength..<zero], as: UTF8.self), !entity.isEmpty
        else { throw RecordDecodingError("a malformed back reference key", key: key) }
        return (entity, uuid(from: Array(key[(zero + 1)...])))
    }
}
