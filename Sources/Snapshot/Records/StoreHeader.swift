import Engine
import Foundation

/// The store's header record under ``RecordKeys/meta``: a version byte (1), the store
/// identifier (varint length + UTF-8), and the schema fingerprint (8 bytes big-endian, FNV-1a
/// 64 of the schema's sorted-keys JSON). The identifier is made once, at the first open; the
/// fingerprint is rewritten when the schema changes (it is informational: no migration is
/// made or refused on it yet).
enum StoreHeader {
    /// The store identifier, creating (durably) or updating the header as needed.
    static func load(from engine: LogStore, schema: Schema) throws -> String {
        let fingerprint = try Self.fingerprint(of: schema)
        if let bytes = try engine.value(forKey: RecordKeys.meta) {
            var reader = ByteReader(bytes, key: RecordKeys.meta)
            guard try reader.byte() == 1 else { throw reader.failure("an unknown header version") }
            let identifier = try reader.string()
            let stored = try reader.bigEndian64()
            guard !identifier.isEmpty, reader.isAtEnd else { throw reader.failure("a malformed header") }
            if stored != fingerprint { try write(identifier, fingerprint, to: engine) }
            return identifier
        }
        let identifier = UUID().uuidString
        try write(identifier, fingerprint, to: engine)
        return identifier
    }

    private static func write(_ identifier: String, _ fingerprint: UInt64, to engine: LogStore) throws {
        var value: [UInt8] = [1]
        value.appendLengthPrefixed(Array(identifier.utf8))
        value.appendBigEndian(fingerprint)
        try engine.write { $0.put(RecordKeys.meta, value) }
    }

    static func fingerprint(of schema: Schema) throws -> UInt64 {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes = try encoder.encode(schema)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes {
            hash ^= UInt64(b)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
