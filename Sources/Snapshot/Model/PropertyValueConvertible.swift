import Foundation

/// A Swift value that stands for a ``PropertyValue``: what the predicate builder's operators
/// accept on their right-hand side (`.attribute("date") > someDate`).
///
/// Conformances map each type to the case of the same name: `Int32` to ``PropertyValue/int32(_:)``,
/// `Date` to ``PropertyValue/date(_:)``, a ``PersistentIdentifier`` to a to-one reference,
/// an `Optional` holding `nil` to ``PropertyValue/null``, an array to ``PropertyValue/array(_:)``.
public protocol PropertyValueConvertible {
    /// The value this stands for.
    var propertyValue: PropertyValue { get }
}

extension PropertyValue: PropertyValueConvertible {
    /// The value itself.
    public var propertyValue: PropertyValue { self }
}

extension Bool: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .bool(self) }
}
extension Int: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .int(self) }
}
extension Int8: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .int8(self) }
}
extension Int16: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .int16(self) }
}
extension Int32: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .int32(self) }
}
extension Int64: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .int64(self) }
}
extension UInt: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .uint(self) }
}
extension UInt8: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .uint8(self) }
}
extension UInt16: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .uint16(self) }
}
extension UInt32: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .uint32(self) }
}
extension UInt64: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .uint64(self) }
}
extension Float: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .float(self) }
}
extension Double: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .double(self) }
}
extension String: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .string(self) }
}
extension Date: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .date(self) }
}
extension UUID: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .uuid(self) }
}
extension URL: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .url(self) }
}
extension Data: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .data(self) }
}
extension Decimal: PropertyValueConvertible {
    /// The case of the same name holding this value.
    public var propertyValue: PropertyValue { .decimal(self) }
}
extension PersistentIdentifier: PropertyValueConvertible {
    /// A to-one reference to this identifier.
    public var propertyValue: PropertyValue { .toOne(self) }
}

extension Optional: PropertyValueConvertible where Wrapped: PropertyValueConvertible {
    /// The wrapped value's, or ``PropertyValue/null``.
    public var propertyValue: PropertyValue { self?.propertyValue ?? .null }
}

extension Array: PropertyValueConvertible where Element: PropertyValueConvertible {
    /// An ``PropertyValue/array(_:)`` of the elements' values.
    public var propertyValue: PropertyValue { .array(map(\.propertyValue)) }
}
