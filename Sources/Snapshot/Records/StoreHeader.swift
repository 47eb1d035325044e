import Engine
import Foundation

/// The store's header record under ``RecordKeys/meta`` (FORMAT.md, "Keys"): who the store is
/// and which schema its records are written in.
///
/// Version 4 is the bytes of version 3 under the version byte 4: its records and links are of
/// records format 2 (``RecordReader``, link keys without values); versions 1 to 3 hold records
/// format 1, which the first open rewrites (``StoreMigrator``). Version 3 holds the store identifier, the schema's fingerprint, the **live generation**
/// (whose record keys are the store's data, ``RecordSpace``), the schema's version identifier
/// when it has one, and the schema itself (its sorted-keys JSON), so that a store opened with
/// another schema can say what differs. Version 2 is the same bytes under the version byte 2:
/// its index and uniqueness keys normalize strings as ``OrderedValueEncoding/Normalization/legacy``
/// says, and its first open rewrites those keys that differ (``StringKeyUpgrade``). Version 1
/// (identifier and fingerprint only) is still read: its schema is known only by fingerprint.
struct StoreHeader: Equatable {
    static let currentVersion: UInt8 = 4

    /// The version byte the header was read with (``currentVersion`` for one made here): below
    /// 4, the live generation holds records format 1; below 3, its keys may also hold strings in
    /// the legacy normalization.
    var formatVersion: UInt8 = Self.currentVersion

    /// Made once, at the first open.
    var identifier: String
    /// The generation whose keys hold the store's records.
    var generation: UInt32
    /// The version identifier of the schema (from a ``VersionedSchema``), when known.
    var version: Schema.Version?
    /// The schema the records are written in; `nil` in a version-1 header.
    var schema: Schema?
    /// FNV-1a 64 of the schema's sorted-keys JSON.
    var fingerprint: UInt64

    init(identifier: String, generation: UInt32, version: Schema.Version?, schema: Schema) throws {
        self.identifier = identifier
        self.generation = generation
        self.version = version
        self.schema = schema
        self.fingerprint = Self.fingerprint(of: try Self.json(schema))
    }

    private init(identifier: String, generation: UInt32, version: Schema.Version?, schema: Schema?, fingerprint: UInt64, formatVersion: UInt8) {
        self.formatVersion = formatVersion
        self.identifier = identifier
        self.generation = generation
        self.version = version
        self.schema = schema
        self.fingerprint = fingerprint
    }

    /// The header `engine` holds, or `nil` in a new store.
    static func read(from engine: LogStore) throws -> StoreHeader? {
        guard let bytes = try engine.value(forKey: RecordKeys.meta) else { return nil }
        return try decode(bytes)
    }

    static func decode(_ bytes: [UInt8]) throws(RecordDecodingError) -> StoreHeader {
        var reader = ByteReader(bytes, key: RecordKeys.meta)
        let version = try reader.byte()
        guard (1...currentVersion).contains(version) else { throw reader.failure("header version \(version), expected 1 to \(currentVersion)") }
        let identifier = try reader.string()
        guard !identifier.isEmpty else { throw reader.failure("an empty store identifier") }
        let fingerprint = try reader.bigEndian64()
        if version == 1 {
            guard reader.isAtEnd else { throw reader.failure("bytes after a version-1 header") }
            return StoreHeader(identifier: identifier, generation: 0, version: nil, schema: nil, fingerprint: fingerprint, formatVersion: version)
        }
        let generation = try reader.take(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var schemaVersion: Schema.Version?
        switch try reader.byte() {
        case 0: break
        case 1:
            func part() throws(RecordDecodingError) -> Int {
                let v = try reader.varint()
                guard v <= UInt64(Int32.max) else { throw reader.failure("a version number out of range") }
                return Int(v)
            }
            schemaVersion = Schema.Version(try part(), try part(), try part())
        case let flag: throw reader.failure("a version flag of \(flag)")
        }
        let json = try reader.take(try reader.length())
        guard reader.isAtEnd else { throw reader.failure("bytes after the header's schema") }
        guard Self.fingerprint(of: json) == fingerprint else { throw reader.failure("a schema that does not match the header's fingerprint") }
        let schema: Schema
        do { schema = try JSONDecoder().decode(Schema.self, from: Data(json)) } catch {
            throw reader.failure("a stored schema that does not decode (\(error))")
        }
        return StoreHeader(
            identifier: identifier, generation: generation, version: schemaVersion, schema: schema, fingerprint: fingerprint, formatVersion: version)
    }

    /// The current version's encoding (FORMAT.md, "The header"), whatever version was read.
    func encoded() throws -> [UInt8] { try encoded(version: Self.currentVersion) }

    /// The encoding under the version byte `version` (2 to 4 share their bytes): 3 for the
    /// string-key upgrade of an older header, whose records stay in format 1.
    func encoded(version: UInt8) throws -> [UInt8] {
        guard let schema else { throw RecordDecodingError("a header without a schema cannot be written", key: RecordKeys.meta) }
        let json = try Self.json(schema)
        var out: [UInt8] = [version]
        out.appendLengthPrefixed(Array(identifier.utf8))
        out.appendBigEndian(Self.fingerprint(of: json))
        for shift in [24, 16, 8, 0] { out.append(UInt8(truncatingIfNeeded: generation >> UInt32(shift))) }
        if let version = self.version {
            out.append(1)
            for part in [version.major, version.minor, version.patch] { out.appendVarint(UInt64(max(0, part))) }
        } else {
            out.append(0)
        }
        out.appendLengthPrefixed(json)
        return out
    }

    /// The schema's sorted-keys JSON: what the header stores and fingerprints.
    static func json(_ schema: Schema) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(schema))
    }

    static func fingerprint(of schema: Schema) throws -> UInt64 { fingerprint(of: try json(schema)) }

    static func fingerprint(of bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes {
            hash ^= UInt64(b)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
