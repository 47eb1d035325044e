import Foundation

/// One value of a snapshot's property: an attribute's value or a relationship's targets.
///
/// A value says what it is: every integer width and floating-point type keeps its own case, so
/// a value read back is exactly the value stored. Values are `Sendable`, `Codable`
/// (``PropertyValue+Codable.swift``: a tagged form that round-trips every case exactly, NaN and
/// negative zero included), `Hashable` and `Comparable` in one documented total order
/// (``PropertyValue+Ordering.swift``).
///
/// Equality is structural: two values are equal when they have the same case and the same
/// contents, floating-point values compared by their bits (so `NaN == NaN` and `-0.0 != 0.0`),
/// strings by Unicode canonical equivalence (Swift's `String` equality), URLs by
/// `absoluteString`, decimals by `Decimal`'s equality. `.int(1)` and `.double(1)` are not equal
/// values; predicates compare numbers across cases (``PredicateEvaluator``).
public enum PropertyValue: Sendable {
    /// An explicit null: the property has no value.
    case null
    /// A Boolean.
    case bool(Bool)
    /// A platform-width signed integer.
    case int(Int)
    /// An 8-bit signed integer.
    case int8(Int8)
    /// A 16-bit signed integer.
    case int16(Int16)
    /// A 32-bit signed integer.
    case int32(Int32)
    /// A 64-bit signed integer.
    case int64(Int64)
    /// A platform-width unsigned integer.
    case uint(UInt)
    /// An 8-bit unsigned integer.
    case uint8(UInt8)
    /// A 16-bit unsigned integer.
    case uint16(UInt16)
    /// A 32-bit unsigned integer.
    case uint32(UInt32)
    /// A 64-bit unsigned integer.
    case uint64(UInt64)
    /// A 32-bit binary floating-point number.
    case float(Float)
    /// A 64-bit binary floating-point number.
    case double(Double)
    /// A string.
    case string(String)
    /// A point in time.
    case date(Date)
    /// A UUID.
    case uuid(UUID)
    /// A URL (kept, compared and encoded by its `absoluteString`).
    case url(URL)
    /// Bytes.
    case data(Data)
    /// A decimal number.
    case decimal(Decimal)
    /// An ordered list of values (SwiftData's array attributes).
    case array([PropertyValue])
    /// Any `Codable` value, stored encoded: the name of its type and its encoded bytes (JSON
    /// when made with ``encoding(_:)``). The bytes are opaque to stores: they compare and sort
    /// by type name, then bytes.
    case codable(typeName: String, encoded: Data)
    /// A to-one relationship: the target's identifier, or `nil` when there is none.
    case toOne(PersistentIdentifier?)
    /// A to-many relationship: the targets' identifiers, in the relationship's order.
    case toMany([PersistentIdentifier])
}

extension PropertyValue {
    /// Whether this value is a null: ``null`` or a to-one relationship without a target.
    /// Predicates treat both alike.
    public var isNull: Bool {
        switch self {
        case .null, .toOne(nil): true
        default: false
        }
    }

    /// The name of this value's case (`"int32"`, `"string"`, …), as the Codable form writes it
    /// and error messages show it.
    public var caseName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .int8: "int8"
        case .int16: "int16"
        case .int32: "int32"
        case .int64: "int64"
        case .uint: "uint"
        case .uint8: "uint8"
        case .uint16: "uint16"
        case .uint32: "uint32"
        case .uint64: "uint64"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .date: "date"
        case .uuid: "uuid"
        case .url: "url"
        case .data: "data"
        case .decimal: "decimal"
        case .array: "array"
        case .codable: "codable"
        case .toOne: "toOne"
        case .toMany: "toMany"
        }
    }

    /// The identifiers this value refers to: the target of a to-one, the targets of a to-many,
    /// and none for attributes.
    public var referencedIdentifiers: [PersistentIdentifier] {
        switch self {
        case .toOne(let id?): [id]
        case .toMany(let ids): ids
        default: []
        }
    }

    /// A ``codable(typeName:encoded:)`` value holding `value` encoded as JSON (sorted keys, so
    /// equal values encode to equal bytes), under the name `String(reflecting: T.self)`.
    ///
    /// - Throws: ``DataStoreError/Code/typeMismatch`` wrapping the encoder's error when `value`
    ///   cannot be encoded.
    public static func encoding<T: Encodable>(_ value: T) throws -> PropertyValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return .codable(typeName: String(reflecting: T.self), encoded: try encoder.encode(value))
        } catch {
            throw DataStoreError(.typeMismatch, "\(T.self) could not be encoded as JSON; make its Encodable conformance total.", underlying: error)
        }
    }

    /// The value a ``codable(typeName:encoded:)`` value holds, decoded from JSON as `T`.
    ///
    /// - Throws: ``DataStoreError/Code/typeMismatch`` when this is another case, its type name
    ///   is not `T`'s, or its bytes do not decode as `T`.
    public func decoded<T: Decodable>(as type: T.Type) throws -> T {
        guard case let .codable(typeName, encoded) = self, typeName == String(reflecting: T.self) else {
            throw DataStoreError(
                .typeMismatch,
                "The value is \(self.caseName == "codable" ? "another Codable type" : "a \(caseName)"), not an encoded \(T.self); decode it as the type it was made from."
            )
        }
        do {
            return try JSONDecoder().decode(T.self, from: encoded)
        } catch {
            throw DataStoreError(
                .typeMismatch, "The encoded \(T.self) does not decode; it was written by another version of the type.", underlying: error)
        }
    }

    /// This value with every referenced identifier found in `remapped` replaced by its image:
    /// what ``DefaultSnapshot/copy(persistentIdentifier:remappedIdentifiers:)`` applies to each
    /// property. Arrays are rewritten element by element; attributes are returned unchanged.
    public func remapping(_ remapped: [PersistentIdentifier: PersistentIdentifier]) -> PropertyValue {
        switch self {
        case .toOne(let id?): .toOne(remapped[id] ?? id)
        case .toMany(let ids): .toMany(ids.map { remapped[$0] ?? $0 })
        case .array(let values): .array(values.map { $0.remapping(remapped) })
        default: self
        }
    }
}

extension PropertyValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral
{
    /// A ``string(_:)`` value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An ``int(_:)`` value.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A ``double(_:)`` value.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A ``bool(_:)`` value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
