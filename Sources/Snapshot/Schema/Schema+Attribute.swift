extension Schema {
    /// A stored value of an entity: its name, type, whether it may be null, its default and
    /// options.
    public struct Attribute: Hashable, Codable, Sendable {
        /// The type of an attribute's values: which ``PropertyValue`` cases it accepts.
        public indirect enum ValueType: Hashable, Codable, Sendable, CustomStringConvertible {
            /// A scalar type, accepting the ``PropertyValue`` case of the same name.
            case bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64
            /// A scalar type, accepting the ``PropertyValue`` case of the same name.
            case float, double, string, date, uuid, url, data, decimal
            /// An ordered list of values of one type.
            case array(ValueType)
            /// Any Codable value, stored encoded under `typeName` (``PropertyValue/codable(typeName:encoded:)``).
            case codable(typeName: String)

            /// Whether `value` is of this type. ``PropertyValue/null`` is of no type: whether an
            /// attribute may be null is ``Attribute/isOptional``.
            public func accepts(_ value: PropertyValue) -> Bool {
                switch (self, value) {
                case (.bool, .bool), (.int, .int), (.int8, .int8), (.int16, .int16), (.int32, .int32), (.int64, .int64),
                    (.uint, .uint), (.uint8, .uint8), (.uint16, .uint16), (.uint32, .uint32), (.uint64, .uint64),
                    (.float, .float), (.double, .double), (.string, .string), (.date, .date), (.uuid, .uuid),
                    (.url, .url), (.data, .data), (.decimal, .decimal):
                    return true
                case let (.array(element), .array(values)):
                    return values.allSatisfy(element.accepts)
                case let (.codable(expected), .codable(typeName, _)):
                    return expected == typeName
                default:
                    return false
                }
            }

            /// The type's name as ``PropertyValue/caseName`` spells the matching case
            /// (`array<string>`, `codable<MyType>` for the two compound types).
            public var description: String {
                switch self {
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
                case .array(let element): "array<\(element)>"
                case .codable(let typeName): "codable<\(typeName)>"
                }
            }
        }

        /// How an attribute is stored and kept, as SwiftData's `Schema.Attribute.Option`.
        public struct Options: OptionSet, Hashable, Codable, Sendable {
            public let rawValue: UInt32
            /// An option set from its raw bits.
            public init(rawValue: UInt32) { self.rawValue = rawValue }

            /// No two objects of the entity (and its sub-entities) hold equal values; an insert
            /// that collides with an existing object updates that object instead (an upsert).
            public static let unique = Options(rawValue: 1 << 0)
            /// The value is kept apart from the object's record (a blob, a CloudKit asset).
            /// Only for `data`, `string` and `codable` attributes.
            public static let externalStorage = Options(rawValue: 1 << 1)
            /// When the object is deleted, the value is kept in its history tombstone.
            public static let preserveValueOnDeletion = Options(rawValue: 1 << 2)
            /// The value is never written to disk: a store keeps it only while open, or not at all.
            public static let ephemeral = Options(rawValue: 1 << 3)
        }

        /// The attribute's name, unique among the entity's properties, inherited ones included.
        public var name: String
        /// The type of its values.
        public var valueType: ValueType
        /// Whether the attribute may be null (absent or ``PropertyValue/null``).
        public var isOptional: Bool
        /// The value an insert gets when its snapshot holds none; of ``valueType``.
        public var defaultValue: PropertyValue?
        /// How it is stored and kept.
        public var options: Options
        /// The attribute's name in the previous version of the schema, when it was renamed
        /// (SwiftData's `originalName`), for migrations.
        public var originalName: String?

        /// An attribute; non-optional unless `isOptional`.
        public init(
            _ name: String, _ valueType: ValueType, isOptional: Bool = false, defaultValue: PropertyValue? = nil,
            options: Options = [], originalName: String? = nil
        ) {
            self.name = name
            self.valueType = valueType
            self.isOptional = isOptional
            self.defaultValue = defaultValue
            self.options = options
            self.originalName = originalName
        }
    }
}
