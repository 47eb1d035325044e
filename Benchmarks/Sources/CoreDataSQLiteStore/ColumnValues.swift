import Foundation
import Snapshot
import SQLiteSupport

/// How attribute values are written to and read from their columns, as Core Data stores them:
/// integers and Booleans as INTEGER, dates as REAL seconds since 2001-01-01, floats and
/// doubles as REAL, strings and URLs as text, UUIDs as 16-byte blobs, data as blobs, decimals as
/// their text, arrays and Codable values as blobs of their JSON form (Core Data's
/// transformables). NULL is no value.
///
/// A `.externalStorage` data column holds a marker byte, then the bytes (`0x01`) or the name of
/// the file under `_EXTERNAL_DATA` (`0x02`); the format of Core Data's marker is not documented,
/// this one is the harness's choice.
enum ColumnValues {
    /// Marker of a value kept in its column.
    static let inlineMarker: UInt8 = 1
    /// Marker of a value kept in an external file, whose name follows.
    static let externalMarker: UInt8 = 2

    /// The column form of `value` (an attribute's value, already checked against its type).
    static func argument(_ value: PropertyValue) throws -> SQLArgument {
        switch value {
        case .null, .toOne(nil): return .null
        case .bool(let v): return .integer(v ? 1 : 0)
        case .int(let v): return .integer(Int64(v))
        case .int8(let v): return .integer(Int64(v))
        case .int16(let v): return .integer(Int64(v))
        case .int32(let v): return .integer(Int64(v))
        case .int64(let v): return .integer(v)
        case .uint(let v): return .integer(Int64(bitPattern: UInt64(v)))
        case .uint8(let v): return .integer(Int64(v))
        case .uint16(let v): return .integer(Int64(v))
        case .uint32(let v): return .integer(Int64(v))
        case .uint64(let v): return .integer(Int64(bitPattern: v))
        case .float(let v): return .real(Double(v))
        case .double(let v): return .real(v)
        case .date(let v): return .real(v.timeIntervalSinceReferenceDate)
        case .string(let v): return .text(v)
        case .url(let v): return .text(v.absoluteString)
        case .uuid(let v): return .blob(withUnsafeBytes(of: v.uuid) { Data($0) })
        case .data(let v): return .blob(v)
        case .decimal(let v): return .text(v.description)
        case .array, .codable:
            do {
                return .blob(try JSONEncoder().encode(value))
            } catch {
                throw DataStoreError(.typeMismatch, "A \(value.caseName) value could not be encoded for its column.", underlying: error)
            }
        case .toOne, .toMany:
            throw DataStoreError(.typeMismatch, "A relationship's value cannot be stored in an attribute's column.")
        }
    }

    /// The value of column `column` of the current row, as an attribute of `type`.
    ///
    /// - Throws: ``DataStoreError/Code/engine`` for a column that does not decode as its type.
    static func read(_ statement: SQLiteStatement, _ column: Int32, as type: Schema.Attribute.ValueType) throws -> PropertyValue {
        if statement.isNull(column) { return .null }
        switch type {
        case .bool: return .bool(statement.integer(column) != 0)
        case .int: return .int(Int(statement.integer(column)))
        case .int8: return .int8(Int8(truncatingIfNeeded: statement.integer(column)))
        case .int16: return .int16(Int16(truncatingIfNeeded: statement.integer(column)))
        case .int32: return .int32(Int32(truncatingIfNeeded: statement.integer(column)))
        case .int64: return .int64(statement.integer(column))
        case .uint: return .uint(UInt(UInt64(bitPattern: statement.integer(column))))
        case .uint8: return .uint8(UInt8(truncatingIfNeeded: statement.integer(column)))
        case .uint16: return .uint16(UInt16(truncatingIfNeeded: statement.integer(column)))
        case .uint32: return .uint32(UInt32(truncatingIfNeeded: statement.integer(column)))
        case .uint64: return .uint64(UInt64(bitPattern: statement.integer(column)))
        case .float: return .float(Float(statement.double(column)))
        case .double: return .double(statement.double(column))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: statement.double(column)))
        case .string: return .string(statement.text(column) ?? "")
        case .url:
            guard let url = URL(string: statement.text(column) ?? "") else { throw damaged("a URL column that is not a URL") }
            return .url(url)
        case .uuid:
            let bytes = statement.blob(column) ?? []
            guard bytes.count == 16 else { throw damaged("a UUID column of \(bytes.count) bytes") }
            return .uuid(UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                     bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])))
        case .data: return .data(statement.data(column) ?? Data())
        case .decimal:
            guard let decimal = Decimal(string: statement.text(column) ?? "", locale: Locale(identifier: "en_US_POSIX")) else {
                throw damaged("a decimal column that is not a number")
            }
            return .decimal(decimal)
        case .array, .codable:
            do {
                return try JSONDecoder().decode(PropertyValue.self, from: statement.data(column) ?? Data())
            } catch {
                throw DataStoreError(.engine, "A stored transformable value does not decode; the database is damaged: restore it.", underlying: error)
            }
        }
    }

    static func damaged(_ what: String) -> DataStoreError {
        DataStoreError(.engine, "The database holds \(what); it is damaged or was written by another program: restore it.")
    }
}
