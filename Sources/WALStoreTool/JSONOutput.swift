import Snapshot

/// A JSON value the tool prints: objects keep their keys in the order given, so that each
/// command's output reads as docs/tool.md lists its fields.
indirect enum JSONValue {
    case null
    case bool(Bool)
    case int(Int)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    static func optional(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    static func optional(_ value: UInt64?) -> JSONValue { value.map(JSONValue.uint) ?? .null }

    func write(to w: inout JSONWriter) {
        switch self {
        case .null: w.raw("null")
        case .bool(let b): w.bool(b)
        case .int(let i): w.int(i)
        case .uint(let u): w.uint(u)
        case .double(let d): w.double(d)
        case .string(let s): w.string(s)
        case .array(let items): w.array(items) { $1.write(to: &$0) }
        case .object(let members):
            w.raw("{")
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { w.raw(",") }
                w.key(key)
                value.write(to: &w)
            }
            w.raw("}")
        }
    }

    /// One line of JSON.
    var text: String {
        var w = JSONWriter()
        write(to: &w)
        return String(decoding: w.bytes, as: UTF8.self)
    }
}

/// Engine keys as people read them: printable ASCII as is, a backslash as `\\`, any other byte
/// as `\xHH`; or all hex.
enum KeyText {
    static func escaped(_ bytes: [UInt8]) -> String {
        var text = ""
        text.reserveCapacity(bytes.count)
        for byte in bytes {
            switch byte {
            case 0x5C: text += "\\\\"
            case 0x20...0x7E: text.unicodeScalars.append(Unicode.Scalar(byte))
            default: text += "\\x" + hex([byte])
            }
        }
        return text
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".unicodeScalars)
        var text = String.UnicodeScalarView()
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(text)
    }

    /// The bytes `text` names: hex digits when `isHex`, else the escaped form (`\xHH`, `\\`).
    static func parse(_ text: String, isHex: Bool) -> [UInt8]? {
        let units = Array(text.utf8)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x41...0x46: c - 0x41 + 10
            case 0x61...0x66: c - 0x61 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        if isHex {
            guard units.count % 2 == 0 else { return nil }
            var i = 0
            while i < units.count {
                guard let h = nibble(units[i]), let l = nibble(units[i + 1]) else { return nil }
                out.append(h << 4 | l)
                i += 2
            }
            return out
        }
        var i = 0
        while i < units.count {
            if units[i] == 0x5C {
                guard i + 1 < units.count else { return nil }
                if units[i + 1] == 0x5C {
                    out.append(0x5C)
                    i += 2
                } else if units[i + 1] == 0x78, i + 3 < units.count, let h = nibble(units[i + 2]), let l = nibble(units[i + 3]) {
                    out.append(h << 4 | l)
                    i += 4
                } else {
                    return nil
                }
            } else {
                out.append(units[i])
                i += 1
            }
        }
        return out
    }
}
