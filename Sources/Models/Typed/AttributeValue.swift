import Foundation
import Snapshot

/// A Swift type a model's attribute may have: it names its schema type and converts to and from
/// a ``PropertyValue`` of that type.
///
/// Every scalar type ``PropertyValueConvertible`` covers conforms (`Bool`, the integer widths,
/// `Float`, `Double`, `String`, `Date`, `UUID`, `URL`, `Data`, `Decimal`), as do `Optional`
/// (an optional attribute; `nil` is ``PropertyValue/null``) and `Array` (an
/// ``Schema/Attribute/ValueType/array(_:)`` attribute) of conforming types. A `RawRepresentable`
/// type whose raw value conforms gets the conversion for free by declaring the conformance
/// (it is stored as its raw value), and so does a type declaring ``CodableAttributeValue`` (it
/// is stored encoded, ``PropertyValue/codable(typeName:encoded:)``).
public protocol AttributeValue: PropertyValueConvertible, SendableMetatype {
    /// The schema type of the attribute's values.
    static var attributeType: Schema.Attribute.ValueType { get }
    /// Whether the attribute may be null (`true` only for `Optional`).
    static var isOptionalAttribute: Bool { get }
    /// The Swift value `value` stands for.
    ///
    /// - Throws: ``DataStoreError/Code/typeMismatch`` when `value` is not of ``attributeType``
    ///   (or is null for a non-optional type).
    init(propertyValue value: PropertyValue) throws
}

extension AttributeValue {
    /// `false`: only `Optional` makes an optional attribute.
    public static var isOptionalAttribute: Bool { false }

    /// The error a conversion throws for a value of the wrong case.
    static func mismatch(_ value: PropertyValue) -> DataStoreError {
        DataStoreError(
            .typeMismatch,
            "A \(value.caseName) value cannot become a \(Self.self) (an attribute of type \(attributeType)); the stored value does not match the model's declaration — declare the attribute with the type the store holds, or migrate the data."
        )
    }
}

/// An attribute type stored as its JSON encoding (``PropertyValue/encoding(_:)``): declare the
/// conformance on a `Codable` type and it needs nothing else.
public protocol CodableAttributeValue: AttributeValue, Codable {}

extension CodableAttributeValue {
    /// ``Schema/Attribute/ValueType/codable(typeName:)`` under `String(reflecting: Self.self)`.
    public static var attributeType: Schema.Attribute.ValueType { .codable(typeName: String(reflecting: Self.self)) }
    /// The value encoded as JSON, or ``PropertyValue/null`` when it does not encode (a save
    /// then refuses the null for a non-optional attribute).
    public var propertyValue: PropertyValue { (try? PropertyValue.encoding(self)) ?? .null }
    /// Decodes the value (``PropertyValue/decoded(as:)``).
    public init(propertyValue value: PropertyValue) throws { self = try value.decoded(as: Self.self) }
}

extension AttributeValue where Self: RawRepresentable, RawValue: AttributeValue {
    /// The raw value's type.
    public static var attributeType: Schema.Attribute.ValueType { RawValue.attributeType }
    /// The raw value's value.
    public var propertyValue: PropertyValue { rawValue.propertyValue }
    /// The case whose raw value `value` holds.
    ///
    /// - Throws: ``DataStoreError/Code/typeMismatch`` when no case has that raw value.
    public init(propertyValue value: PropertyValue) throws {
        guard let made = Self(rawValue: try RawValue(propertyValue: value)) else {
            throw DataStoreError(.typeMismatch, "\(value) is the raw value of no \(Self.self); add the case or migrate the data.")
        }
        self = made
    }
}
