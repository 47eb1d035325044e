import Foundation

/// CloudKit record names, `<Entity>_<UUID>`: how a record refers to another (a to-one field,
/// a `CDMR` join record). The entity is the object's concrete entity; the UUID its primary key
/// in upper case.
enum RecordName {
    static func of(_ id: PersistentIdentifier) -> String {
        "\(id.entityName)_\(id.primaryKey)"
    }

    static func of(entity: String, primaryKey: UUID) -> String {
        "\(entity)_\(primaryKey.uuidString)"
    }

    /// The entity and primary key a record name spells, or `nil` when it is not one.
    static func parse(_ name: String) -> (entity: String, primaryKey: UUID)? {
        parse(utf8: Array(name.utf8)[...])
    }

    /// As ``parse(_:)``, from the name's UTF-8 bytes (a join key's last component): the last 36
    /// bytes are the UUID in hex with dashes (either case), the byte before them `_`, and the
    /// bytes before that a non-empty entity name.
    static func parse(utf8 bytes: ArraySlice<UInt8>) -> (entity: String, primaryKey: UUID)? {
        guard bytes.count > 37 else { return nil }
        let uuidStart = bytes.endIndex - 36
        guard bytes[uuidStart - 1] == UInt8(ascii: "_"), let uuid = UUID(hexBytes: bytes[uuidStart...]),
            let entity = String(validating: bytes[..<(uuidStart - 1)], as: UTF8.self)
        else { return nil }
        return (entity, uuid)
    }
}

extension UUID {
    /// The UUID spelled by 36 bytes of `uuidString`'s shape: hex digits in groups of 8, 4, 4, 4
    /// and 12 joined by `-`, in either case; `nil` for anything else. (Foundation's
    /// `UUID(uuidString:)` accepts the same, more slowly.)
    init?(hexBytes: ArraySlice<UInt8>) {
        guard hexBytes.count == 36 else { return nil }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &raw) { out -> Bool in
            var i = hexBytes.startIndex
            for o in 0..<16 {
                if o == 4 || o == 6 || o == 8 || o == 10 {
                    guard hexBytes[i] == UInt8(ascii: "-") else { return false }
                    i += 1
                }
                guard let high = Self.hexValue(hexBytes[i]), let low = Self.hexValue(hexBytes[i + 1]) else { return false }
                out[o] = high << 4 | low
                i += 2
            }
            return true
        }
        guard parsed else { return nil }
        self.init(uuid: raw)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
