import Foundation
import Snapshot

// The Swift types that are attribute values: scalars, optionals and arrays of them.

extension Optional: AttributeValue where Wrapped: AttributeValue {
    /// The wrapped type's.
    public static var attributeType: Schema.Attribute.ValueType { Wrapped.attributeType }
    /// `true`.
    public static var isOptionalAttribute: Bool { true }
    /// `nil` for a null, else the wrapped value.
    public init(propertyValue value: PropertyValue) throws {
        self = value.isNull ? nil : try Wrapped(propertyValue: value)
    }
}

extension Array: AttributeValue where Element: AttributeValue {
    /// An array of the element type.
    public static var attributeType: Schema.Attribute.ValueType { .array(Element.attributeType) }
    /// The elements of an ``PropertyValue/array(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .array(let values) = value else { throw Self.mismatch(value) }
        self = try values.map(Element.init(propertyValue:))
    }
}

extension Bool: AttributeValue {
    /// `bool`.
    public static var attributeType: Schema.Attribute.ValueType { .bool }
    /// The value of a ``PropertyValue/bool(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .bool(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension Int: AttributeValue {
    /// `int`.
    public static var attributeType: Schema.Attribute.ValueType { .int }
    /// The value of a ``PropertyValue/int(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .int(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension Int8: AttributeValue {
    /// `int8`.
    public static var attributeType: Schema.Attribute.ValueType { .int8 }
    /// The value of a ``PropertyValue/int8(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .int8(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension Int16: AttributeValue {
    /// `int16`.
    public static var attributeType: Schema.Attribute.ValueType { .int16 }
    /// The value of a ``PropertyValue/int16(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .int16(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension Int32: AttributeValue {
    /// `int32`.
    public static var attributeType: Schema.Attribute.ValueType { .int32 }
    /// The value of a ``PropertyValue/int32(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .int32(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension Int64: AttributeValue {
    /// `int64`.
    public static var attributeType: Schema.Attribute.ValueType { .int64 }
    /// The value of a ``PropertyValue/int64(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .int64(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension UInt: AttributeValue {
    /// `uint`.
    public static var attributeType: Schema.Attribute.ValueType { .uint }
    /// The value of a ``PropertyValue/uint(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .uint(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension UInt8: AttributeValue {
    /// `uint8`.
    public static var attributeType: Schema.Attribute.ValueType { .uint8 }
    /// The value of a ``PropertyValue/uint8(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .uint8(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension UInt16: AttributeValue {
    /// `uint16`.
    public static var attributeType: Schema.Attribute.ValueType { .uint16 }
    /// The value of a ``PropertyValue/uint16(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .uint16(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension UInt32: AttributeValue {
    /// `uint32`.
    public static var attributeType: Schema.Attribute.ValueType { .uint32 }
    /// The value of a ``PropertyValue/uint32(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .uint32(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension UInt64: AttributeValue {
    /// `uint64`.
    public static var attributeType: Schema.Attribute.ValueType { .uint64 }
    /// The value of a ``PropertyValue/uint64(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .uint64(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension Float: AttributeValue {
    /// `float`.
    public static var attributeType: Schema.Attribute.ValueType { .float }
    /// The value of a ``PropertyValue/float(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .float(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension Double: AttributeValue {
    /// `double`.
    public static var attributeType: Schema.Attribute.ValueType { .double }
    /// The value of a ``PropertyValue/double(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .double(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension String: AttributeValue {
    /// `string`.
    public static var attributeType: Schema.Attribute.ValueType { .string }
    /// The value of a ``PropertyValue/string(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .string(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension Date: AttributeValue {
    /// `date`.
    public static var attributeType: Schema.Attribute.ValueType { .date }
    /// The value of a ``PropertyValue/date(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .date(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension UUID: AttributeValue {
    /// `uuid`.
    public static var attributeType: Schema.Attribute.ValueType { .uuid }
    /// The value of a ``PropertyValue/uuid(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .uuid(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension URL: AttributeValue {
    /// `url`.
    public static var attributeType: Schema.Attribute.ValueType { .url }
    /// The value of a ``PropertyValue/url(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .url(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension Data: AttributeValue {
    /// `data`.
    public static var attributeType: Schema.Attribute.ValueType { .data }
    /// The value of a ``PropertyValue/data(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .data(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
extension Decimal: AttributeValue {
    /// `decimal`.
    public static var attributeType: Schema.Attribute.ValueType { .decimal }
    /// The value of a ``PropertyValue/decimal(_:)``.
    public init(propertyValue value: PropertyValue) throws {
        guard case .decimal(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}
