import Foundation
import Snapshot

/// A reader of the record layer's bytes written from FORMAT.md ("Record value, version 2",
/// "Links"), independently of the module's decoder, for the tests that check the raw shape: it
/// gives the logical CloudKit record a record value or a link key stands for (`CD_entityName`,
/// one `CD_<name>` per field, `CD_<name>_ckAsset` naming an asset's key, a to-one as the
/// target's record name `<Entity>_<UUID>`; a link as a `CDMR` record of `CD_entityNames`,
/// `CD_recordNames` and `CD_relationships`).
enum RawRecord {
    enum Field: Hashable {
        case null
        case string(String)
        case date(Double)
        case data([UInt8])
        /// Any other value: its serial type.
        case other(UInt64)
    }

    struct Malformed: Error {}

    static func varint(_ bytes: [UInt8], _ i: inout Int) throws -> Int {
        var result = 0, shift = 0
        while true {
            guard i < bytes.count, shift < 63 else { throw Malformed() }
            let b = bytes[i]; i += 1
            result |= Int(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// The body size of a serial type.
    static func size(_ t: Int) throws -> Int {
        switch t {
        case 0, 1, 2, 7, 11: 0
        case 3: 1
        case 4: 2
        case 5, 8: 4
        case 6, 9: 8
        case 10: 16
        case 12...15: throw Malformed()
        default: (t - 16) / 2
        }
    }

    /// The logical record of the record value `bytes` stored under `key` (`R` root 00 pk):
    /// `CD_entityName` first, then every field by name, as CloudKit lists a record's fields.
    static func fields(_ bytes: [UInt8], key: [UInt8], schema: Schema) throws -> [(String, Field)] {
        guard bytes.first == 2, key.first == 0x52, key.count > 18 else { throw Malformed() }
        let root = Array(key[1..<(key.count - 17)])
        let pk = Array(key.suffix(16))
        var i = 1
        let headerSize = try varint(bytes, &i)
        let headerEnd = i + headerSize
        let nameCount = try varint(bytes, &i)
        guard i + nameCount <= headerEnd, headerEnd <= bytes.count else { throw Malformed() }
        let entity = String(decoding: bytes[i..<i + nameCount], as: UTF8.self)
        i += nameCount
        var types: [Int] = []
        while i < headerEnd { types.append(try varint(bytes, &i)) }
        let properties = schema.allProperties(of: entity).filter { property in
            switch property {
            case .attribute(let a): !a.options.contains(.ephemeral)
            case .relationship(let r): !r.isToMany
            }
        }
        guard types.count <= properties.count else { throw Malformed() }
        var result: [(String, Field)] = []
        var offset = headerEnd
        for (t, property) in zip(types, properties) {
            let n = try size(t)
            guard offset + n <= bytes.count else { throw Malformed() }
            let body = Array(bytes[offset..<offset + n])
            offset += n
            let name = "CD_\(property.name)"
            switch (t, property) {
            case (0, _): result.append((name, .null))
            case (11, _): result.append(("\(name)_ckAsset", .data([0x41] + root + [0] + pk + Array(property.name.utf8))))
            case (9, .attribute(let a)) where a.valueType == .date:
                result.append((name, .date(Double(bitPattern: body.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }))))
            case (16..., .relationship) where t % 2 == 1 && body.count > 16:
                let target = UUID(uuid: uuidTuple(Array(body[0..<16])))
                result.append((name, .string("\(String(decoding: body[16...], as: UTF8.self))_\(target.uuidString)")))
            case (16..., _) where t % 2 == 0: result.append((name, .string(String(decoding: body, as: UTF8.self))))
            case (17..., _): result.append((name, .data(body)))
            default: result.append((name, .other(UInt64(t))))
            }
        }
        guard offset == bytes.count else { throw Malformed() }
        result.sort { $0.0 < $1.0 }
        return [("CD_entityName", .string(entity))] + result
    }

    /// The `CDMR` record a link key `M "EntityA:EntityB" 00 "relA:relB" 00 pkA entityB 00 pkB`
    /// stands for, given side A's concrete entity (which the key does not name).
    static func joinRecord(key: [UInt8], entityA: String) throws -> [(String, Field)] {
        guard key.first == 0x4D else { throw Malformed() }
        var parts: [[UInt8]] = []
        var i = 1
        for _ in 0..<2 {
            guard let zero = key[i...].firstIndex(of: 0) else { throw Malformed() }
            parts.append(Array(key[i..<zero]))
            i = zero + 1
        }
        guard key.count >= i + 16 + 2 + 16, let zero = key[(i + 16)...].firstIndex(of: 0), key.count - zero - 1 == 16 else { throw Malformed() }
        let pkA = UUID(uuid: uuidTuple(Array(key[i..<i + 16])))
        let entityB = String(decoding: key[(i + 16)..<zero], as: UTF8.self)
        let pkB = UUID(uuid: uuidTuple(Array(key[(zero + 1)...])))
        return [
            ("CD_entityNames", .string(String(decoding: parts[0], as: UTF8.self))),
            ("CD_recordNames", .string("\(entityA)_\(pkA.uuidString):\(entityB)_\(pkB.uuidString)")),
            ("CD_relationships", .string(String(decoding: parts[1], as: UTF8.self))),
        ]
    }

    static func uuidTuple(_ b: [UInt8]) -> uuid_t {
        (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
    }

    static func uuidBytes(_ uuid: UUID) -> [UInt8] { withUnsafeBytes(of: uuid.uuid) { Array($0) } }

    static func name(_ s: String) -> [UInt8] { Array(s.utf8) + [0] }
}
