import Foundation

/// The serial types of records format 2: each field's header entry, which gives its body's
/// size and how to read it.
package enum RecordSerialType {
    package static let null: UInt64 = 0
    package static let `false`: UInt64 = 1
    package static let `true`: UInt64 = 2
    /// Integers of 1, 2, 4 and 8 bytes are 3, 4, 5 and 6.
    package static let int8Bytes: UInt64 = 3
    package static let int64Bytes: UInt64 = 6
    package static let zero: UInt64 = 7
    package static let float: UInt64 = 8
    package static let double: UInt64 = 9
    package static let uuid: UInt64 = 10
    package static let asset: UInt64 = 11
    /// The first serial type of text (even) and bytes (odd).
    package static let firstVariable: UInt64 = 16

    package static func text(count: Int) -> UInt64 { 16 + 2 * UInt64(count) }
    package static func bytes(count: Int) -> UInt64 { 17 + 2 * UInt64(count) }

    /// The body size of `serialType`, or `nil` for a reserved one (12–15).
    package static func bodySize(_ serialType: UInt64) -> UInt64? {
        switch serialType {
        case 0, 1, 2, 7, 11: 0
        case 3: 1
        case 4: 2
        case 5: 4
        case 6: 8
        case 8: 4
        case 9: 8
        case 10: 16
        case 12...15: nil
        default: (serialType - 16) / 2
        }
    }

    package static func isText(_ serialType: UInt64) -> Bool { serialType >= 16 && serialType % 2 == 0 }
    package static func isBytes(_ serialType: UInt64) -> Bool { serialType >= 17 && serialType % 2 == 1 }
}
